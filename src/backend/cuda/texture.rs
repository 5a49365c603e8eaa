//! The texture path of the CUDA backend: a texture object over a buffer's linear memory (read
//! with `tex1Dfetch`), made on first use of [`crate::backend::Arg::Texture`] and destroyed
//! when its buffer is freed.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::sys;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};

use super::{drv, API};
use crate::backend::{check_texels, BackendError, BufferId, Result};

#[derive(Default)]
pub struct Textures {
    made: HashMap<(BufferId, u32), sys::CUtexObject>,
}

impl Textures {
    pub fn get_or_make(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        device: &str,
        id: BufferId,
        buffer: &CudaSlice<f32>,
        channels: u32,
    ) -> Result<sys::CUtexObject> {
        if let Some(t) = self.made.get(&(id, channels)) {
            return Ok(*t);
        }
        if !matches!(channels, 1 | 4) {
            let what = format!("a texture of {channels} channels (1 or 4)");
            return Err(BackendError::unsupported(API, what));
        }
        let texels = (buffer.len() / channels as usize) as u64;
        let limit = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH)
            .map_err(drv("cuDeviceGetAttribute"))?;
        let names = (
            "a linear texture",
            "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH",
        );
        check_texels(texels, limit.max(0) as u64, device, names)?;
        let (ptr, _sync) = buffer.device_ptr(stream);
        // SAFETY: all-zero descriptors are valid (numbers, and a null array handle in the
        // union's unused members); the linear member and the texture's read mode are set below.
        let mut res: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
        res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
        res.res.linear = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
            devPtr: ptr,
            format: sys::CUarray_format::CU_AD_FORMAT_FLOAT,
            numChannels: channels,
            sizeInBytes: texels as usize * channels as usize * 4,
        };
        // SAFETY: as above; point filtering, element (unnormalised) coordinates, no flags:
        // `tex1Dfetch` returns the stored float unchanged.
        let tex: sys::CUDA_TEXTURE_DESC = unsafe { std::mem::zeroed() };
        let mut object: sys::CUtexObject = 0;
        ctx.bind_to_thread().map_err(drv("cuCtxSetCurrent"))?;
        // SAFETY: the descriptors outlive the call; the buffer outlives the texture, which
        // `forget` destroys before the buffer is freed.
        unsafe { sys::cuTexObjectCreate(&mut object, &res, &tex, std::ptr::null()) }
            .result()
            .map_err(|e| {
                let what =
                    format!("cuTexObjectCreate (linear, {texels} texels of {channels} floats)");
                BackendError::driver(API, &what, format!("{:?}", e.0))
            })?;
        self.made.insert((id, channels), object);
        Ok(object)
    }

    /// Before the buffer itself is freed.
    pub fn forget(&mut self, id: BufferId) {
        self.made.retain(|(b, _), t| {
            if *b == id {
                // SAFETY: made by cuTexObjectCreate and destroyed once, here.
                let _ = unsafe { sys::cuTexObjectDestroy(*t) };
                false
            } else {
                true
            }
        });
    }
}
