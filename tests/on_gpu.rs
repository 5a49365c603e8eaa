//! Tests that need an NVIDIA GPU with CUDA: ignored, skipped by name (`on_gpu_`) in the test
//! command of a machine without one, and run on the GPU machine from the built test binary
//! (`on_gpu-* --include-ignored on_gpu_`).

mod common;

use clvscu::backend::cuda::{self, CudaBackend};

fn backend() -> CudaBackend {
    common::need("CUDA", cuda::availability().map(|_| ()));
    CudaBackend::open(None).expect("open CUDA device 0")
}

/// CUDA's device-side poison: the range reads back as NaN, the floats past it keep their
/// values, and a range longer than the buffer is refused.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn on_gpu_poison_sets_the_range_to_nan_and_nothing_past_it() {
    let mut b = backend();
    common::poison_sets_the_range_and_nothing_past_it(&mut b);
}

/// A CUDA transfer longer than its buffers is refused before its start event is recorded.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn on_gpu_a_refused_transfer_records_no_event() {
    let mut b = backend();
    common::a_refused_transfer_counts_no_call(&mut b);
}
