//! Each verdict held against the machine code each runtime runs: a cause is verified only when
//! its rung changed one step (its control held) and, for a second-stage cause, when the rung's
//! code reproduces what sets the slower side's code apart. Every verdict gets the machine-code
//! difference behind it in one sentence, counted from the two cubins (the largest measured one
//! where no rung closes the gap).

use std::collections::BTreeMap;

use super::attribute::{Cause, TargetExplanation, Verdict};
use super::machine_code::{capped, CUDA_DRIVER, CUDA_DRIVER_OPENCL_PTX, OPENCL_RUNTIME};
use crate::inspect::cubin::{difference_sentence, reproduces, KernelCode};

type Codes = BTreeMap<(String, String), KernelCode>;

fn code<'c>(codes: &'c Codes, target: &str, name: &str) -> Option<&'c KernelCode> {
    codes.get(&(target.to_string(), name.to_string()))
}

/// Whether a register rung's code reproduces OpenCL's (its registers and the class that sets
/// OpenCL's code apart from the CUDA driver's build of the same PTX); `None` when the codes
/// were not all read.
fn register_rung_reproduces(codes: &Codes, target: &str, registers: u32) -> Option<bool> {
    let rung = code(codes, target, &capped(registers))?;
    let slow = code(codes, target, OPENCL_RUNTIME)?;
    let fast = code(codes, target, CUDA_DRIVER_OPENCL_PTX)?;
    Some(reproduces(rung, slow, fast))
}

/// Whether every cause of an explained verdict is proven, and any sentence to add.
fn check_causes(t: &TargetExplanation, codes: &Codes) -> (bool, Option<String>) {
    let Verdict::Explained(causes) = &t.verdict else {
        return (false, None);
    };
    let mut verified = true;
    let mut note = None;
    for (cause, _) in causes {
        let why = match cause {
            Cause::Runtime => None,
            Cause::Registers {
                registers,
                held: crate::rows::Api::Cuda,
            } => match register_rung_reproduces(codes, &t.target, *registers) {
                Some(true) => continue,
                Some(false) => Some(format!(
                    "the {registers}-register rung closed the PR by another route: its code does \
                     not reproduce what sets OpenCL's code apart"
                )),
                None => Some("the register rung's machine code was not read".into()),
            },
            // Only the CUDA-capped rung's code is read (`capped_rungs`): with OpenCL capped,
            // no code shows that the cap reproduces what sets the slower side apart.
            Cause::Registers { registers, .. } => Some(format!(
                "the machine code of OpenCL capped at {registers} registers is not read"
            )),
            _ => continue,
        };
        verified = false;
        note = why.or(note);
    }
    (verified, note)
}

