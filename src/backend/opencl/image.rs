//! The texture path of the OpenCL backend: an `image1d_buffer_t` over a buffer's memory, made
//! on first use of [`crate::backend::Arg::Texture`] and kept until its buffer is freed.

use std::collections::HashMap;
use std::ptr;

use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::memory::{
    Buffer, ClMem, Image, CL_FLOAT, CL_MEM_OBJECT_IMAGE1D_BUFFER, CL_MEM_READ_ONLY, CL_R, CL_RGBA,
};
use opencl3::types::{cl_float, cl_image_desc, cl_image_format};

use super::{drv, API};
use crate::backend::{check_texels, BackendError, BufferId, Result};

#[derive(Default)]
pub struct Images {
    made: HashMap<(BufferId, u32), Image>,
}

impl Images {
    pub fn get_or_make(
        &mut self,
        context: &Context,
        device: &Device,
        id: BufferId,
        buffer: &Buffer<cl_float>,
        channels: u32,
    ) -> Result<&Image> {
        if let std::collections::hash_map::Entry::Vacant(slot) = self.made.entry((id, channels)) {
            slot.insert(make(context, device, buffer, channels)?);
        }
        self.get(id, channels)
    }

    pub fn get(&self, id: BufferId, channels: u32) -> Result<&Image> {
        self.made
            .get(&(id, channels))
            .ok_or_else(|| BackendError::InvalidHandle(format!("OpenCL image of buffer {}", id.0)))
    }

    /// Before the buffer itself is freed.
    pub fn forget(&mut self, id: BufferId) {
        self.made.retain(|(b, _), _| *b != id);
    }
}

fn make(
    context: &Context,
    device: &Device,
    buffer: &Buffer<cl_float>,
    channels: u32,
) -> Result<Image> {
    let order = match channels {
        1 => CL_R,
        4 => CL_RGBA,
        c => {
            let what = format!("a texture of {c} channels (1 or 4)");
            return Err(BackendError::unsupported(API, what));
        }
    };
    if !device.image_support().unwrap_or(false) {
        let name = device.name().unwrap_or_default();
        let what = format!("images on {name} (CL_DEVICE_IMAGE_SUPPORT is false)");
        return Err(BackendError::unsupported(API, what));
    }
    let bytes = buffer.size().map_err(drv("CL_MEM_SIZE"))? as u64;
    let texels = bytes / (4 * u64::from(channels));
    let limit = device
        .image_max_buffer_size()
        .map_err(drv("CL_DEVICE_IMAGE_MAX_BUFFER_SIZE"))? as u64;
    let names = ("an image1d_buffer", "CL_DEVICE_IMAGE_MAX_BUFFER_SIZE");
    check_texels(texels, limit, &device.name().unwrap_or_default(), names)?;
    let format = cl_image_format {
        image_channel_order: order,
        image_channel_data_type: CL_FLOAT,
    };
    // SAFETY: an all-zero image descriptor is valid (every field is a number or a null
    // handle); the fields an IMAGE1D_BUFFER needs are set below.
    let mut desc: cl_image_desc = unsafe { std::mem::zeroed() };
    desc.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
    desc.image_width = texels as usize;
    desc.buffer = buffer.get();
    let what = format!("clCreateImage(IMAGE1D_BUFFER, {texels} texels of {channels} floats)");
    // SAFETY: format and descriptor outlive the call; the buffer outlives the image (the
    // image is released in `forget` before the buffer is freed).
    unsafe { Image::create(context, CL_MEM_READ_ONLY, &format, &desc, ptr::null_mut()) }
        .map_err(|e| BackendError::driver(API, &what, e))
}
