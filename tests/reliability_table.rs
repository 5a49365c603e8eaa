//! Bad input and faults, tried as an adversarial user would, through the binary and with no
//! runtime (the hidden fake pair, plot, merge, parity): every case must end with its
//! documented exit code and a clear message, never a panic, never a write outside its
//! working folder, and never a change to a results folder it refuses. The test writes the
//! table of every case to docs/reliability.md and fails when the committed table differs
//! (CLVSCU_BLESS=1 rewrites it).

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clvscu::export::csv::CsvSchema;
use clvscu::rows::{MeasurementRow, PrRow};
use sha2::{Digest, Sha256};

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reliability.md");

/// A small fake study: two comparisons.
const GOOD: &str = "name = \"good\"\n[defaults]\nsize = \"64x40\"\nlocal = 64\nwarmup = 1\n\
    reps = 3\nmin_time = 0\n[[comparison]]\nvariant = \"listing2\"\n[[comparison]]\n\
    variant = \"tuned\"\n";

/// GOOD with `line` added to its defaults.
fn good_with(line: &str) -> String {
    GOOD.replace("min_time = 0\n", &format!("min_time = 0\n{line}\n"))
}

/// One comparison (Listing 2 unless `extra` names a variant) with `extra` lines in it.
fn one(extra: &str) -> String {
    let variant = if extra.contains("variant =") {
        ""
    } else {
        "variant = \"listing2\"\n"
    };
    format!(
        "name = \"one\"\n[defaults]\nsize = \"64x40\"\nlocal = 64\nreps = 2\nmin_time = 0\n\
         [[comparison]]\n{variant}{extra}\n"
    )
}

