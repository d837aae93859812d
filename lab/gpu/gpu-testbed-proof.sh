#!/usr/bin/env bash
# Issue 38's testbed measurements on a GPU runner with SGLang: CPU placement choices, the
# nightly against the committed baseline with the testbed fingerprint and GPU-busy columns, and
# the seed-class point meant to be GPU-bound. Phases, knobs and device-second estimates:
# lab/gpu/gpu_testbed_proof.py (placement about 850 s, nightly 150-250 s, seedpoint about 700 s
# on a warm H200; run the long ones in the background across calls).
#
#   lab/gpu/gpu-testbed-proof.sh OUT_DIR placement|nightly|seedpoint|bounds
#   BACKEND=sim lab/gpu/gpu-testbed-proof.sh /tmp/testbed placement   # dry run on the simulator
#
# On the project's lent H200 (no network; the SGLang 0.5.12 bundle parts in /tmp/stash, the
# wheels the image lacks in .whl/, as for lab/gpu/gpu-gate-proof.sh, nvidia-ml-py's among
# them for the GPU fields): LENT_H200=1. Output: OUT_DIR/testbed-proof-PHASE.tar.gz, its
# summary.md printed as the phase goes.
set -euo pipefail
usage="usage: lab/gpu/gpu-testbed-proof.sh OUT_DIR placement|nightly|seedpoint|bounds"
out=${1:?$usage}
phase=${2:?$usage}
source "$(dirname "$0")/_lent_gpu.sh"
lent_gpu_proof_start testbed "$out" "$phase"
mkdir -p "$work/$phase"
# Whether the GPU fields can be filled here (nvidia-ml-py and a driver), said up front.
{ "$python" -c 'import pynvml; pynvml.nvmlInit(); print("driver", pynvml.nvmlSystemGetDriverVersion())' \
  2>&1 || true; } | tail -1 | sed 's/^/NVML: /' | tee "$work/$phase/nvml.txt"
"$python" lab/gpu/gpu_testbed_proof.py "$work" "$phase" || echo "gpu_testbed_proof.py exited $?"
lent_gpu_proof_end testbed
