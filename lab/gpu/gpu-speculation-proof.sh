#!/usr/bin/env bash
# What speculation buys, measured on real SGLang (issue 12, Done-when point 3), on one GPU:
#
#   lab/gpu/gpu-speculation-proof.sh OUT_DIR
#   BACKEND=sim lab/gpu/gpu-speculation-proof.sh /tmp/proof     # dry run of the script, no GPU
#
# One pytest run of the NGRAM smoke profile (tiny dense Qwen3, dummy weights) at depth 0 (no
# speculation: the control) and depth 3 (4 draft tokens), which shows:
#   - the speedup table (depth 3 over depth 0, agg and per-request, per concurrency),
#   - the acceptance rate of draft positions 1..3 from SGLang's own per-request histograms
#     (meta_info.spec_correct_drafts_histogram),
#   - greedy output equality between depth 0 and depth 3 over the fixed prompt set (match
#     rate, first divergence and common prefix per prompt; the check is exact by default and
#     fails when the real kernels differ: that outcome is a finding, kept in OUT_DIR),
#   - goodput under PROOF_SLO and each depth's largest concurrency meeting it, and the
#     recommendation (which depth at which concurrency, "no speculation" included),
#   - --specperf-self-test: a known /slow_down per depth, caught by the gate, then reset.
# Nothing is read from or written to ./baselines: the run's baselines dir is OUT_DIR/baselines
# (empty), so no committed figure of another workload gates it.
#
# Expected GPU time: two boots (65-165 s each) plus about two minutes of requests (C=1 and
# C=16 at 1024 tokens, greedy prompts, self-test), about five minutes in all.
# Everything lands in OUT_DIR: summary.md (commands, outcome and every table), pytest.txt
# (full output), results/ (results.json, report.md, server logs, plots when matplotlib is
# there). SGLang processes left behind are counted (must be 0).
#
# On the project's lent H200 (no network): the SGLang 0.5.12 bundle parts in /tmp/stash and
# the test wheels in .whl/, as for lab/gpu/gpu-xdist-proof.sh; both are unpacked here.
set -uo pipefail
out=${1:?usage: lab/gpu/gpu-speculation-proof.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
source "$(dirname "$0")/_lent_gpu.sh"
backend=${BACKEND:-sglang}
# PROOF_SWEEP overrides the sweep. 1024-token requests keep NGRAM's points near a second or
# more at depth 3 (about 1,600 tok/s per request on an H200) without a long control.
read -r -a sweep <<< "${PROOF_SWEEP:---specperf-concurrency=1,16 --specperf-max-new-tokens=1024}"
# Generous limits for a tiny model: the table shows who meets them, nothing is gated on them.
slo=${PROOF_SLO:-ttft_p99_ms=1000,itl_p99_ms=50}
summary="$out/summary.md"
start=$(date +%s)
: > "$summary"
log() { echo "- [$(( $(date +%s) - start ))s] $*" | tee -a "$summary"; }

echo "# Speculation proof: smoke-tiny-qwen3-ngram, depths 0 and 3" >> "$summary"
echo >> "$summary"
if [[ $backend == sglang ]]; then
  log "host: $(hostname); GPUs: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | paste -sd';')"
  log "sglang $("$python" -c 'import sglang; print(sglang.__version__)' 2>&1 | tail -1)"
fi
for depth in 0 3; do
  log "launch command (depth $depth): \`$("$python" -m pytest_specperf.cli launch-cmd --spec-steps "$depth" --specperf-profile smoke-tiny-qwen3-ngram 2>&1)\`"
done

# -p loads the plugin where the package is on PYTHONPATH rather than pip-installed (the
# offline bundle); an installed package registers it through its entry point already.
plugin=(-p pytest_specperf.plugin)
"$python" -c "import importlib.metadata as m; m.distribution('pytest-specperf')" 2>/dev/null && plugin=()
mkdir -p "$out/baselines"
cmd=("$python" -m pytest "${plugin[@]}" -p no:cacheprovider -rsf perf_tests
     --spec-steps=0,3 --specperf-profile=smoke-tiny-qwen3-ngram --specperf-backend="$backend"
     "${sweep[@]}"
     --specperf-slo="$slo" --specperf-self-test
     --specperf-baselines="$out/baselines" --specperf-out="$out/results")
log "run: \`${cmd[*]}\`"
"${cmd[@]}" > "$out/pytest.txt" 2>&1
code=$?
log "pytest exit code $code (0: every check passed or skipped; 1: a check failed, named below)"
{
  echo
  echo "## Outcome"
  echo
  echo '```'
  grep -E '^(FAILED|ERROR|SKIPPED)|passed|failed|error' "$out/pytest.txt" | tail -25
  echo '```'
  echo
  echo "## Tables (results/report.md)"
  echo
  sed '1d' "$out/results/report.md" 2>/dev/null || echo "(no report.md: see pytest.txt)"
  echo
  echo "## Greedy outputs and acceptance histograms (results/results.json)"
  echo
  echo '```'
} >> "$summary"
"$python" - "$out/results/results.json" <<'PY' >> "$summary" 2>&1
import json, sys
results = json.load(open(sys.argv[1]))
for comparison in results.get("lossless", []):
    print("lossless steps", comparison["depth"], "vs", comparison["reference_depth"],
          "identical", comparison["identical"], "/", comparison["prompts"],
          "first_divergence", comparison["first_divergence"],
          "prefix_match", {k: round(v, 3) for k, v in comparison["prefix_match"].items()})
for run in results["runs"]:
    print("steps", run["depth"], "accept_histogram", run["accept_histogram"],
          "position_accept_rate", [round(r, 4) for r in run["position_accept_rate"]])
    test = run.get("self_test")
    if test:
        print("steps", run["depth"], "self_test caught", test["caught"], "reset", test["reset"],
              "slowdown_s", round(test["slowdown_s"], 5))
PY
echo '```' >> "$summary"
echo >> "$summary"
n=$(pgrep -fc 'sglang.launch_server|sglang::' || true)
log "sglang processes left: ${n:-0}"
log "done"
exit "$code"
