#!/usr/bin/env bash
# The gate's proof on a GPU runner with SGLang (issue 10, point 8): record a calibrated
# baseline, gate three fresh boots (green), then /slow_down regressions of growing size until
# the gate catches one (red). The logic and its knobs are in lab/gpu/gpu_gate_proof.py.
#
#   lab/gpu/gpu-gate-proof.sh OUT_DIR mtp|ngram [record,gate]
#   BACKEND=sim RUNGS=0.0008,0.0016 lab/gpu/gpu-gate-proof.sh /tmp/proof mtp   # dry run, no GPU
#
# On the project's lent H200 (no network; the SGLang 0.5.12 bundle parts in /tmp/stash and
# the test wheels in .whl/, as for lab/gpu/gpu-smoke-on-lent-h200.sh): LENT_H200=1.
set -euo pipefail
out=${1:?usage: lab/gpu/gpu-gate-proof.sh OUT_DIR mtp|ngram [record,gate]}
profile=${2:?usage: lab/gpu/gpu-gate-proof.sh OUT_DIR mtp|ngram [record,gate]}
mkdir -p "$out"
source "$(dirname "$0")/_lent_gpu.sh"
lent_gpu_banner
"$python" lab/gpu/gpu_gate_proof.py "$out" "$profile" "${3:-record,gate}"
sglang_left "$out/summary.md"
