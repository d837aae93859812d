#!/usr/bin/env bash
# What speculation buys, measured on real SGLang (issue 12, part 1), on one GPU:
#
#   scripts/gpu-speculation-proof.sh OUT_DIR
#
# One pytest run of the NGRAM smoke profile (tiny dense Qwen3, dummy weights) at depth 0 (no
# speculation: the control) and depth 3 (4 draft tokens), which shows:
#   - the speedup table (depth 3 over depth 0, agg and per-request, per concurrency),
#   - the acceptance rate of draft positions 1..3 from SGLang's own per-request histograms,
#   - greedy output equality between depth 0 and depth 3 over the fixed prompt set (match
#     rate and first divergence per prompt; the check is exact by default, and fails when the
#     real kernels differ: that outcome is a finding, kept in OUT_DIR),
#   - --specperf-self-test: a known /slow_down per depth, caught by the gate, then reset.
# Expected GPU time: two boots (65-165 s each) plus about two minutes of requests.
# Everything lands in OUT_DIR: pytest.txt (full output), summary.txt (the tables),
# results/ (results.json, report.md, server logs). SGLang processes left are counted (must be 0).
set -uo pipefail
out=${1:?usage: scripts/gpu-speculation-proof.sh OUT_DIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export SPECPERF_MODEL_CACHE=${SPECPERF_MODEL_CACHE:-/tmp/specperf-model-cache}
python=${PYTHON:-python3}
# PROOF_SWEEP overrides the sweep. 1024-token requests keep NGRAM's points near a second or
# more at depth 3 (about 1,600 tok/s per request on an H200) without a long control.
read -r -a sweep <<< "${PROOF_SWEEP:---specperf-concurrency=1,16 --specperf-max-new-tokens=1024}"
summary="$out/summary.txt"
start=$(date +%s)
log() { echo "[$(( $(date +%s) - start ))s] $*" | tee -a "$summary"; }

log "host: $(hostname); GPUs: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | paste -sd';')"
log "sglang $("$python" -c 'import sglang; print(sglang.__version__)' 2>&1 | tail -1)"
for depth in 0 3; do
  log "launch command (depth $depth): $("$python" -m pytest_specperf.cli launch-cmd --spec-steps "$depth" --specperf-profile smoke-tiny-qwen3-ngram)"
done

# -p loads the plugin where the package is on PYTHONPATH rather than pip-installed (the
# offline bundle); an installed package registers it through its entry point already.
plugin=(-p pytest_specperf.plugin)
"$python" -c "import importlib.metadata as m; m.distribution('pytest-specperf')" 2>/dev/null && plugin=()
cmd=("$python" -m pytest "${plugin[@]}" -p no:cacheprovider -rsf perf_tests
     --spec-steps=0,3 --specperf-profile=smoke-tiny-qwen3-ngram "${sweep[@]}"
     --specperf-self-test --specperf-out="$out/results")
log "run: ${cmd[*]}"
"${cmd[@]}" > "$out/pytest.txt" 2>&1
log "pytest exit code $? (0: every check passed or skipped; 1: a check failed, named below)"
grep -E '^(FAILED|ERROR)|passed|failed' "$out/pytest.txt" | tail -10 >> "$summary"
# The tables: speedup, per-position acceptance, greedy output equality, self-test lines.
awk '/^Speedup over no speculation/,/^$/; /^Acceptance per draft position/,/^$/;
     /^Greedy output equality/,/^$/; /^self-test steps=/' "$out/pytest.txt" | tee -a "$summary"
"$python" - "$out/results/results.json" <<'PY' | tee -a "$summary"
import json, sys
results = json.load(open(sys.argv[1]))
for comparison in results.get("lossless", []):
    print("lossless", comparison["depth"], "vs", comparison["reference_depth"],
          "identical", comparison["identical"], "/", comparison["prompts"],
          "first_divergence", comparison["first_divergence"],
          "prefix_match", {k: round(v, 3) for k, v in comparison["prefix_match"].items()})
for run in results["runs"]:
    print("steps", run["depth"], "accept_histogram", run["accept_histogram"],
          "position_accept_rate", [round(r, 4) for r in run["position_accept_rate"]])
PY
n=$(pgrep -fc 'sglang.launch_server|sglang::' || true)
log "sglang processes left: ${n:-0}"
log "done"