/// Sets `verified` and `machine_code` of every explanation from the codes read: the sentence
/// of what the front ends' PTX becomes through one second stage (for a front-end verdict) or
/// of what the second stages make of one PTX, else of what each runtime runs.
pub fn annotate(explanations: &mut [TargetExplanation], codes: &Codes) {
    for t in explanations.iter_mut() {
        let (verified, note) = check_causes(t, codes);
        t.verified = verified;
        let cl = code(codes, &t.target, OPENCL_RUNTIME);
        let cu = code(codes, &t.target, CUDA_DRIVER);
        let x = code(codes, &t.target, CUDA_DRIVER_OPENCL_PTX);
        let pair = |a: Option<&KernelCode>, an: &str, b: Option<&KernelCode>, bn: &str| {
            difference_sentence(an, a?, bn, b?)
        };
        let front_end_only = matches!(&t.verdict,
            Verdict::Explained(c) if c.iter().all(|(c, _)| *c == Cause::FrontEnd));
        let sentence = if front_end_only {
            let through = "front end, through the same second stage: OpenCL's PTX";
            pair(x, through, cu, "NVRTC's PTX")
        } else {
            let from = "second stage, from the same PTX: OpenCL's JIT";
            pair(cl, from, x, "the CUDA driver")
        };
        let sentence = sentence.or_else(|| pair(cl, "what OpenCL runs", cu, "what CUDA runs"));
        t.machine_code = match (sentence, note) {
            (Some(s), Some(n)) => Some(format!("{n}; {s}")),
            (s, n) => s.or(n),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::cubin::Resources;
    use crate::rows::Api;

    fn kernel(registers: u32, classes: &[(&str, u32)]) -> KernelCode {
        KernelCode {
            resources: Resources {
                registers,
                ..Resources::default()
            },
            classes: classes.iter().map(|(c, n)| (c.to_string(), *n)).collect(),
        }
    }

    fn explained_by_registers() -> TargetExplanation {
        TargetExplanation {
            target: "sgemm".into(),
            study: String::new(),
            family: String::new(),
            variant: String::new(),
            size: String::new(),
            device: String::new(),
            pr: None,
            rungs: Vec::new(),
            verdict: Verdict::Explained(vec![(
                Cause::Registers {
                    registers: 153,
                    held: Api::Cuda,
                },
                1.0,
            )]),
            verified: false,
            machine_code: None,
            fix: None,
            replay: None,
            shapes: Vec::new(),
        }
    }

    fn codes(capped_code: KernelCode) -> Codes {
        let mut all = Codes::new();
        let mut put = |name: &str, k: KernelCode| {
            all.insert(("sgemm".to_string(), name.to_string()), k);
        };
        put(OPENCL_RUNTIME, kernel(153, &[("LDS", 512), ("LDS.128", 0)]));
        put(
            CUDA_DRIVER_OPENCL_PTX,
            kernel(167, &[("LDS", 0), ("LDS.128", 128)]),
        );
        put(CUDA_DRIVER, kernel(167, &[("LDS", 0), ("LDS.128", 128)]));
        put(&capped(153), capped_code);
        all
    }

    #[test]
    fn a_gap_closed_without_the_slow_sides_code_is_not_a_register_cause() {
        let mut all = [explained_by_registers()];
        annotate(
            &mut all,
            &codes(kernel(153, &[("LDS", 0), ("LDS.128", 128)])),
        );
        assert!(!all[0].verified);
        let text = all[0].machine_code.as_deref().unwrap();
        assert!(text.contains("another route"), "{text}");
        assert!(text.contains("LDS 512 against 0"), "{text}");
        assert!(all[0].verdict_text().contains("not every cause is proven"));
    }

    #[test]
    fn a_register_cause_that_reproduces_the_slow_code_is_verified_at_the_instruction_level() {
        let mut all = [explained_by_registers()];
        annotate(
            &mut all,
            &codes(kernel(153, &[("LDS", 500), ("LDS.128", 2)])),
        );
        assert!(all[0].verified);
        let text = all[0].verdict_text();
        assert!(
            text.contains("second stage, from the same PTX: OpenCL's JIT against the CUDA driver"),
            "{text}"
        );
    }

    #[test]
    fn a_register_cause_with_opencl_capped_is_not_verified_for_its_code_is_not_read() {
        let mut t = explained_by_registers();
        t.verdict = Verdict::Explained(vec![(
            Cause::Registers {
                registers: 28,
                held: Api::OpenCl,
            },
            1.0,
        )]);
        let mut all = [t];
        annotate(
            &mut all,
            &codes(kernel(153, &[("LDS", 500), ("LDS.128", 2)])),
        );
        assert!(!all[0].verified);
        let text = all[0].machine_code.as_deref().unwrap();
        assert!(
            text.contains("OpenCL capped at 28 registers is not read"),
            "{text}"
        );
    }

    #[test]
    fn without_cubins_a_register_cause_is_not_verified() {
        let mut all = [explained_by_registers()];
        annotate(&mut all, &Codes::new());
        assert!(!all[0].verified);
    }
}
