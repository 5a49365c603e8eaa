//! A family's identity: its lowercase name, the text CSV rows and study files carry.
//!
//! A name, not an enum, so that adding a family touches only its module and one registry
//! line. The built-in names are also associated constants, spelt as the enum variants they
//! replaced, so code that asks "is this the matvec family?" still reads that way.

use std::fmt;

/// The family a variant belongs to, by name (`matvec`, `reduce`, ...).
///
/// Parsing, ordering and serialisation go through the registry (`families::all`), which knows
/// every family; ordering follows the registry, so reports keep their family order.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FamilyId(&'static str);

impl FamilyId {
    /// A family named `name`: lowercase, as the registry and CSV spell it.
    pub const fn new(name: &'static str) -> Self {
        FamilyId(name)
    }

    pub fn name(self) -> &'static str {
        self.0
    }
}

/// The families built in before families became modules, by their former enum names.
#[allow(non_upper_case_globals)]
impl FamilyId {
    pub const Matvec: FamilyId = FamilyId("matvec");
    pub const Reduce: FamilyId = FamilyId("reduce");
    pub const Bandwidth: FamilyId = FamilyId("bandwidth");
    pub const Flops: FamilyId = FamilyId("flops");
    pub const Launch: FamilyId = FamilyId("launch");
    pub const Fft: FamilyId = FamilyId("fft");
    pub const Sgemm: FamilyId = FamilyId("sgemm");
    pub const Math: FamilyId = FamilyId("math");
    pub const Stencil: FamilyId = FamilyId("stencil");
    pub const Sobel: FamilyId = FamilyId("sobel");
    pub const Broadcast: FamilyId = FamilyId("broadcast");
    pub const Spmv: FamilyId = FamilyId("spmv");
    pub const Md: FamilyId = FamilyId("md");
    pub const Bfs: FamilyId = FamilyId("bfs");
    pub const Fill: FamilyId = FamilyId("fill");
    pub const Transfer: FamilyId = FamilyId("transfer");
}

impl fmt::Display for FamilyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// Debug prints the name as the enum's derived Debug printed its variant, so messages and
/// snapshots that show a family read as before.
impl fmt::Debug for FamilyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut chars = self.0.chars();
        if let Some(first) = chars.next() {
            write!(f, "{}", first.to_ascii_uppercase())?;
        }
        for c in chars {
            if c != '-' {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl From<FamilyId> for &'static str {
    fn from(id: FamilyId) -> Self {
        id.0
    }
}
