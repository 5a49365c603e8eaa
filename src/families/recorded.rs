//! A family known only from result rows: one a study declared in another process (a user's
//! kernel pair), met again when its run folder is read (`plot`, `report`, `diff`). Its rows
//! carry everything the readers need; it has no variants and nothing of it can run.

use super::error::WorkloadError;
use super::family::{Family, FamilySpec, InputChoice};
use super::footprint::Footprint;
use super::plan::{Build, Built, ExecError, Inputs, Ran};
use super::reference::Verification;
use super::variant::Variant;
use crate::rows::{FamilyId, Metric, Size};

pub struct Recorded {
    spec: FamilySpec,
}

impl Recorded {
    pub fn new(id: FamilyId) -> Recorded {
        Recorded {
            spec: FamilySpec::new(id, id.name(), Metric::Bandwidth),
        }
    }

    fn refusal(&self) -> WorkloadError {
        WorkloadError::BadProblem {
            variant: self.spec.id.name().into(),
            reason: "this family is known only from result rows; load the study that declares \
                     its kernel pair to run it"
                .into(),
        }
    }
}

impl Family for Recorded {
    fn spec(&self) -> &FamilySpec {
        &self.spec
    }

    fn work(&self, _: &str, _: Size, _: u64) -> (u64, u64) {
        (0, 0)
    }

    fn footprint(&self, _: Size) -> Footprint {
        Footprint::default()
    }

    fn inputs(&self, _: &'static Variant, size: Size, _: u64, _: InputChoice<'_>) -> Inputs {
        Inputs::new(size, Vec::new(), Vec::new())
    }

    fn build(&self, _: &mut Build<'_>) -> Result<Built, ExecError> {
        Err(self.refusal().into())
    }

    fn check(&self, _: &Ran, _: &Inputs, _: &[f32]) -> Verification {
        Verification {
            ok: false,
            max_error: f64::INFINITY,
            tolerance: 0.0,
            checked: 0,
        }
    }

    fn check_size(&self, _: &Variant, _: Size) -> Result<(), WorkloadError> {
        Err(self.refusal())
    }
}