/// How a case prepares its working folder before the command runs.
#[derive(Clone, Copy)]
enum Setup {
    Nothing,
    /// A finished fake run of GOOD in `out/`.
    FinishedRun,
    /// A finished run, then this edit of one of its files.
    Edited(&'static str, fn(&str) -> String),
    /// A finished run, then one of its files removed.
    Removed(&'static str),
    /// This preparation of the working folder (no finished run).
    Prepared(fn(&Path)),
    /// A finished run, then this change to the working folder.
    Then(fn(&Path)),
    /// A FIFO (named pipe) at this path: whoever opens it for reading waits for a writer.
    Fifo(&'static str),
    /// A symbolic link at the first path to the second (`/dev/zero`: endless bytes).
    Symlink(&'static str, &'static str),
    /// A finished fake run of GOOD into its default output folder (no `--out`).
    DefaultRun,
}

struct Case {
    class: &'static str,
    what: &'static str,
    args: Vec<String>,
    files: Vec<(&'static str, String)>,
    setup: Setup,
    code: i32,
    /// Text the message (stderr, else stdout) must contain.
    expect: &'static str,
    /// The results folder must be byte-identical after the command.
    keeps_out: bool,
    /// Symbolic links planted (after the setup): the link, and what it points to in the
    /// working folder (`victim`, a file, or `elsewhere`, a folder); neither may change.
    links: Vec<(&'static str, &'static str)>,
    /// Paths that must not exist after the command.
    absent: Vec<&'static str>,
    /// A file-size limit (`ulimit -f`, bytes) the command runs under.
    file_size_limit: Option<u64>,
    /// An environment variable the command runs with (its value relative to the case's
    /// working folder).
    env: Option<(&'static str, &'static str)>,
}

fn case(
    class: &'static str,
    what: &'static str,
    args: Vec<String>,
    code: i32,
    expect: &'static str,
) -> Case {
    Case {
        class,
        what,
        args,
        files: Vec::new(),
        setup: Setup::Nothing,
        code,
        expect,
        keeps_out: false,
        links: Vec::new(),
        absent: Vec::new(),
        file_size_limit: None,
        env: None,
    }
}

impl Case {
    fn file(mut self, name: &'static str, text: impl Into<String>) -> Self {
        self.files.push((name, text.into()));
        self
    }

    fn after(mut self, setup: Setup) -> Self {
        self.setup = setup;
        self
    }

    fn keeps_out(mut self) -> Self {
        self.keeps_out = true;
        self
    }

    fn link(mut self, at: &'static str, to: &'static str) -> Self {
        self.links.push((at, to));
        self
    }

    fn absent(mut self, path: &'static str) -> Self {
        self.absent.push(path);
        self
    }

    fn env(mut self, name: &'static str, value: &'static str) -> Self {
        self.env = Some((name, value));
        self
    }

    fn file_size_limit(mut self, bytes: u64) -> Self {
        self.file_size_limit = Some(bytes);
        self
    }
}

/// One comparison of `family`/`variant` at `size`, with `extra` lines.
fn sized(family: &str, variant: &str, size: &str, extra: &str) -> String {
    one(&format!(
        "family = \"{family}\"\nvariant = \"{variant}\"\nsize = \"{size}\"\n{extra}"
    ))
}

/// One SpMV comparison reading its matrix from `m.mtx`.
fn spmv_file() -> String {
    one("family = \"spmv\"\nvariant = \"scalar\"\nmatrix = \"file:m.mtx\"")
}

/// A Matrix Market file with this size line and one entry.
fn mtx(size_line: &str) -> String {
    format!("%%MatrixMarket matrix coordinate real general\n{size_line}\n1 1 1.0\n")
}

/// A comparison named with escape sequences that clear and recolour a terminal.
const ESCAPING_NAME: &str = "name = \"x\\u001b[2J\\u001b[31mred\"";

/// A comparison name holding a right-to-left override, which a terminal would show reversed.
const RTL_NAME: &str = "name = \"a\\u202Elmth.exe\"";

/// One comparison of matvec's `auto`, which reads the rule table CLVSCU_MATVEC_RULES names.
fn auto_study() -> String {
    one("variant = \"auto\"")
}

/// The cases of issue 49: every input bounded, every value in its type's range.
fn issue_49_inputs() -> Vec<Case> {
    vec![
        case(
            "kernels",
            "a FIFO as a --kernels-dir kernel file",
            fake_run(&["--kernels-dir", "k"]),
            3,
            "matvec.cl is a FIFO",
        )
        .file("s.toml", GOOD)
        .file("k/kernels_cl/prelude.cl", "")
        .file("k/kernels_cu/prelude.cu", "")
        .file("k/kernels_cu/matvec.cu", "")
        .after(Setup::Fifo("k/kernels_cl/matvec.cl")),
        case(
            "rule table",
            "CLVSCU_MATVEC_RULES naming a missing file",
            fake_run(&[]),
            1,
            "nosuch.toml",
        )
        .file("s.toml", auto_study())
        .env("CLVSCU_MATVEC_RULES", "nosuch.toml"),
        case(
            "rule table",
            "CLVSCU_MATVEC_RULES naming a FIFO",
            fake_run(&[]),
            1,
            "r.toml is a FIFO",
        )
        .file("s.toml", auto_study())
        .env("CLVSCU_MATVEC_RULES", "r.toml")
        .after(Setup::Fifo("r.toml")),
        case(
            "rule table",
            "CLVSCU_MATVEC_RULES naming a folder without tables",
            fake_run(&[]),
            1,
            "a folder holding no matvec-auto-*.toml table",
        )
        .file("s.toml", auto_study())
        .file("rules/readme.txt", "")
        .env("CLVSCU_MATVEC_RULES", "rules"),
        case(
            "report",
            "a FIFO as the README of report --findings",
            a(&[
                "report",
                "--findings",
                "--readme",
                "R.md",
                "--out",
                "d",
                "out",
            ]),
            1,
            "R.md is a FIFO",
        )
        .after(Setup::Fifo("R.md"))
        .absent("d/findings.md"),
        case(
            "output folder",
            "a FIFO as measurements.csv",
            fake_run(&[]),
            1,
            "measurements.csv: is not a regular file",
        )
        .file("s.toml", GOOD)
        .after(Setup::Fifo("out/measurements.csv")),
        case(
            "output folder",
            "a FIFO as samples.csv",
            fake_run(&[]),
            1,
            "samples.csv: is not a regular file",
        )
        .file("s.toml", GOOD)
        .after(Setup::Fifo("out/samples.csv")),
        study_case(
            "a right-to-left override in a comparison name, in an error",
            format!(
                "{}[[comparison]]\nvariant = \"tuned\"\n{RTL_NAME}\n",
                one(RTL_NAME)
            ),
            "a\\u{202e}lmth.exe: two comparisons have the same name",
        ),
        case("tune", "--reps 0", fake_tune(&["--reps", "0"]), 2, "--reps"),
        case(
            "tune",
            "--reps 4294967295",
            fake_tune(&["--reps", "4294967295"]),
            2,
            "--reps",
        ),
        case(
            "tune",
            "--warmup 2000000",
            fake_tune(&["--warmup", "2000000"]),
            2,
            "--warmup",
        ),
        case(
            "tune",
            "--timeout below the watchdog's interval",
            fake_tune(&["--timeout", "0.001"]),
            2,
            "the interval at which the watchdog looks",
        ),
        case(
            "command line",
            "run --timeout below the watchdog's interval",
            fake_run(&["--timeout", "0.01"]),
            2,
            "the interval at which the watchdog looks",
        ),
    ]
}

/// The cases of issue 35 on inputs, bounds and the rest.
fn inputs_bounds_and_the_rest() -> Vec<Case> {
    vec![
        study_case(
            "a BFS graph of 2^31 vertices",
            sized("bfs", "uniform", "2^31", ""),
            "edge offsets are 32-bit integers",
        ),
        study_case(
            "a BFS graph past the device's memory",
            sized("bfs", "uniform", "2^28", ""),
            "bytes of device memory; fake OpenCL device has 1073741824 bytes",
        ),
        study_case(
            "a 1600^3 stencil",
            sized("stencil", "fdtd3d", "1600", "local = 128"),
            "bytes of device memory; fake OpenCL device has 1073741824 bytes",
        ),
        study_case(
            "a 65536x65535 matrix",
            one("size = \"65536x65535\""),
            "bytes of device memory; fake OpenCL device has 1073741824 bytes",
        ),
        study_case(
            "a 60000x60000 Sobel image",
            sized(
                "sobel",
                "constant",
                "60000x60000",
                "local = 32\nlocal_y = 8",
            ),
            "bytes of device memory; fake OpenCL device has 1073741824 bytes",
        ),
        study_case(
            "a Matrix Market header of 2^31 x 2^31 with 2^40 entries",
            spmv_file(),
            "exceeds the kernels' 32-bit indices",
        )
        .file("m.mtx", mtx("2147483648 2147483648 1099511627776")),
        study_case(
            "a Matrix Market file declaring more entries than it holds",
            spmv_file(),
            "declares 100000000 entries, but a file of",
        )
        .file("m.mtx", mtx("4 4 100000000")),
        // The study file itself is the FIFO or link: no text is written to it.
        case(
            "study file",
            "a FIFO as the study",
            fake_run(&[]),
            1,
            "s.toml is a FIFO",
        )
        .after(Setup::Fifo("s.toml")),
        case(
            "study file",
            "/dev/zero as the study (a link)",
            fake_run(&[]),
            1,
            "s.toml is a character device",
        )
        .after(Setup::Symlink("s.toml", "/dev/zero")),
        case(
            "study file",
            "a folder as the study",
            a(&["run", "--pair", "fake", "--no-plot", "--study", "d.toml"]),
            1,
            "d.toml is a folder",
        )
        .file("d.toml/x", ""),
        study_case(
            "a study file over 16 MiB",
            format!("{GOOD}{}", "# padding\n".repeat(1_700_000)),
            "larger than the 16 MiB limit",
        ),
        study_case(
            "/dev/zero as a Matrix Market file (a link)",
            spmv_file(),
            "m.mtx is a character device",
        )
        .after(Setup::Symlink("m.mtx", "/dev/zero")),
        study_case(
            "a FIFO as a Matrix Market file",
            spmv_file(),
            "m.mtx is a FIFO",
        )
        .after(Setup::Fifo("m.mtx")),
        case(
            "plot",
            "a FIFO as a CSV",
            a(&["plot", "f.csv", "--out", "c"]),
            1,
            "f.csv is a FIFO",
        )
        .after(Setup::Fifo("f.csv")),
        case(
            "merge",
            "/dev/zero as a CSV (a link)",
            a(&["merge", "z.csv", "e.csv", "-o", "m.csv"]),
            1,
            "z.csv is a character device",
        )
        .after(Setup::Symlink("z.csv", "/dev/zero")),
        study_case(
            "reps above max_reps",
            one("reps = 10\nmax_reps = 1"),
            "field 'reps' = 10 is above field 'max_reps' = 1",
        ),
        study_case(
            "a min_time past the timing cap",
            one("min_time = 1e308"),
            "field 'min_time' = 1e308 is above the limit 600 s",
        ),
        case(
            "tune",
            "a search budget of 1e308 seconds",
            fake_tune(&["--strategy", "random", "--budget-s", "1e308"]),
            2,
            "the longest search budget",
        ),
        study_case(
            "a seed past 2^53",
            one("seed = 9007199254740992"),
            "field 'seed' = 9007199254740992 is above the limit 9007199254740991",
        ),
        study_case(
            "a define that rewrites OpenCL's CLK_LOCAL_MEM_FENCE",
            one("defines = { CLK_LOCAL_MEM_FENCE = \"CLK_GLOBAL_MEM_FENCE\" }"),
            "CLK_LOCAL_MEM_FENCE starts CLK_, a prefix of OpenCL or CUDA built-ins",
        ),
        study_case(
            "a define that rewrites get_global_id",
            one("defines = { get_global_id = \"get_local_id\" }"),
            "get_global_id is an OpenCL or CUDA built-in",
        ),
        study_case(
            "a define that rewrites CUDA's __syncthreads",
            one("defines = { __syncthreads = \"__syncwarp\" }"),
            "__syncthreads starts __",
        ),
        study_case(
            "a define that rewrites CUDA's threadIdx",
            one("defines = { threadIdx = \"blockIdx\" }"),
            "threadIdx is an OpenCL or CUDA built-in",
        ),
        study_case(
            "a define that rewrites a kernel's own variable",
            one("defines = { row = \"0\" }"),
            "row is an identifier of kernels_cl/matvec.cl, not one of its knobs",
        ),
        study_case(
            "an escape sequence in a comparison name, in an error",
            format!(
                "{}[[comparison]]\nvariant = \"tuned\"\n{ESCAPING_NAME}\n",
                one(ESCAPING_NAME)
            ),
            "x\\u{1b}[2J\\u{1b}[31mred: two comparisons have the same name",
        ),
        case(
            "study file",
            "an escape sequence in a comparison name, on a run",
            fake_run(&[]),
            0,
            "verified and timed",
        )
        .file("s.toml", one(ESCAPING_NAME)),
        case(
            "command line",
            "--cl-device ''",
            fake_run(&["--cl-device", ""]),
            2,
            "an empty device selector matches every device",
        ),
        case(
            "command line",
            "--cuda-device ' '",
            fake_run(&["--cuda-device", " "]),
            2,
            "an empty device selector matches every device",
        ),
        case(
            "command line",
            "--cl-device-b ''",
            fake_run(&["--cl-device-b", ""]),
            2,
            "an empty device selector matches every device",
        ),
        case(
            "command line",
            "--passes 4294967295",
            fake_run(&["--passes", "4294967295"]),
            2,
            "4294967295 is not in 1..=1000000",
        ),
        case(
            "output folder",
            "a second run in the same second (default output folder)",
            a(&["run", "--pair", "fake", "--no-plot", "--study", "s.toml"]),
            0,
            "results in clvscu-results/good-",
        )
        .after(Setup::DefaultRun),
        case(
            "output folder",
            "a file-size limit (ulimit -f) below the results",
            fake_run(&[]),
            1,
            "File too large",
        )
        .file("s.toml", GOOD)
        .file_size_limit(2048),
    ]
}

fn a(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// `run --pair fake --no-plot --study s.toml --out out` plus `extra`.
fn fake_run(extra: &[&str]) -> Vec<String> {
    let base = [
        "run",
        "--pair",
        "fake",
        "--no-plot",
        "--study",
        "s.toml",
        "--out",
        "out",
    ];
    a(&base).into_iter().chain(a(extra)).collect()
}

fn study_case(what: &'static str, text: String, expect: &'static str) -> Case {
    case("study file", what, fake_run(&[]), 1, expect).file("s.toml", text)
}

fn drop_line(text: &str, needle: &str) -> String {
    let mut gone = false;
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            let hit = !gone && l.contains(needle);
            gone |= hit;
            !hit
        })
        .collect();
    kept.join("\n") + "\n"
}

fn cases() -> Vec<Case> {
    let mut v = vec![
        case(
            "study file",
            "an unknown built-in study",
            a(&["run", "--pair", "fake", "--study", "nosuch"]),
            1,
            "unknown study 'nosuch'",
        ),
        study_case(
            "a TOML syntax error",
            "name = \"x\"\n[[comparison]\n".into(),
            "line 2",
        ),
        study_case(
            "a misspelt key",
            one("sise = \"1x1\""),
            "unknown field `sise`",
        ),
        study_case(
            "an unknown family",
            one("family = \"no-such-family\""),
            "unknown family",
        ),
        study_case(
            "an unknown variant",
            one("").replace("listing2", "listing9"),
            "listing9",
        ),
        study_case("a malformed size", one("size = \"12x\""), "12x"),
        study_case("an empty matrix", one("size = \"0x40\""), "is empty"),
        study_case(
            "a matrix size for a reduction",
            one("family = \"reduce\"\nvariant = \"tuned\"\nsize = \"4x4\""),
            "is a matrix",
        ),
        study_case(
            "a size past 32-bit indices",
            one("size = \"70000x70000\""),
            "32-bit",
        ),
        study_case("work-group size 0", one("local = 0"), "work-group size 0"),
        study_case(
            "a work-group that is not a power of two for a tree",
            one("family = \"reduce\"\nvariant = \"tuned\"\nsize = \"4096\"\nlocal = 96"),
            "not a power of two",
        ),
        study_case(
            "a work-group outside the kernel's range",
            one("variant = \"listing7\"\nlocal = 32"),
            "outside 64..=512",
        ),
        study_case("zero groups", one("groups = 0"), "groups' = 0"),
        study_case(
            "4294967295 repetitions",
            one("reps = 4294967295"),
            "field 'reps' = 4294967295 is above the limit 1000000",
        ),
        study_case(
            "absurd max_reps",
            one("max_reps = 4000000000"),
            "'max_reps' = 4000000000 is above the limit",
        ),
        study_case(
            "absurd warm-up",
            one("warmup = 2000000"),
            "'warmup' = 2000000 is above the limit",
        ),
        study_case(
            "4294967295 groups",
            one("groups = 4294967295"),
            "'groups' = 4294967295 is above the limit 16777216",
        ),
        study_case(
            "a negative minimum time",
            one("min_time = -1.0"),
            "must be a non-negative number",
        ),
        study_case(
            "a NaN minimum time",
            one("min_time = nan"),
            "must be a non-negative number",
        ),
        study_case(
            "a zero watchdog timeout",
            one("timeout = 0.0"),
            "'timeout' = 0 must be a positive",
        ),
        study_case(
            "an unknown timer",
            one("timer = \"fast\""),
            "is not a timer",
        ),
        study_case(
            "an unknown index width",
            one("index = \"u16\""),
            "field 'index': unknown variant `u16`, expected one of u32, u64, native",
        ),
        study_case(
            "an unroll point the kernel lacks",
            one("unroll = { C = 4 }"),
            "no unroll point 'C'",
        ),
        study_case(
            "a define that overrides WG_SIZE",
            one("defines = { WG_SIZE = \"128\" }"),
            "WG_SIZE is the harness's own macro",
        ),
        study_case(
            "a define that overrides an unroll macro",
            one("defines = { UNROLL_A = \"8\" }"),
            "UNROLL_A is the harness's own macro",
        ),
        study_case(
            "a define in the harness's namespace",
            one("defines = { CLVSCU_PRAGMA = \"1\" }"),
            "CLVSCU_PRAGMA is the harness's own macro",
        ),
        study_case(
            "a define that smuggles a flag",
            one("defines = { FOO = \"1 -cl-fast-relaxed-math\" }"),
            "must be a number or an identifier",
        ),
        study_case(
            "a define whose name is not an identifier",
            one("defines = { \"A-B\" = \"1\" }"),
            "'A-B' is not a macro name",
        ),
        study_case(
            "a study with nothing to run",
            "name = \"empty\"\n".into(),
            "there is nothing to run",
        ),
        study_case(
            "two comparisons with one name",
            format!("{}[[comparison]]\nvariant = \"listing2\"\n", one("")),
            "same name",
        ),
        study_case(
            "a blank comparison name",
            one("name = \"  \""),
            "field 'name' is empty",
        ),
        study_case(
            "a sweep without values",
            one("").replace("[[comparison]]", "[[sweep]]") + "param = \"local\"\n",
            "'values' is missing",
        ),
        study_case(
            "a sweep value that is not a number",
            one("").replace("[[comparison]]", "[[sweep]]")
                + "param = \"local\"\nvalues = [\"big\"]\n",
            "is not a whole number",
        ),
        study_case(
            "a per-side table with a sweep key",
            one("[comparison.cuda]\nparam = \"local\""),
            "per-side table cannot hold",
        ),
        case(
            "study file",
            "a study named ../../outside/x (default output folder)",
            a(&["run", "--pair", "fake", "--no-plot", "--study", "s.toml"]),
            0,
            "results in clvscu-results/outside-x-",
        )
        .file(
            "s.toml",
            good_with("").replace("name = \"good\"", "name = \"../../outside/x\""),
        ),
        case(
            "study file",
            "a study named /tmp/abs (default output folder)",
            a(&["run", "--pair", "fake", "--no-plot", "--study", "s.toml"]),
            0,
            "results in clvscu-results/tmp-abs-",
        )
        .file(
            "s.toml",
            good_with("").replace("name = \"good\"", "name = \"/tmp/abs\""),
        ),
        case(
            "study file",
            "a comparison named ../../x drawn as a chart",
            a(&["run", "--pair", "fake", "--study", "s.toml", "--out", "out"]),
            0,
            "charts:",
        )
        .file("s.toml", one("name = \"../../x\"")),
        case(
            "command line",
            "--passes 0",
            fake_run(&["--passes", "0"]),
            2,
            "--passes",
        ),
        case(
            "command line",
            "--timeout 0",
            fake_run(&["--timeout", "0"]),
            2,
            "is not a positive number of seconds",
        ),
        case(
            "command line",
            "--timeout abc",
            fake_run(&["--timeout", "abc"]),
            2,
            "is not a positive number of seconds",
        ),
        case(
            "command line",
            "an unknown --pair",
            a(&["run", "--pair", "bogus", "--study", "s.toml"]),
            2,
            "invalid value 'bogus'",
        ),
        case(
            "command line",
            "an unknown subcommand",
            a(&["frobnicate"]),
            2,
            "unrecognized subcommand",
        ),
        case(
            "command line",
            "inspect --local 0",
            a(&["inspect", "--local", "0"]),
            2,
            "--local",
        ),
        case(
            "command line",
            "--only matching nothing",
            fake_run(&["--only", "zzz"]),
            1,
            "--only 'zzz' matches no comparison",
        )
        .file("s.toml", GOOD),
        case(
            "command line",
            "a missing --kernels-dir (run)",
            fake_run(&["--kernels-dir", "nodir"]),
            1,
            "--kernels-dir nodir: no folder kernels_cl",
        )
        .file("s.toml", GOOD),
        case(
            "command line",
            "a missing --kernels-dir (parity)",
            a(&["parity", "--kernels-dir", "nodir"]),
            1,
            "--kernels-dir nodir: no folder kernels_cl",
        ),
        case(
            "command line",
            "a missing --kernels-dir (inspect)",
            a(&["inspect", "--kernels-dir", "nodir", "--out", "i"]),
            1,
            "--kernels-dir nodir: no folder kernels_cl",
        ),
        case(
            "output folder",
            "--out is a file",
            fake_run(&[]),
            1,
            "cannot use output directory out",
        )
        .file("s.toml", GOOD)
        .file("out", "not a folder"),
        case(
            "output folder",
            "--out below a file",
            a(&[
                "run",
                "--pair",
                "fake",
                "--no-plot",
                "--study",
                "s.toml",
                "--out",
                "f/out",
            ]),
            1,
            "f/out",
        )
        .file("s.toml", GOOD)
        .file("f", "a file"),
        case(
            "output folder",
            "a finished folder run again without --resume",
            fake_run(&[]),
            1,
            "pass --resume to continue it",
        )
        .after(Setup::FinishedRun)
        .keeps_out(),
        case(
            "resume",
            "a complete folder",
            fake_run(&["--resume"]),
            0,
            "2 skipped (resume)",
        )
        .after(Setup::FinishedRun),
        case(
            "resume",
            "another study into the folder",
            fake_run(&["--resume"]),
            1,
            "study: the folder has good, this run has other",
        )
        .after(Setup::FinishedRun)
        .keeps_out(),
        case(
            "resume",
            "an edited size",
            fake_run(&["--resume"]),
            1,
            "resolved study (sizes, settings, comparisons)",
        )
        .after(Setup::FinishedRun)
        .keeps_out(),
        case(
            "resume",
            "another number of passes",
            fake_run(&["--resume", "--passes", "2"]),
            1,
            "passes: the folder has 1, this run has 2",
        )
        .after(Setup::FinishedRun)
        .keeps_out(),
        case(
            "resume",
            "a folder without its folder.json",
            fake_run(&["--resume"]),
            1,
            "no folder.json",
        )
        .after(Setup::Removed("folder.json"))
        .keeps_out(),
        case(
            "resume",
            "a measurement row deleted by hand",
            fake_run(&["--resume"]),
            0,
            "resume: matvec/listing2: 1 of 2 measurement rows; measured again",
        )
        .after(Setup::Edited("measurements.csv", |t| {
            drop_line(t, "matvec/listing2")
        })),
        case(
            "resume",
            "a PR row deleted by hand",
            fake_run(&["--resume"]),
            0,
            "resume: matvec/tuned: 0 PR rows, expected 1; measured again",
        )
        .after(Setup::Edited("prs.csv", |t| drop_line(t, "matvec/tuned"))),
        case(
            "resume",
            "one side's samples deleted by hand",
            fake_run(&["--resume"]),
            0,
            "resume: matvec/listing2: samples of 1 of 2 sides; measured again",
        )
        .after(Setup::Edited("samples.csv", |t| {
            t.lines()
                .filter(|l| !(l.contains("matvec/listing2,B,")))
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        })),
        case(
            "resume",
            "every row written twice (two runs at once, before the lock)",
            fake_run(&["--resume"]),
            0,
            "4 of 2 measurement rows; measured again",
        )
        .after(Setup::Edited("measurements.csv", |t| {
            let body: Vec<&str> = t.lines().skip(1).collect();
            format!("{t}{}\n", body.join("\n"))
        })),
        case(
            "resume",
            "a measurement file with a cut line",
            fake_run(&["--resume"]),
            1,
            "measurements.csv:",
        )
        .after(Setup::Edited("measurements.csv", |t| {
            format!("{t}golden-run,good,half")
        }))
        .keeps_out(),
        case(
            "resume",
            "a measurement file of another kind",
            fake_run(&["--resume"]),
            1,
            "measurements.csv",
        )
        .after(Setup::Edited("measurements.csv", |_| {
            "a,b,c\n1,2,3\n".into()
        }))
        .keeps_out(),
        case(
            "resume",
            "an unreadable folder.json",
            fake_run(&["--resume"]),
            1,
            "folder.json",
        )
        .after(Setup::Edited("folder.json", |_| "{ not json".into()))
        .keeps_out(),
        case(
            "merge",
            "the same file twice",
            a(&["merge", "out/prs.csv", "out/prs.csv", "-o", "m.csv"]),
            1,
            "the same rows twice",
        )
        .after(Setup::FinishedRun),
        case(
            "merge",
            "a NaN PR",
            a(&["merge", "out/prs.csv", "e.csv", "-o", "m.csv"]),
            1,
            "pr = NaN",
        )
        .after(Setup::Edited("prs.csv", |t| replace_field(t, "pr", "NaN"))),
        case(
            "merge",
            "a negative PR",
            a(&["merge", "out/prs.csv", "e.csv", "-o", "m.csv"]),
            1,
            "pr = -1",
        )
        .after(Setup::Edited("prs.csv", |t| replace_field(t, "pr", "-1.0"))),
        case(
            "merge",
            "a NaN metric on a row marked ok",
            a(&["merge", "out/measurements.csv", "e.csv", "-o", "m.csv"]),
            1,
            "metric = NaN",
        )
        .after(Setup::Edited("measurements.csv", |t| {
            replace_field(t, "metric", "NaN")
        })),
        case(
            "merge",
            "the output is one of the inputs",
            a(&["merge", "out/prs.csv", "e.csv", "-o", "out/prs.csv"]),
            1,
            "the output is also one of the inputs",
        )
        .after(Setup::FinishedRun)
        .keeps_out(),
        case(
            "merge",
            "the output exists",
            a(&["merge", "out/prs.csv", "e.csv", "-o", "out/samples.csv"]),
            1,
            "already exists",
        )
        .after(Setup::FinishedRun)
        .keeps_out(),
        case(
            "merge",
            "a foreign CSV",
            a(&["merge", "f.csv", "e.csv", "-o", "m.csv"]),
            1,
            "not a clvscu CSV",
        )
        .file("f.csv", "a,b\n1,2\n"),
        case(
            "merge",
            "one good file",
            a(&["merge", "out/prs.csv", "e.csv", "-o", "m.csv"]),
            0,
            "merged 2 rows",
        )
        .after(Setup::FinishedRun),
        case(
            "plot",
            "a NaN PR",
            a(&["plot", "out", "--out", "c"]),
            0,
            "warning: PR row of matvec/listing2 (run",
        )
        .after(Setup::Edited("prs.csv", |t| replace_field(t, "pr", "NaN"))),
        case(
            "plot",
            "a negative PR",
            a(&["plot", "out", "--out", "c"]),
            0,
            "has PR = -1: drawn as n/a",
        )
        .after(Setup::Edited("prs.csv", |t| replace_field(t, "pr", "-1.0"))),
        case(
            "plot",
            "a folder with no result CSV",
            a(&["plot", "empty", "--out", "c"]),
            1,
            "no result CSV found in empty",
        )
        .file("empty/notes.txt", "nothing"),
        case(
            "plot",
            "a foreign CSV",
            a(&["plot", "f.csv", "--out", "c"]),
            1,
            "f.csv: line 1: not a clvscu CSV",
        )
        .file("f.csv", "a,b\n1,2\n"),
        case(
            "plot",
            "a folder that also holds logs",
            a(&["plot", "out", "--out", "c"]),
            0,
            "pr-",
        )
        .after(Setup::Edited("run.log", |_| "a log\n".into())),
        case(
            "plot",
            "a cut measurement line",
            a(&["plot", "out", "--out", "c"]),
            1,
            "measurements.csv:",
        )
        .after(Setup::Edited("measurements.csv", |t| {
            format!("{t}golden-run,good,half")
        })),
        case("parity", "the shipped twins", a(&["parity"]), 0, "PASS"),
    ];
    // Inputs, bounds and the rest (issue 35).
    v.extend(inputs_bounds_and_the_rest());
    v.extend(issue_49_inputs());
    // Merge takes two inputs or more: the second is a file with a header and no row.
    for c in v.iter_mut().filter(|c| c.class == "merge") {
        let header = if c.args.iter().any(|a| a.contains("measurements")) {
            MeasurementRow::columns().join(",")
        } else {
            PrRow::columns().join(",")
        };
        c.files.push(("e.csv", header + "\n"));
    }
    v.iter_mut()
        .filter(|c| c.class == "resume" && c.what == "another study into the folder")
        .for_each(|c| {
            c.files.push((
                "s.toml",
                GOOD.replace("name = \"good\"", "name = \"other\""),
            ))
        });
    v.iter_mut()
        .filter(|c| c.what == "an edited size")
        .for_each(|c| c.files.push(("s.toml", GOOD.replace("64x40", "128x40"))));
    // Writes, resume and tune (issue 35).
    v.extend(writes_resume_and_tune());
    v
}

/// `tune matvec/tuned` on the fake pair's small space into `out`, plus `extra`.
fn fake_tune(extra: &[&str]) -> Vec<String> {
    let base = [
        "tune",
        "matvec/tuned",
        "--pair",
        "fake",
        "--space",
        "small",
        "--out",
        "out",
        "--no-charts",
    ];
    a(&base).into_iter().chain(a(extra)).collect()
}

/// A finished fake tune in `out/` (its cache is `out/tune-cache.json`).
fn finished_tune(work: &Path) {
    let out = run_in(work, &fake_tune(&[]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The tune cache's checksum of an entry, as clvscu computes it.
fn entry_sum(key: &str, outcome: &serde_json::Value) -> String {
    let text = format!("{key}\n{}", serde_json::to_string(outcome).unwrap());
    Sha256::digest(text.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Sets the first cache entry's times to 1e-12 s; with `sign`, its checksum is made again.
fn fake_a_fast_entry(work: &Path, sign: bool) {
    let path = work.join("out/tune-cache.json");
    let mut cache: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let key = cache["entries"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let entry = &mut cache["entries"][&key];
    let n = entry["times"].as_array().unwrap().len();
    entry["times"] = serde_json::json!(vec![1e-12; n]);
    if sign {
        let sum = entry_sum(&key, &cache["entries"][&key]);
        cache["sums"][&key] = serde_json::json!(sum);
    }
    std::fs::write(&path, serde_json::to_string(&cache).unwrap()).unwrap();
}

/// Rewrites one result CSV of `out/` row by row: `change(comparison, fields, header)` gives
/// the rows that replace each row (none to drop it).
fn rewrite_csv(
    work: &Path,
    file: &str,
    change: impl Fn(&str, &[String], &csv::StringRecord) -> Vec<Vec<String>>,
) {
    let path = work.join("out").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().clone();
    let at = header.iter().position(|c| c == "comparison").unwrap();
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&header).unwrap();
    for record in reader.records() {
        let fields: Vec<String> = record.unwrap().iter().map(str::to_string).collect();
        for row in change(&fields[at].clone(), &fields, &header) {
            writer.write_record(&row).unwrap();
        }
    }
    std::fs::write(path, writer.into_inner().unwrap()).unwrap();
}

const RESULT_CSVS: [&str; 3] = ["measurements.csv", "prs.csv", "samples.csv"];

/// Copies every row of `from` under the name `to`, in all three result files, after
/// dropping `to`'s own rows when `replace`.
fn copy_comparison(work: &Path, from: &str, to: &str, replace: bool) {
    for file in RESULT_CSVS {
        rewrite_csv(work, file, |c, fields, header| {
            let at = header.iter().position(|h| h == "comparison").unwrap();
            let mut renamed = fields.to_vec();
            renamed[at] = to.to_string();
            match c {
                c if c == to && replace => vec![],
                c if c == from => vec![fields.to_vec(), renamed],
                _ => vec![fields.to_vec()],
            }
        });
    }
}

/// Multiplies `column` of `comparison`'s rows in `file` by `factor`.
fn scale(work: &Path, file: &str, comparison: &str, column: &str, factor: f64) {
    rewrite_csv(work, file, |c, fields, header| {
        let mut row = fields.to_vec();
        if c == comparison {
            let i = header.iter().position(|h| h == column).unwrap();
            let v: f64 = row[i].parse().unwrap();
            row[i] = (v * factor).to_string();
        }
        vec![row]
    });
}

/// The shipped kernels copied to `k/`, with OpenCL's matvec edited when `edit`.
fn copy_kernels(work: &Path, edit: bool) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for folder in ["kernels_cl", "kernels_cu"] {
        let to = work.join("k").join(folder);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(root.join(folder)).unwrap().flatten() {
            let mut text = std::fs::read_to_string(e.path()).unwrap();
            if edit && e.file_name() == "matvec.cl" {
                text.push_str("\n// one more line\n");
            }
            std::fs::write(to.join(e.file_name()), text).unwrap();
        }
    }
}

fn writes_resume_and_tune() -> Vec<Case> {
    let tune_cache_link = |what: &'static str, extra: &'static [&'static str], at, code, expect| {
        case("tune", what, fake_tune(extra), code, expect).link(at, "victim")
    };
    vec![
        case(
            "output folder",
            "the lock is a link to another file",
            fake_run(&[]),
            1,
            "out/.clvscu.lock: is a symbolic link",
        )
        .file("s.toml", GOOD)
        .link("out/.clvscu.lock", "victim"),
        case(
            "output folder",
            "a link where folder.json's temporary would go",
            fake_run(&[]),
            1,
            "out/folder.json.tmp: is a symbolic link",
        )
        .file("s.toml", GOOD)
        .link("out/folder.json.tmp", "victim"),
        case(
            "output folder",
            "measurements.csv a link in a fresh folder",
            fake_run(&[]),
            1,
            "out/measurements.csv: is a symbolic link",
        )
        .file("s.toml", GOOD)
        .link("out/measurements.csv", "victim"),
        case(
            "output folder",
            "charts/ a link to another folder",
            a(&["run", "--pair", "fake", "--study", "s.toml", "--out", "out"]),
            1,
            "out/charts: is a symbolic link",
        )
        .file("s.toml", GOOD)
        .link("out/charts", "elsewhere"),
        case(
            "resume",
            "a link planted in a finished folder",
            fake_run(&["--resume"]),
            1,
            "out/samples.csv.tmp: is a symbolic link",
        )
        .after(Setup::FinishedRun)
        .link("out/samples.csv.tmp", "victim")
        .keeps_out(),
        case(
            "output folder",
            "no lock is left after a finished run",
            fake_run(&[]),
            0,
            "0 failed",
        )
        .file("s.toml", GOOD)
        .absent("out/.clvscu.lock"),
        case(
            "output folder",
            "a lock left by a killed run",
            fake_run(&[]),
            0,
            "0 failed",
        )
        .file("s.toml", GOOD)
        .file("out/.clvscu.lock", "pid 999999 on gone since 2020-01-01")
        .absent("out/.clvscu.lock"),
        case(
            "output folder",
            "a folder where the lock goes",
            fake_run(&[]),
            1,
            "out/.clvscu.lock: is not a regular file",
        )
        .file("s.toml", GOOD)
        .file("out/.clvscu.lock/x", "x"),
        case(
            "merge",
            "a link where the output's temporary would go",
            a(&["merge", "out/prs.csv", "e.csv", "-o", "m.csv"]),
            0,
            "merged 2 rows",
        )
        .after(Setup::FinishedRun)
        .file("e.csv", PrRow::columns().join(",") + "\n")
        .link("m.csv.tmp", "victim"),
        case(
            "plot",
            "a link in the chart folder",
            a(&["plot", "out", "--out", "c"]),
            1,
            "c/pr-good.png: is a symbolic link",
        )
        .after(Setup::FinishedRun)
        .link("c/pr-good.png", "victim"),
        case(
            "report",
            "a link where report.md goes",
            a(&["report", "out", "--out", "r"]),
            1,
            "r/report.md: is a symbolic link",
        )
        .after(Setup::FinishedRun)
        .link("r/report.md", "victim"),
        case(
            "report",
            "charts/ of the report a link to another folder",
            a(&["report", "out", "--out", "r"]),
            1,
            "r/charts: is a symbolic link",
        )
        .after(Setup::FinishedRun)
        .link("r/charts", "elsewhere"),
        case(
            "diff",
            "a link where diff.md goes",
            a(&["diff", "out", "out", "--out", "d"]),
            1,
            "d/diff.md: is a symbolic link",
        )
        .after(Setup::FinishedRun)
        .link("d/diff.md", "victim"),
        case(
            "resume",
            "a metric multiplied by 1000",
            fake_run(&["--resume"]),
            1,
            "comparison matvec/listing2: its rows disagree with its samples: OpenCL metric",
        )
        .after(Setup::Then(|w| {
            scale(w, "measurements.csv", "matvec/listing2", "metric", 1000.0)
        }))
        .keeps_out(),
        case(
            "resume",
            "a PR edited to 2.0",
            fake_run(&["--resume"]),
            1,
            "its rows disagree with its samples: PR 2,",
        )
        .after(Setup::Edited("prs.csv", |t| replace_field(t, "pr", "2.0")))
        .keeps_out(),
        case(
            "resume",
            "half the samples deleted",
            fake_run(&["--resume"]),
            1,
            "comparison matvec/listing2: its rows",
        )
        .after(Setup::Then(|w| {
            rewrite_csv(w, "samples.csv", |c, fields, header| {
                let rep = header.iter().position(|h| h == "rep").unwrap();
                let odd = fields[rep].parse::<u32>().unwrap() % 2 == 1;
                if c == "matvec/listing2" && odd {
                    vec![]
                } else {
                    vec![fields.to_vec()]
                }
            })
        }))
        .keeps_out(),
        case(
            "resume",
            "a sample's time edited",
            fake_run(&["--resume"]),
            1,
            "comparison matvec/tuned: its rows",
        )
        .after(Setup::Then(|w| {
            scale(w, "samples.csv", "matvec/tuned", "seconds", 0.5)
        }))
        .keeps_out(),
        case(
            "resume",
            "a device name edited",
            fake_run(&["--resume"]),
            1,
            "its rows were changed after they were written",
        )
        .after(Setup::Edited("measurements.csv", |t| {
            t.replacen("fake OpenCL device", "fake OpenCL devise", 1)
        }))
        .keeps_out(),
        case(
            "resume",
            "rows copied under a comparison that never ran",
            fake_run(&["--resume"]),
            1,
            "comparison matvec/ghost: no run of this folder wrote it",
        )
        .after(Setup::Then(|w| {
            copy_comparison(w, "matvec/listing2", "matvec/ghost", false)
        }))
        .keeps_out(),
        case(
            "resume",
            "one comparison's rows copied over another's",
            fake_run(&["--resume"]),
            1,
            "comparison matvec/tuned: its rows were changed after they were written",
        )
        .after(Setup::Then(|w| {
            copy_comparison(w, "matvec/listing2", "matvec/tuned", true)
        }))
        .keeps_out(),
        case(
            "resume",
            "an edited kernel (--kernels-dir)",
            fake_run(&["--resume", "--kernels-dir", "k"]),
            1,
            "kernel file kernels_cl/matvec.cl: the folder has hash",
        )
        .after(Setup::Then(|w| copy_kernels(w, true)))
        .keeps_out(),
        case(
            "resume",
            "the same kernels from a folder (--kernels-dir)",
            fake_run(&["--resume", "--kernels-dir", "k"]),
            0,
            "2 skipped (resume)",
        )
        .after(Setup::Then(|w| copy_kernels(w, false))),
        case(
            "resume",
            "a comparison's hash deleted from folder.json",
            fake_run(&["--resume"]),
            1,
            "comparison matvec/tuned: no run of this folder wrote it",
        )
        .after(Setup::Then(|w| {
            let path = w.join("out/folder.json");
            let mut id: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            id["rows"].as_object_mut().unwrap().remove("matvec/tuned");
            std::fs::write(path, serde_json::to_string(&id).unwrap()).unwrap();
        }))
        .keeps_out(),
        case(
            "tune",
            "a cache entry edited to 1e-12 s",
            fake_tune(&[]),
            1,
            "does not match its checksum",
        )
        .after(Setup::Prepared(|w| {
            finished_tune(w);
            fake_a_fast_entry(w, false);
        }))
        .keeps_out(),
        case(
            "tune",
            "a cache entry edited to 1e-12 s and signed again",
            fake_tune(&[]),
            0,
            "implausible, never taken as best",
        )
        .after(Setup::Prepared(|w| {
            finished_tune(w);
            fake_a_fast_entry(w, true);
        })),
        case(
            "tune",
            "a cache without checksums (an older cache)",
            fake_tune(&[]),
            0,
            "32 entries of out/tune-cache.json have no checksum (an older cache): measured again",
        )
        .after(Setup::Prepared(|w| {
            finished_tune(w);
            let path = w.join("out/tune-cache.json");
            let mut cache: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            cache.as_object_mut().unwrap().remove("sums");
            std::fs::write(path, serde_json::to_string(&cache).unwrap()).unwrap();
        })),
        tune_cache_link(
            "a link in the output folder",
            &[],
            "out/tune-cache.json",
            1,
            "out/tune-cache.json: is a symbolic link",
        ),
        tune_cache_link(
            "the cache's lock a link (--cache)",
            &["--cache", "c.json"],
            ".c.json.lock",
            1,
            ".c.json.lock: is a symbolic link",
        ),
        tune_cache_link(
            "a link where the cache's temporary would go (--cache)",
            &["--cache", "c.json"],
            "c.json.tmp",
            0,
            "tuning matvec/tuned on fake CUDA device (CUDA)",
        )
        .absent(".c.json.lock"),
    ]
}

/// Sets one column of every data row of a CSV text to `value`.
fn replace_field(text: &str, column: &str, value: &str) -> String {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().clone();
    let i = header.iter().position(|c| c == column).unwrap();
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&header).unwrap();
    for record in reader.records() {
        let mut fields: Vec<String> = record.unwrap().iter().map(str::to_string).collect();
        fields[i] = value.to_string();
        writer.write_record(&fields).unwrap();
    }
    String::from_utf8(writer.into_inner().unwrap()).unwrap()
}

/// What a planted link's target holds; it must still hold it after the command.
const VICTIM: &str = "victim\n";

/// Plants `links` in `work`, each pointing at `victim` (a file) or `elsewhere` (a folder).
fn plant_links(work: &Path, links: &[(&str, &str)]) {
    if links.is_empty() {
        return;
    }
    std::fs::write(work.join("victim"), VICTIM).unwrap();
    std::fs::create_dir_all(work.join("elsewhere")).unwrap();
    for (at, to) in links {
        let at = work.join(at);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(work.join(to), &at).unwrap();
    }
}

/// Nothing was written through a planted link: the victim file is as it was and the
/// `elsewhere` folder is empty.
fn assert_targets_untouched(work: &Path, links: &[(&str, &str)], label: &str) {
    if links.is_empty() {
        return;
    }
    let victim = std::fs::read_to_string(work.join("victim")).unwrap_or_default();
    assert_eq!(victim, VICTIM, "{label} wrote through a link");
    let written = std::fs::read_dir(work.join("elsewhere")).unwrap().count();
    assert_eq!(written, 0, "{label} wrote into a linked folder");
}

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("clvscu")
}

fn run_in(dir: &Path, args: &[String]) -> std::process::Output {
    run_limited(dir, args, None, None)
}

/// The longest a case may run: a command that blocks (on a FIFO, say) fails its case instead
/// of hanging the test.
const CASE_LIMIT: Duration = Duration::from_secs(120);

/// Runs the binary in `dir`, under a file-size limit where one is given, for at most
/// [`CASE_LIMIT`].
fn run_limited(
    dir: &Path,
    args: &[String],
    file_size: Option<u64>,
    env: Option<(&str, &str)>,
) -> std::process::Output {
    let mut cmd = Command::new(bin());
    if let Some((name, value)) = env {
        cmd.env(name, value);
    }
    cmd.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(bytes) = file_size {
        // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                let limit = libc::rlimit {
                    rlim_cur: bytes,
                    rlim_max: bytes,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().unwrap();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > CASE_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "clvscu {} ran past {CASE_LIMIT:?} (blocked?)",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn default_run(work: &Path) {
    std::fs::write(work.join("s.toml"), GOOD).unwrap();
    let args = a(&["run", "--pair", "fake", "--no-plot", "--study", "s.toml"]);
    let out = run_in(work, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn make_fifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

fn finished_run(work: &Path) {
    std::fs::write(work.join("s.toml"), GOOD).unwrap();
    let out = run_in(work, &fake_run(&[]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every file below `dir` with its SHA-256, the lock file aside.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == ".clvscu.lock") {
                // The lock names whoever holds it; it is no result.
            } else if !e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()) {
                // A FIFO a case planted: reading it would wait for a writer forever.
                files.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    "not a file".into(),
                );
            } else {
                let bytes = std::fs::read(&p).unwrap_or_default();
                let h: String = Sha256::digest(bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                files.insert(p.strip_prefix(dir).unwrap().to_path_buf(), h);
            }
        }
    }
    files
}

/// The command's arguments as a shell line: an empty or blank one quoted, so it shows.
fn shown_args(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if a.trim().is_empty() {
                format!("'{a}'")
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The message a person reads: stderr, else stdout, with the temporary path taken out.
fn message(out: &std::process::Output, root: &Path) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    let text = if err.trim().is_empty() {
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        err.into_owned()
    };
    text.replace(&root.display().to_string(), "$TMP")
}

/// The line of `message` that holds `expect`, else its first line, for the table.
fn shown_line(message: &str, expect: &str) -> String {
    let line = message
        .lines()
        .find(|l| l.contains(expect))
        .or_else(|| message.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("")
        .trim();
    // The run stamp in default folder names changes every second, and a second run in the
    // same second adds `-2`.
    let line = match line.find("clvscu-results/") {
        Some(i) => {
            let rest = &line[i..];
            let end = rest.rfind('-').map_or(rest.len(), |j| j + 1);
            let end = match rest[..end.saturating_sub(1)].rfind('-') {
                Some(j) if rest[end..].bytes().all(|b| b.is_ascii_digit()) => j + 1,
                _ => end,
            };
            format!("{}{}<timestamp>", &line[..i], &rest[..end])
        }
        None => line.to_string(),
    };
    without_run_ids(&line).replace('|', "\\|")
}

/// Replaces run ids (`20261122T143900Z-<commit>`, lower case in file names), which change
/// with the second and the commit, by `<run-id>`.
fn without_run_ids(text: &str) -> String {
    let b = text.as_bytes();
    let is_stamp = |i: usize| {
        b.len() >= i + 17
            && b[i..i + 8].iter().all(u8::is_ascii_digit)
            && b[i + 8].eq_ignore_ascii_case(&b'T')
            && b[i + 9..i + 15].iter().all(u8::is_ascii_digit)
            && b[i + 15].eq_ignore_ascii_case(&b'Z')
            && b[i + 16] == b'-'
    };
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if is_stamp(i) {
            let mut j = i + 17;
            while j < b.len()
                && (b[j].is_ascii_hexdigit() || b[j] == b'-' || b[j].is_ascii_alphabetic())
            {
                j += 1;
            }
            out.push_str("<run-id>");
            i = j;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

#[test]
fn every_bad_input_and_fault_has_its_exit_code_and_message_and_harms_nothing() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut table = String::new();
    for (n, c) in cases.iter().enumerate() {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        match c.setup {
            Setup::Nothing => {}
            Setup::FinishedRun => finished_run(&work),
            Setup::Removed(file) => {
                finished_run(&work);
                std::fs::remove_file(work.join("out").join(file)).unwrap();
            }
            Setup::Edited(file, edit) => {
                finished_run(&work);
                let path = work.join("out").join(file);
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                std::fs::write(&path, edit(&text)).unwrap();
            }
            Setup::Prepared(prepare) => prepare(&work),
            Setup::Then(change) => {
                finished_run(&work);
                change(&work);
            }
            Setup::Fifo(name) => make_fifo(&work.join(name)),
            Setup::Symlink(name, target) => {
                std::os::unix::fs::symlink(target, work.join(name)).unwrap()
            }
            Setup::DefaultRun => default_run(&work),
        }
        for (name, text) in &c.files {
            let p = work.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        plant_links(&work, &c.links);
        let before = snapshot(&work.join("out"));
        let out = run_limited(&work, &c.args, c.file_size_limit, c.env);
        let msg = message(&out, root.path());
        let label = format!("case {} ({}: {})", n + 1, c.class, c.what);
        assert!(!msg.contains("panicked"), "{label} panicked:\n{msg}");
        // Study text reaches the terminal escaped: no escape sequence in either stream.
        assert!(
            !out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b),
            "{label} wrote an escape sequence to the terminal:\n{msg}"
        );
        assert_eq!(out.status.code(), Some(c.code), "{label}:\n{msg}");
        assert!(
            msg.contains(c.expect),
            "{label}: no '{}' in:\n{msg}",
            c.expect
        );
        let outside: Vec<_> = std::fs::read_dir(root.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != "work")
            .collect();
        assert!(
            outside.is_empty(),
            "{label} wrote outside its folder: {outside:?}"
        );
        assert_targets_untouched(&work, &c.links, &label);
        for p in &c.absent {
            assert!(
                std::fs::symlink_metadata(work.join(p)).is_err(),
                "{label} left {p} behind"
            );
        }
        if c.keeps_out {
            assert_eq!(
                snapshot(&work.join("out")),
                before,
                "{label} changed the results folder"
            );
        }
        let env = c.env.map(|(k, v)| format!("{k}={v} ")).unwrap_or_default();
        table.push_str(&format!(
            "| {} | {} | {} | `{env}clvscu {}` | {} | {} |\n",
            n + 1,
            c.class,
            c.what,
            shown_args(&c.args),
            c.code,
            shown_line(&msg, c.expect)
        ));
    }
    let doc = format!(
        "# Bad input and faults\n\n\
         Generated by `tests/reliability_table.rs` (`CLVSCU_BLESS=1 cargo test --test \
         reliability_table` rewrites it). Each case runs the binary in a fresh folder, with no \
         OpenCL or CUDA (the hidden fake pair stands in for devices). Every case is checked for \
         its exit code and its message, for no panic, for no file written outside its folder, \
         where the command refuses a results folder, for no change to that folder, and, where a \
         link is planted, for nothing written through it. \
         {} cases: 0 panics, 0 writes outside, 0 silent data changes.\n\n\
         Exit codes: 0 success; 1 error; 2 usage error; 3 some configuration failed; 4 a launch \
         hung past its watchdog limit; 130 interrupted.\n\n\
         | # | class | case | command | exit | message |\n|---|---|---|---|---|---|\n{table}\n\
         Faults of a running process are tested by their own tests, on PoCL where they need a \
         device: a kernel that never ends, stopped by the watchdog (exit 4) and by Ctrl-C (exit \
         130) with every finished comparison kept, and two runs on one folder (the second names \
         the first's process), a run whose lock is deleted (it stops; a resume completes), tunes \
         sharing one cache (no entry lost) and a tune stuck in a kernel (watchdog and Ctrl-C) in \
         `tests/faults.rs`; Ctrl-C, SIGKILL and a full disk mid-run, \
         each followed by a resume that completes without a duplicate row, in \
         `tests/reliability.rs`; a 200,000-row PR file charted under a 1 GiB address-space \
         limit in `tests/faults.rs`; problems past PoCL's memory, its largest allocation or the \
         one pool its device shares with the host (exit 1), each refused before its inputs \
         are made with at most 2 GB held, in `tests/opencl_pocl.rs`.\n",
        cases.len()
    );
    // The README quotes the count: it must be this table's, never a hand-kept number.
    let readme = include_str!("../README.md")
        .split_whitespace()
        .collect::<Vec<_>>();
    let quoted = format!("table of {} bad inputs", cases.len());
    assert!(
        readme.join(" ").contains(&quoted),
        "README.md must say `{quoted}` (the number of cases in docs/reliability.md)"
    );
    if std::env::var("CLVSCU_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(DOC, &doc).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(DOC).unwrap_or_default();
    assert!(
        committed == doc,
        "docs/reliability.md is not what the cases give; rerun with CLVSCU_BLESS=1 and review the diff"
    );
}
