#!/usr/bin/env bash
# The gate's proof on a GPU runner with SGLang (issue 10, point 8): record a calibrated
# baseline, gate three fresh boots (green), then /slow_down regressions of growing size until
# the gate catches one (red). The logic and its knobs are in scripts/gpu_gate_proof.py.
#
#   scripts/gpu-gate-proof.sh OUT_DIR mtp|ngram [record,gate]
#   BACKEND=sim RUNGS=0.0008,0.0016 scripts/gpu-gate-proof.sh /tmp/proof mtp   # dry run, no GPU
#
# On the project's lent H200 (no network; the SGLang 0.5.12 bundle parts in /tmp/stash and
# the test wheels in .whl/, as for scripts/gpu-smoke-on-lent-h200.sh): LENT_H200=1.
set -euo pipefail
out=${1:?usage: scripts/gpu-gate-proof.sh OUT_DIR mtp|ngram [record,gate]}
profile=${2:?usage: scripts/gpu-gate-proof.sh OUT_DIR mtp|ngram [record,gate]}
mkdir -p "$out"
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
"$python" scripts/gpu_gate_proof.py "$out" "$profile" "${3:-record,gate}"
left=$(pgrep -fc 'sglang.launch_server|sglang::' || true)
echo "sglang processes left: ${left:-0}" | tee -a "$out/summary.md"
