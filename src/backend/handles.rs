//! The table behind every opaque handle a backend hands out: one typed lookup, one error.

use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;

use super::{
    Api, BackendError, BufferId, CompileRequest, HostBufferId, KernelId, ProgramId, Result,
};

/// A plain index with a name for "invalid handle" messages.
pub trait Handle: Copy {
    const WHAT: &'static str;
    fn index(self) -> usize;
    fn from_index(index: usize) -> Self;
}

macro_rules! handle {
    ($($id:ident => $what:literal),+ $(,)?) => {$(
        impl Handle for $id {
            const WHAT: &'static str = $what;
            fn index(self) -> usize {
                self.0
            }
            fn from_index(index: usize) -> Self {
                $id(index)
            }
        }
    )+};
}

handle!(ProgramId => "program", KernelId => "kernel", BufferId => "buffer", HostBufferId => "host buffer");

/// Objects owned by a backend, addressed by handles of type `H`. A removed object leaves a
/// hole, so handles are never reused and a stale handle is an error, not another object.
pub struct Handles<H: Handle, T> {
    api: Api,
    slots: Vec<Option<T>>,
    _handle: PhantomData<H>,
}

impl<H: Handle, T> Handles<H, T> {
    pub fn new(api: Api) -> Self {
        Handles {
            api,
            slots: Vec::new(),
            _handle: PhantomData,
        }
    }

    pub fn insert(&mut self, value: T) -> H {
        self.slots.push(Some(value));
        H::from_index(self.slots.len() - 1)
    }

    /// Built only on failure, since every launch looks its handles up.
    fn invalid(api: Api, handle: H) -> BackendError {
        BackendError::InvalidHandle(format!("{api} {} {}", H::WHAT, handle.index()))
    }

    pub fn get(&self, handle: H) -> Result<&T> {
        self.slots
            .get(handle.index())
            .and_then(Option::as_ref)
            .ok_or_else(|| Self::invalid(self.api, handle))
    }

    pub fn get_mut(&mut self, handle: H) -> Result<&mut T> {
        let api = self.api;
        self.slots
            .get_mut(handle.index())
            .and_then(Option::as_mut)
            .ok_or_else(|| Self::invalid(api, handle))
    }

    /// Out for a moment, so that another can be borrowed beside it ([`Handles::put_back`]).
    pub fn take(&mut self, handle: H) -> Result<T> {
        let api = self.api;
        self.slots
            .get_mut(handle.index())
            .and_then(Option::take)
            .ok_or_else(|| Self::invalid(api, handle))
    }

    pub fn put_back(&mut self, handle: H, value: T) {
        if let Some(slot) = self.slots.get_mut(handle.index()) {
            *slot = Some(value);
        }
    }

    pub fn remove(&mut self, handle: H) -> Result<()> {
        self.take(handle).map(drop)
    }

    /// For leak checks in tests.
    pub fn live(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }
}

/// What a backend owns, of its own types: host buffers `H`, programs `P`, kernels `K` and
/// device buffers `B`, with the programs and kernels already built: a long run builds and
/// holds each distinct configuration once, so memory stays bounded.
pub struct Owned<H, P, K, B> {
    pub hosts: Handles<HostBufferId, H>,
    pub programs: Handles<ProgramId, P>,
    pub kernels: Handles<KernelId, K>,
    pub buffers: Handles<BufferId, B>,
    built_programs: HashMap<CompileRequest, ProgramId>,
    built_kernels: HashMap<(ProgramId, String), KernelId>,
}

impl<H, P, K, B> Owned<H, P, K, B> {
    pub fn new(api: Api) -> Self {
        Owned {
            hosts: Handles::new(api),
            programs: Handles::new(api),
            kernels: Handles::new(api),
            buffers: Handles::new(api),
            built_programs: HashMap::new(),
            built_kernels: HashMap::new(),
        }
    }

    pub fn built(&self, request: &CompileRequest) -> Option<ProgramId> {
        self.built_programs.get(request).copied()
    }

    /// Each once, in their first order.
    pub fn not_built(&self, requests: &[CompileRequest]) -> Vec<CompileRequest> {
        let mut seen = HashSet::new();
        requests
            .iter()
            .filter(|r| !self.built_programs.contains_key(*r) && seen.insert(*r))
            .cloned()
            .collect()
    }

    pub fn keep_program(&mut self, request: &CompileRequest, program: P) -> ProgramId {
        let id = self.programs.insert(program);
        self.built_programs.insert(request.clone(), id);
        id
    }

    /// The kernel `name` of `program` made before, else the one `make` makes of it, kept.
    pub fn kernel_or(
        &mut self,
        program: ProgramId,
        name: &str,
        make: impl FnOnce(&P) -> Result<K>,
    ) -> Result<KernelId> {
        let key = (program, name.to_string());
        if let Some(&id) = self.built_kernels.get(&key) {
            return Ok(id);
        }
        let id = self.kernels.insert(make(self.programs.get(program)?)?);
        self.built_kernels.insert(key, id);
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_handle_is_invalid_and_never_reused() {
        let mut t: Handles<BufferId, u32> = Handles::new(Api::Cuda);
        let a = t.insert(1);
        t.remove(a).unwrap();
        let b = t.insert(2);
        assert_ne!(a, b);
        let e = t.get(a).unwrap_err().to_string();
        assert!(e.contains("CUDA buffer 0"), "{e}");
        assert_eq!(*t.get(b).unwrap(), 2);
        assert_eq!(t.live(), 1);
    }

    #[test]
    fn take_and_put_back_round_trip() {
        let mut t: Handles<KernelId, String> = Handles::new(Api::OpenCl);
        let k = t.insert("k".into());
        let v = t.take(k).unwrap();
        assert!(t.get(k).is_err());
        t.put_back(k, v);
        assert_eq!(t.get(k).unwrap(), "k");
    }
}
