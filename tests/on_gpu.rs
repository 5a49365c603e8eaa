//! Tests that need an NVIDIA GPU with CUDA: ignored, skipped by name (`on_gpu_`) in the test
//! command of a machine without one, and run on the GPU machine from the built test binary
//! (`on_gpu-* --include-ignored on_gpu_`).

mod common;

use clvscu::backend::cuda::{self, CudaBackend};
use clvscu::backend::Backend;

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
    let data: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let dev = b.alloc(data.len()).unwrap();
    b.upload(dev, &data).unwrap();
    b.poison(dev, 600).unwrap();
    let mut back = vec![0.0f32; data.len()];
    b.download(dev, &mut back).unwrap();
    assert!(back[..600].iter().all(|v| v.is_nan()));
    assert_eq!(&back[600..], &data[600..]);
    assert!(
        b.poison(dev, 1001).is_err(),
        "a fill past the end is refused"
    );
    b.free(dev).unwrap();
}
