//! JSON: the provenance that travels with every run (what exactly produced these numbers, so a
//! result can be trusted or reproduced long after), and JSON dumps of result rows.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{write_atomic, ExportError};

/// One device that took part in a run, as its API reported it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceProvenance {
    /// `OpenCL` or `CUDA`.
    pub api: String,
    /// Platform name (OpenCL) or the CUDA driver's platform description.
    pub platform: String,
    pub device: String,
    pub driver: String,
    /// API version the device reports (e.g. `OpenCL 3.0 CUDA`, `12.4`).
    pub api_version: String,
    /// PCI bus and device number (`19:00`), telling two GPUs of one name apart; absent where
    /// the API does not say, and in older folders.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci_bus: Option<String>,
}

/// Where a run's results came from; missing fields read as empty so older files still load.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Provenance {
    pub clvscu_version: String,
    /// Git commit of clvscu (with a `-dirty` suffix when the tree had changes), or `unknown`.
    pub git_commit: String,
    /// The full command line, one argument per entry.
    pub command_line: Vec<String>,
    pub host: String,
    /// Start of the run, UTC, RFC 3339.
    pub date_utc: String,
    pub study: String,
    pub devices: Vec<DeviceProvenance>,
    /// GPU state (clocks, temperature, other processes) queried before the run.
    pub gpu_query_before: String,
    /// The same query after the run, to spot throttling or interference during it.
    pub gpu_query_after: String,
    /// Free-form remarks (warnings, deviations from the protocol).
    pub notes: Vec<String>,
    /// SHA-256 of the study file's text, so a run can be matched to the exact study.
    pub study_sha256: String,
    /// Operating system and kernel.
    pub os: String,
    /// CPU model and logical CPU count.
    pub cpu: String,
    /// Environment variables that change the runtimes' behaviour (`POCL_*`, `CUDA_*`, ...).
    pub environment: std::collections::BTreeMap<String, String>,
    /// Every GPU's clocks, temperature and power as numbers, before and after the run.
    pub gpus_before: Vec<GpuState>,
    pub gpus_after: Vec<GpuState>,
    /// What a `clvscu tune` searched; absent from a `clvscu run`'s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tune: Option<TuneProvenance>,
}

/// The search of a `clvscu tune`, to tell whether two tunes searched the same configurations.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TuneProvenance {
    /// `family/name` of the space, as given to `clvscu tune` (`matvec/tuned-vec`).
    pub target: String,
    pub family: String,
    /// The kernel variant the space runs (where no parameter chooses another).
    pub variant: String,
    pub size: String,
    /// Strategies in the order they ran, and the seed of the random ones.
    pub strategies: Vec<String>,
    pub seed: u64,
    /// Valid configurations, and those refused by a constraint (never launched).
    pub points: usize,
    pub invalid: usize,
    /// SHA-256 of every valid configuration's text, one per line, in the space's order.
    pub space_sha256: String,
    /// The tuned kernel file's SHA-256 (first 12 hex digits) per API, prelude excluded.
    pub kernel_sha256: std::collections::BTreeMap<String, String>,
}

/// One GPU's state as NVML reports it; `None` where it reports no value.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct GpuState {
    pub index: Option<u32>,
    pub pci_bus_id: String,
    pub name: String,
    pub driver: String,
    pub sm_clock_mhz: Option<f64>,
    pub memory_clock_mhz: Option<f64>,
    pub max_sm_clock_mhz: Option<f64>,
    pub max_memory_clock_mhz: Option<f64>,
    pub temperature_c: Option<f64>,
    pub power_w: Option<f64>,
}

/// Pretty-printed JSON of `value`, with a final newline (friendly to diffs and `cat`).
pub fn to_json_pretty<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, ExportError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| ExportError::Render {
        format: "json",
        message: e.to_string(),
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

pub fn write_json_atomic<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), ExportError> {
    let bytes = to_json_pretty(value).map_err(|e| match e {
        ExportError::Render { message, .. } => ExportError::Json {
            path: path.to_path_buf(),
            line: 0,
            message,
        },
        other => other,
    })?;
    write_atomic(path, &bytes)
}

