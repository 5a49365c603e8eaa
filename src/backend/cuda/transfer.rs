//! Host memory and transfers of the CUDA backend: pageable (a plain `Vec`) or pinned
//! (`cuMemAllocHost`, through cudarc's page-locked allocation with no flags, so it is not
//! write-combined and the host reads it at full speed when verifying).

use std::sync::Arc;

use cudarc::driver::{result, CudaContext, CudaSlice, CudaStream, DevicePtr, PinnedHostSlice};

use super::drv;
use crate::backend::{BackendError, Direction, HostMemory, Result, Transfer};

pub(super) enum HostBuf {
    Pageable(Vec<f32>),
    Pinned(PinnedHostSlice<f32>),
}

impl HostBuf {
    pub(super) fn new(ctx: &Arc<CudaContext>, len: usize, memory: HostMemory) -> Result<Self> {
        match memory {
            HostMemory::Pageable => Ok(HostBuf::Pageable(vec![0.0; len])),
            HostMemory::Pinned => {
                // SAFETY: the memory is zeroed below before anything reads it.
                let mut p = unsafe { ctx.alloc_pinned_with_flags::<f32>(len, 0) }
                    .map_err(drv("cuMemHostAlloc (flags 0, as cuMemAllocHost)"))?;
                p.as_mut_slice()
                    .map_err(drv("pinned host memory"))?
                    .fill(0.0);
                Ok(HostBuf::Pinned(p))
            }
        }
    }

    pub(super) fn data(&mut self) -> Result<&mut [f32]> {
        match self {
            HostBuf::Pageable(v) => Ok(v),
            HostBuf::Pinned(p) => p.as_mut_slice().map_err(drv("pinned host memory")),
        }
    }
}

/// Enqueues an asynchronous copy. The raw driver call keeps cudarc's per-copy bookkeeping
/// for pinned slices out of the timed window; OpenCL's enqueue has none either.
pub(super) fn enqueue(
    stream: &Arc<CudaStream>,
    host: &mut HostBuf,
    device: &CudaSlice<f32>,
    Transfer { direction, len, .. }: Transfer,
) -> Result<()> {
    let data = checked(host, device, len)?;
    let (ptr, _sync) = device.device_ptr(stream);
    let s = stream.cu_stream();
    // SAFETY: both ranges hold `len` floats; the caller waits for the copy before the host
    // buffer is touched again or freed.
    unsafe {
        match direction {
            Direction::H2d => result::memcpy_htod_async(ptr, &data[..len], s),
            Direction::D2h => result::memcpy_dtoh_async(&mut data[..len], ptr, s),
        }
    }
    .map_err(drv("cuMemcpyHtoDAsync/DtoHAsync"))
}

pub(super) fn copy_loop(
    stream: &Arc<CudaStream>,
    host: &mut HostBuf,
    device: &CudaSlice<f32>,
    Transfer { direction, len, .. }: Transfer,
    reps: u32,
) -> Result<Vec<f64>> {
    let data = checked(host, device, len)?;
    let (ptr, _sync) = device.device_ptr(stream);
    let mut times = Vec::with_capacity(reps as usize);
    for _ in 0..reps {
        let t0 = std::time::Instant::now();
        // SAFETY: both ranges hold `len` floats, and the copy is complete when it returns.
        unsafe {
            match direction {
                Direction::H2d => result::memcpy_htod_sync(ptr, &data[..len]),
                Direction::D2h => result::memcpy_dtoh_sync(&mut data[..len], ptr),
            }
        }
        .map_err(drv("cuMemcpyHtoD/DtoH (plain copy)"))?;
        times.push(t0.elapsed().as_secs_f64());
    }
    Ok(times)
}

/// The host buffer's data, refused unless both buffers hold `len` floats.
pub(super) fn checked<'h>(
    host: &'h mut HostBuf,
    device: &CudaSlice<f32>,
    len: usize,
) -> Result<&'h mut [f32]> {
    let data = host.data()?;
    if len > data.len() || len > device.len() {
        return Err(BackendError::InvalidHandle(format!(
            "transfer of {len} floats between buffers of {} (host) and {} (device)",
            data.len(),
            device.len()
        )));
    }
    Ok(data)
}
