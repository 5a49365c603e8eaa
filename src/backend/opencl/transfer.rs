//! Host memory for timed transfers: pageable (a `Vec`) or pinned (a `CL_MEM_ALLOC_HOST_PTR`
//! buffer kept mapped, NVIDIA's recommended way to get page-locked memory in OpenCL).

use std::ptr;

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::memory::{
    Buffer, ClMem, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE,
};
use opencl3::types::{cl_float, cl_mem, CL_BLOCKING};

use super::drv;
use crate::backend::{BackendError, HostMemory, Result};

pub(super) enum HostBuf {
    Pageable(Vec<f32>),
    /// The mapped pointer stays valid until [`HostBuf::release`] unmaps it.
    Pinned {
        buffer: Buffer<cl_float>,
        ptr: *mut f32,
        len: usize,
    },
}

impl HostBuf {
    pub(super) fn new(
        context: &Context,
        queue: &CommandQueue,
        len: usize,
        memory: HostMemory,
    ) -> Result<Self> {
        if memory == HostMemory::Pageable {
            return Ok(HostBuf::Pageable(vec![0.0; len]));
        }
        let flags = CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR;
        // SAFETY: no host pointer is passed; the driver allocates host-reachable memory.
        let buffer = unsafe { Buffer::<cl_float>::create(context, flags, len, ptr::null_mut()) }
            .map_err(drv("clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)"))?;
        let mut mapped: cl_mem = ptr::null_mut();
        // SAFETY: a blocking map of the whole buffer; the pointer is written into `mapped`.
        unsafe {
            queue.enqueue_map_buffer(
                &buffer,
                CL_BLOCKING,
                CL_MAP_READ | CL_MAP_WRITE,
                0,
                len * 4,
                &mut mapped,
                &[],
            )
        }
        .map_err(drv("clEnqueueMapBuffer"))?;
        Ok(HostBuf::Pinned {
            buffer,
            ptr: mapped.cast(),
            len,
        })
    }

    pub(super) fn data(&mut self) -> &mut [f32] {
        match self {
            HostBuf::Pageable(v) => v,
            // SAFETY: the buffer is mapped for reading and writing, `len` floats long, until
            // `release`; the backend holds the only access to it.
            HostBuf::Pinned { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts_mut(*ptr, *len)
            },
        }
    }

    pub(super) fn prefix(&mut self, len: usize) -> Result<&mut [f32]> {
        let data = self.data();
        let held = data.len();
        data.get_mut(..len).ok_or_else(|| {
            BackendError::InvalidHandle(format!(
                "transfer of {len} floats from a host buffer of {held}"
            ))
        })
    }

    /// Before it is dropped.
    pub(super) fn release(self, queue: &CommandQueue) -> Result<()> {
        if let HostBuf::Pinned { buffer, ptr, .. } = self {
            // SAFETY: `ptr` is the pointer the map returned for this buffer.
            let event = unsafe { queue.enqueue_unmap_mem_object(buffer.get(), ptr.cast(), &[]) }
                .map_err(drv("clEnqueueUnmapMemObject"))?;
            event.wait().map_err(drv("clWaitForEvents (unmap)"))?;
        }
        Ok(())
    }
}
