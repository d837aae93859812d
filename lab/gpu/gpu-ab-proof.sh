#!/usr/bin/env bash
# A/B mode's proof on a GPU runner with SGLang (issue 19): one comparison per call, each
# sized by BUDGET_S (base and head booted one after the other, short points, pairs from the budget).
# The logic and its knobs are in lab/gpu/gpu_ab_proof.py.
#
#   lab/gpu/gpu-ab-proof.sh OUT_DIR aa|slow5|slow10|flag
#   BACKEND=sim PROFILE=smoke-tiny-qwen3-ngram lab/gpu/gpu-ab-proof.sh /tmp/ab aa   # dry run
#
# On the project's lent H200 (no network; the SGLang 0.5.12 bundle parts in /tmp/stash and
# the test wheels in .whl/, as for lab/gpu/gpu-gate-proof.sh): LENT_H200=1. The phase's
# output ends as one tar, OUT_DIR/ab-proof-PHASE.tar.gz; its summary is printed.
set -euo pipefail
out=${1:?usage: lab/gpu/gpu-ab-proof.sh OUT_DIR aa|slow5|slow10|flag}
phase=${2:?usage: lab/gpu/gpu-ab-proof.sh OUT_DIR aa|slow5|slow10|flag}
source "$(dirname "$0")/_lent_gpu.sh"
lent_gpu_proof_start ab "$out" "$phase"
"$python" lab/gpu/gpu_ab_proof.py "$work" "$phase"
lent_gpu_proof_end ab
