#!/usr/bin/env bash
# The seed-class profile (qwen3-next-real-width-fp8-mtp) on a GPU runner: noise within and
# between boots, and the depth trade-off with simulated acceptance. Steps and knobs:
# lab/gpu/gpu_seed_class.py. Each call runs the steps it is given (one boot each) and leaves
# everything measured so far, plus summary.md, in STATE (default /tmp/seed-class), and a tar
# of it in OUT_DIR, so a run cut short still returns what it measured.
#
#   lab/gpu/gpu-seed-class.sh OUT_DIR d3 d0            # one boot at depth 3, one at depth 0
#   BACKEND=sim lab/gpu/gpu-seed-class.sh /tmp/out d3  # dry run on the simulator
#
# On the project's lent H200 (no network; the SGLang 0.5.12 bundle parts in /tmp/stash):
# LENT_H200=1.
set -euo pipefail
out=${1:?usage: lab/gpu/gpu-seed-class.sh OUT_DIR STEP [STEP ...]}
shift
state=${STATE:-/tmp/seed-class}
mkdir -p "$out" "$state"
source "$(dirname "$0")/_lent_gpu.sh"
lent_gpu_banner | tee "$state/gpu.txt"
"$python" lab/gpu/gpu_seed_class.py "$state" "$@" || echo "gpu_seed_class.py exited $?"
sglang_left "$state/steps.txt"
tar -C "$(dirname "$state")" -czf "$out/seed-class.tar.gz" "$(basename "$state")"
