#!/usr/bin/env bash
# The test command: formatting, lints, and every test (OpenCL kernels execute on the OpenCL
# device, CUDA kernels compile with NVRTC). Installs PoCL and NVRTC first when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-env.sh
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
# --nocapture shows what ran: "OpenCL executed and verified N ..." / "NVRTC compiled N ...".
cargo test --release --locked --all-targets -- --nocapture --test-threads=2 --include-ignored
