#!/usr/bin/env bash
# The test command: formatting, lints, and every test (OpenCL kernels execute on the OpenCL
# device, CUDA kernels compile with NVRTC). Installs PoCL, NVRTC and Chromium first when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-env.sh
# The HTML report's browser test (an ignored test, run here with --include-ignored) opens the
# pages in headless Chromium.
if ! command -v chromium >/dev/null 2>&1; then
    echo "installing Chromium (about 350 MB; a headless browser for the HTML report test) ..." >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq chromium >/dev/null
fi
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
# The library builds without the command line's crates (clap, anyhow, ctrlc, indicatif).
cargo check --lib --locked --no-default-features
# Every link in the library's docs resolves (a renamed or moved item breaks it).
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --lib --locked --quiet
# --nocapture shows what ran: "OpenCL executed and verified N ..." / "NVRTC compiled N ...".
# Tests named `on_gpu_` need an NVIDIA GPU and run on one (tests/on_gpu.rs says how).
# --no-fail-fast runs every test file even after one fails; the summary below lists each
# file's result, and the script still exits non-zero when any failed.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
cargo test --release --locked --all-targets --no-fail-fast -- --nocapture --test-threads=2 \
    --include-ignored --skip on_gpu_ 2>&1 | tee "$log" || status=$?
echo
echo "summary, one line per test binary:"
# A binary that crashed has no result line: it shows as "no result".
awk '/^ +Running /{ if (bin) print "  " bin ": no result"; bin = ($2 == "unittests") ? $3 : $2 }
     /^test result: /{ sub(/^test result: /, ""); print "  " bin ": " $0; bin = "" }
     END { if (bin) print "  " bin ": no result" }' "$log"
if [ "$status" -ne 0 ]; then
    echo "FAILED: $(grep -c '^test result: FAILED' "$log" || true) test binaries had failures" >&2
fi
exit "$status"
