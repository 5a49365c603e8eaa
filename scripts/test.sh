#!/usr/bin/env bash
# The test command: formatting, lints, and every test (OpenCL kernels execute on the OpenCL
# device, CUDA kernels compile with NVRTC). Installs PoCL, NVRTC and Chromium first when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-env.sh
# The HTML report's browser test (an ignored test, run here with --include-ignored) opens the
# pages in headless Chromium.
if ! command -v chromium >/dev/null 2>&1; then
    echo "installing Chromium (headless browser for the HTML report test) ..." >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
# --nocapture shows what ran: "OpenCL executed and verified N ..." / "NVRTC compiled N ...".
# Tests named `on_gpu_` need an NVIDIA GPU and run on one (tests/on_gpu.rs says how).
cargo test --release --locked --all-targets -- --nocapture --test-threads=2 --include-ignored --skip on_gpu_