/// A run's rows of prs.csv and measurements.csv as one JSON document (`run --export-json`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunResults {
    pub prs: Vec<crate::rows::PrRow>,
    pub measurements: Vec<crate::rows::MeasurementRow>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{Api, SampleRow, Side, Status, TimerKind};
    use proptest::prelude::*;
    use std::fs;

    fn provenance() -> Provenance {
        Provenance {
            clvscu_version: "0.1.0".into(),
            git_commit: "abc1234-dirty".into(),
            command_line: vec![
                "clvscu".into(),
                "run".into(),
                "--study".into(),
                "a b".into(),
            ],
            host: "gpu-node-1".into(),
            date_utc: "2024-05-01T12:00:00Z".into(),
            study: "default".into(),
            devices: vec![DeviceProvenance {
                api: "CUDA".into(),
                platform: "NVIDIA CUDA".into(),
                device: "NVIDIA H100 80GB HBM3".into(),
                driver: "550.54.15".into(),
                api_version: "12.4".into(),
                pci_bus: Some("19:00".into()),
            }],
            gpu_query_before: "clocks.sm=1980\n\"quoted\"".into(),
            gpu_query_after: String::new(),
            notes: vec!["persistence mode off".into()],
            ..Default::default()
        }
    }

    #[test]
    fn provenance_round_trips_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run/provenance.json");
        let p = provenance();
        write_json_atomic(&path, &p).unwrap();
        assert_eq!(
            serde_json::from_slice::<Provenance>(&fs::read(&path).unwrap()).unwrap(),
            p
        );
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"git_commit\": \"abc1234-dirty\""), "{text}");
        assert!(text.ends_with("}\n"));
    }

    #[test]
    fn a_tune_section_round_trips_and_a_run_writes_none() {
        let run = String::from_utf8(to_json_pretty(&provenance()).unwrap()).unwrap();
        assert!(!run.contains("\"tune\""), "{run}");
        let p = Provenance {
            tune: Some(TuneProvenance {
                target: "reduce/tuned".into(),
                space_sha256: "ab".repeat(32),
                kernel_sha256: [("CUDA".to_string(), "0123456789ab".to_string())].into(),
                ..TuneProvenance::default()
            }),
            ..provenance()
        };
        let bytes = to_json_pretty(&p).unwrap();
        assert_eq!(serde_json::from_slice::<Provenance>(&bytes).unwrap(), p);
    }

    #[test]
    fn old_provenance_without_new_fields_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        fs::write(
            &path,
            r#"{"clvscu_version": "0.0.9", "devices": [{"api": "OpenCL"}]}"#,
        )
        .unwrap();
        let p: Provenance = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(p.clvscu_version, "0.0.9");
        assert_eq!(p.devices[0].api, "OpenCL");
        assert!(p.notes.is_empty());
    }

    #[test]
    fn rows_render_as_a_json_array() {
        let rows = vec![SampleRow {
            run_id: "r".into(),
            comparison: "c".into(),
            side: Side::B,
            api: Api::Cuda,
            timer: TimerKind::DeviceEvent,
            rep: 3,
            seconds: 0.25,
        }];
        let bytes = to_json_pretty(&rows).unwrap();
        let back: Vec<SampleRow> = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back, rows);
        let status = to_json_pretty(&[Status::LaunchFailed]).unwrap();
        assert_eq!(
            String::from_utf8(status).unwrap(),
            "[\n  \"launch-failed\"\n]\n"
        );
    }

    #[test]
    fn unserializable_value_is_a_json_error_naming_the_file() {
        use std::collections::HashMap;
        // JSON object keys must be strings: a map keyed by a tuple cannot be written.
        let mut bad: HashMap<(u8, u8), u8> = HashMap::new();
        bad.insert((1, 2), 3);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        let err = write_json_atomic(&path, &bad).unwrap_err();
        assert!(
            matches!(&err, ExportError::Json { path: p, .. } if p == &path),
            "{err:?}"
        );
        assert!(!path.exists());
    }

    proptest! {
        #[test]
        fn provenance_round_trips_for_any_text(
            fields in prop::collection::vec(any::<String>(), 8),
            args in prop::collection::vec(any::<String>(), 0..4),
        ) {
            let p = Provenance {
                clvscu_version: fields[0].clone(),
                git_commit: fields[1].clone(),
                command_line: args.clone(),
                host: fields[2].clone(),
                date_utc: fields[3].clone(),
                study: fields[4].clone(),
                devices: vec![DeviceProvenance {
                    api: fields[5].clone(),
                    ..DeviceProvenance::default()
                }],
                gpu_query_before: fields[6].clone(),
                gpu_query_after: fields[7].clone(),
                notes: args,
                ..Default::default()
            };
            let bytes = to_json_pretty(&p).unwrap();
            prop_assert_eq!(serde_json::from_slice::<Provenance>(&bytes).unwrap(), p);
        }
    }
}
