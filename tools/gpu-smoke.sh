#!/usr/bin/env bash
# Smoke run of pytest-specperf's real path on a GPU runner with SGLang installed.
#
#   tools/gpu-smoke.sh OUT_DIR [mtp|ngram|all]
#
# mtp:   tiny Qwen3-Next (MTP via NEXTN, FP8) at depths 1 and 3: record baselines for this
#        hardware, run again and pass against them, inject a regression with SGLang's
#        /slow_down (--specperf-inject-slowdown) and expect the floors to fail.
# ngram: tiny dense Qwen3 with NGRAM drafts (several tokens per chunk): record, then pass.
# After each phase: count SGLang processes left (must be 0) and save the artifacts.
# Baselines are written into ./baselines; outputs, logs and results under OUT_DIR.
set -uo pipefail
out=${1:?usage: tools/gpu-smoke.sh OUT_DIR [mtp|ngram|all]}
which=${2:-all}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export SPECPERF_MODEL_CACHE=${SPECPERF_MODEL_CACHE:-/tmp/specperf-model-cache}
python=${PYTHON:-python3}
# -p loads the plugin where the package is on PYTHONPATH rather than pip-installed; an
# installed plugin registers itself, and pytest refuses to load it a second time.
plugin=(-p pytest_specperf.plugin)
"$python" -c 'import importlib.metadata as m, sys; sys.exit(not any(e.value.startswith("pytest_specperf") for e in m.entry_points(group="pytest11")))' && plugin=()
pytest_cmd=("$python" -m pytest "${plugin[@]}" -p no:cacheprovider -rsf)
# The sweeps: MTP_SWEEP / NGRAM_SWEEP override them. NGRAM's tiny model streams ~2,000 tok/s
# per request, so it needs 2048-token requests for points long enough to be stable: with 256
# tokens (points of 0.4-0.7 s) a second boot measured up to 27% below the first.
read -r -a mtp_sweep <<< "${MTP_SWEEP:---specperf-concurrency=1,4,16 --specperf-max-new-tokens=256}"
read -r -a ngram_sweep <<< "${NGRAM_SWEEP:---specperf-concurrency=1,4,16 --specperf-max-new-tokens=2048}"
summary="$out/summary.txt"
start=$(date +%s)

log() { echo "[$(( $(date +%s) - start ))s] $*" | tee -a "$summary"; }

leftovers() {
  local n
  n=$(pgrep -fc 'sglang.launch_server|sglang::' || true)
  log "sglang processes left after $1: ${n:-0}"
  pgrep -fa 'sglang.launch_server|sglang::' >> "$summary" || true
}

archive() {  # SMOKE_ARCHIVE=file.tgz: keep an up-to-date archive of everything after each phase
  [[ -n ${SMOKE_ARCHIVE:-} ]] && tar -czf "$SMOKE_ARCHIVE" "$out" baselines 2>/dev/null
  return 0
}

phase() {  # phase NAME EXPECT(pass|fail) ARGS...
  local name=$1 expect=$2; shift 2
  # SMOKE_BUDGET_S: skip a phase that could not finish in the time left (a boot takes minutes).
  if [[ -n ${SMOKE_BUDGET_S:-} ]] && (( $(date +%s) - start + 150 > SMOKE_BUDGET_S )); then
    log "phase $name: SKIPPED, not enough of the ${SMOKE_BUDGET_S}s budget left"
    return 0
  fi
  log "phase $name: ${pytest_cmd[*]} perf_tests $*"
  "${pytest_cmd[@]}" perf_tests "$@" --specperf-out="$out/$name" > "$out/$name.txt" 2>&1
  local rc=$?
  log "phase $name: pytest exit code $rc (expected: $expect)"
  grep -E '^(FAILED|ERROR|SKIPPED)|passed|failed|steps=.*(<|NOT)' "$out/$name.txt" | tail -20 >> "$summary"
  leftovers "$name"
  archive
  return 0
}

log "host: $(hostname); GPUs: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | paste -sd';')"
log "sglang $("$python" -c 'import sglang; print(sglang.__version__)' 2>&1 | tail -1)"
for profile in smoke-tiny-qwen3next-mtp smoke-tiny-qwen3-ngram; do
  log "launch command ($profile, depth 3): $("$python" -m pytest_specperf.cli launch-cmd --spec-steps 3 --specperf-profile "$profile")"
done

if [[ $which == mtp || $which == all ]]; then
  mtp=(--specperf-profile=smoke-tiny-qwen3next-mtp "${mtp_sweep[@]}")
  phase mtp-record pass --spec-steps=1,3 "${mtp[@]}" --specperf-update-baselines
  phase mtp-gate pass --spec-steps="${MTP_GATE_STEPS:-1,3}" "${mtp[@]}"
  phase mtp-regression fail --spec-steps=3 "${mtp[@]}" --specperf-inject-slowdown=0.005
fi
if [[ $which == ngram || $which == all ]]; then
  ngram=(--specperf-profile=smoke-tiny-qwen3-ngram "${ngram_sweep[@]}")
  phase ngram-record pass --spec-steps=3 "${ngram[@]}" --specperf-update-baselines
  phase ngram-gate pass --spec-steps=3 "${ngram[@]}"
fi
log "done"
