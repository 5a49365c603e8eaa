#!/usr/bin/env bash
# The main job: install what is missing, build, and run the default comparison on whatever
# devices exist (PoCL's CPU device when there is no GPU), writing CSV under clvscu-results/.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-env.sh
cargo build --release --locked
exec ./target/release/clvscu run "$@"
