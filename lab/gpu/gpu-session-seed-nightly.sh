#!/usr/bin/env bash
# Issue 50 on one lent GPU, one driver in the background across calls (SGLang 0.5.12 bundle in
# /tmp/stash, wheels in .whl/ with nvidia-ml-py's and py-spy's). Each session is a fresh
# machine of the pool: its nightly is judged against the shipped seed-class baseline, which was
# merged from the machines before it, and then this machine's run is merged in.
#   nightly  the seed-class nightly as a user runs it, against the shipped baseline:
#            pytest perf_tests --spec-steps=3 --specperf-profile=qwen3-next-real-width-fp8-mtp
#              --specperf-run-profile=seed-class-nightly
#   merge    `specperf baseline merge` of the machines on record and this run (into
#            $proof/baselines: the shipped file is replaced by hand after review); --force:
#            a red night of an unchanged build is a machine reading the spread must include
#   ladder   one boot: what each /slow_down sleep costs at C=64, 2,048 tokens; SLOW5 is the
#            sleep nearest -5% (lab/gpu/slowdown_ladder.py)
#   slow5    the nightly with that sleep, against the merged baseline: should be red
#   trace    the shipped trace replayed open-loop at depths 1 and 3
# ORDER picks the phases (default: all, in that order); MACHINES the results.json files the
# shipped baseline rests on (default: lab/runs/seed-class-nightly-machines/<hardware key>/).
# Everything lands in /tmp/proof (driver.log, each phase's folder); a poll tars it into $OUT.
# A dry run on the simulator: LENT_H200= BACKEND=sim EXTRA="--specperf-max-new-tokens=64
#   --specperf-concurrency=4 --specperf-warmup-rounds=0" (the shipped baseline is not
#   comparable there: the nightly phase then fails as not judged, which is what it should do).
set -u
proof=${PROOF:-/tmp/proof}
mkdir -p "$proof"
export LENT_H200=${LENT_H200-1}
source lab/gpu/_lent_gpu.sh
backend=${BACKEND:-sglang}
profile=qwen3-next-real-width-fp8-mtp
plugin="-p pytest_specperf.plugin"
python -c 'import importlib.metadata as m; import sys; sys.exit(0 if any(e.value.startswith("pytest_specperf") for e in m.entry_points(group="pytest11")) else 1)' && plugin=""
nightly="$python -m pytest perf_tests $plugin -p no:cacheprovider -rsf --spec-steps=3 --specperf-backend=$backend --specperf-profile=$profile --specperf-run-profile=seed-class-nightly ${EXTRA:-}"
# The runs on record for this machine's hardware key (read from the nightly's results).
machines_on_record() {
  local hardware
  hardware=$($python -c 'import json, sys; print(json.load(open(sys.argv[1]))["runs"][0]["hardware"])' "$proof/nightly/results.json")
  ls lab/runs/seed-class-nightly-machines/"$hardware"/*.results.json 2>/dev/null
}
{
  date -u +"start %FT%TZ"
  lent_gpu_banner
  nvidia-smi --query-gpu=name,uuid,driver_version,memory.total --format=csv,noheader 2>&1
  echo "vCPUs: $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
  for phase in ${ORDER:-nightly merge ladder slow5 trace}; do
    date -u +"$phase %FT%TZ"
    case $phase in
      nightly)
        $nightly --specperf-out="$proof/nightly" >"$proof/nightly.txt" 2>&1
        echo "nightly exit $?"; tail -25 "$proof/nightly.txt" ;;
      merge)
        rm -rf "$proof/baselines" && cp -r baselines "$proof/baselines"
        machines=${MACHINES-$(machines_on_record)}
        $python -m pytest_specperf.cli baseline merge $machines "$proof/nightly/results.json" \
          --spec-steps 3 --baselines "$proof/baselines" --force 2>&1 | tee "$proof/merge.txt" ;;
      ladder)
        $python lab/gpu/slowdown_ladder.py "$proof/ladder" --backend "$backend" \
          --profile $profile --concurrency ${LADDER_C:-64} --max-new-tokens ${LADDER_TOKENS:-2048} --repeats 1 --warm-once \
          --sleeps ${LADDER_SLEEPS:-0.001 0.0015 0.002} --target 0.05 2>&1 | tee "$proof/ladder.txt"
        SLOW5=$(sed -n 's/^SLOW=//p' "$proof/ladder.txt" | tail -1)
        echo "SLOW5=${SLOW5:-none}" ;;
      slow5)
        [[ -n ${SLOW5:-} ]] || { echo "slow5: no sleep from the ladder"; continue; }
        $nightly --specperf-baselines="$proof/baselines" --specperf-inject-slowdown="$SLOW5" \
          --specperf-out="$proof/slow5" >"$proof/slow5.txt" 2>&1
        echo "slow5 exit $?"; tail -30 "$proof/slow5.txt" ;;
      trace)
        $python -m pytest perf_tests $plugin -p no:cacheprovider -rsf --spec-steps=1,3 \
          --specperf-backend="$backend" --specperf-profile=$profile \
          --specperf-workload=trace:synthetic --specperf-concurrency=1 \
          --specperf-allow-no-baseline -k "test_open_loop_floor or test_kv_capacity" \
          --specperf-out="$proof/trace" ${TRACE_EXTRA:-} >"$proof/trace.txt" 2>&1
        echo "trace exit $?"; tail -40 "$proof/trace.txt" ;;
    esac
  done
  sglang_left "$proof/driver.log"
  date -u +"end %FT%TZ"
} >>"$proof/driver.log" 2>&1
