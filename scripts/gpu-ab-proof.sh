#!/usr/bin/env bash
# A/B mode's proof on a GPU runner with SGLang (issue 19): one comparison per call, each
# sized by BUDGET_S (base and head booted one after the other, short points, pairs from the budget).
# The logic and its knobs are in scripts/gpu_ab_proof.py.
#
#   scripts/gpu-ab-proof.sh OUT_DIR aa|slow5|slow10|flag
#   BACKEND=sim PROFILE=smoke-tiny-qwen3-ngram scripts/gpu-ab-proof.sh /tmp/ab aa   # dry run
#
# On the project's lent H200 (no network; the SGLang 0.5.12 bundle parts in /tmp/stash and
# the test wheels in .whl/, as for scripts/gpu-gate-proof.sh): LENT_H200=1. The phase's
# output ends as one tar, OUT_DIR/ab-proof-PHASE.tar.gz; its summary is printed.
set -euo pipefail
out=${1:?usage: scripts/gpu-ab-proof.sh OUT_DIR aa|slow5|slow10|flag}
phase=${2:?usage: scripts/gpu-ab-proof.sh OUT_DIR aa|slow5|slow10|flag}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export SPECPERF_MODEL_CACHE=${SPECPERF_MODEL_CACHE:-/tmp/specperf-model-cache}
if [[ -n ${LENT_H200:-} ]]; then
  mkdir -p /tmp/site /tmp/site-test
  [[ -d /tmp/site/sglang ]] || cat /tmp/stash/part.* | xz -dc | tar -x -C /tmp/site
  # Wheels the image lacks (the history store's sqlalchemy, alembic, ruptures), when carried.
  if compgen -G '.whl/*.whl' >/dev/null && [[ ! -e /tmp/site-test/.installed ]]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
      --target /tmp/site-test .whl/*.whl && touch /tmp/site-test/.installed
  fi
  export PYTHONPATH=/tmp/site:/tmp/site-test:$PWD
fi
python=${PYTHON:-python3}
if [[ ${BACKEND:-sglang} == sglang ]]; then
  echo "GPUs: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | paste -sd';')"
  echo "sglang $("$python" -c 'import sglang; print(sglang.__version__)' 2>&1 | tail -1)"
fi
work=${WORK_DIR:-/tmp/specperf-ab-proof}
rm -rf "${work:?}/$phase"
"$python" scripts/gpu_ab_proof.py "$work" "$phase"
left=$(pgrep -fc 'sglang.launch_server|sglang::' || true)
echo "sglang processes left: ${left:-0}" | tee -a "$work/$phase/summary.md"
tar -czf "$out/ab-proof-$phase.tar.gz" -C "$work" "$phase"
echo "output: $out/ab-proof-$phase.tar.gz"
