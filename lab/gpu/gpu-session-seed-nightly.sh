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
#   ladder   one boot: what each /slow_down sleep costs at C=64, 2,048 tokens
#            (lab/gpu/slowdown_ladder.py), at sleeps around the red night's target (below;
#            or LADDER_SLEEPS and LADDER_TARGET); SLOW becomes the measured sleep nearest it
#   red      the nightly with sleep SLOW, against the merged baseline: should be red. Its
#            target (lab/gpu/red_night_target.py): the 5% where the merged baseline's
#            floor is under 5%, else the floor plus this machine's lead plus a margin. Without a ladder before it, SLOW is the sleep the
#            measured cost per ms (about 2%) puts at the target, and what it cost is read
#            against this machine's own nightly. (`slow5`, its former name, runs the same.)
#            Short of time, `ORDER="red trace"` skips the nightly: the target then takes the
#            fastest machine on record for this card's lead (or give LADDER_TARGET and
#            LADDER_SLEEPS).
#   trace    the shipped trace replayed open-loop at depths 1 and 3
#   bisect   issue 52: lab/gpu/gpu-bisect-real-sglang.sh in the device time then left (its
#            STOP_AFTER_S: LEFT_S less this driver's time so far and 60 s for the last poll);
#            it resumes from .specperf/bisect-real-sglang/history.sqlite where a call carried
#            one, and leaves its pairs in $proof/state/history.sqlite (its header says more)
# ORDER picks the phases (default: all, in that order); MACHINES the results.json files the
# shipped baseline rests on (default: lab/runs/seed-class-nightly-machines/<hardware key>/).
# Everything lands in /tmp/proof (driver.log, each phase's folder); a poll tars it into $OUT.
# LEFT_S: the device seconds left when the driver starts; a phase that would not end in what is
# then left (its usual length on an H100, PHASE_S below) is skipped with a line saying so,
# rather than cut off half way when the machine goes back.
# A dry run on the simulator: LENT_H200= BACKEND=sim EXTRA="--specperf-max-new-tokens=64
#   --specperf-concurrency=4 --specperf-warmup-rounds=0" (the shipped baseline is not
#   comparable there: the nightly phase then fails as not judged, which is what it should do).
set -u
# Each phase's usual length on an H100 (docs/runs/2026-12-06-seed-nightly-h100-third,
# 2026-12-06-seed-red-h100-fourth, -fifth): the nightly with a fresh boot 450-500 s; the red
# night 340 s after another boot, 504 s as a fresh machine's first, 672 s after another boot
# when its first look was borderline and it re-measured (the fifth H100's 2.5 ms night; a 5%
# night is borderline on every card on record: lab/studies/held_out_machines.py --slowdowns); the
# trace, not yet run on a GPU: two boots (about 190 and 90 s) and two 15 s replays.
# The bisection asks for a fresh boot and one pair at least (about 230 + 210 s).
declare -A PHASE_S=([nightly]=520 [merge]=10 [ladder]=520 [red]=680 [slow5]=680 [trace]=420
  [bisect]=450)
proof=${PROOF:-/tmp/proof}
mkdir -p "$proof"
export LENT_H200=${LENT_H200-1}
source lab/gpu/_lent_gpu.sh
backend=${BACKEND:-sglang}
profile=qwen3-next-real-width-fp8-mtp
plugin=$($python -c 'import sys; sys.path.insert(0, "lab/gpu"); import _lent_gpu; print(*_lent_gpu.plugin_flags())')
nightly="$python -m pytest perf_tests $plugin -p no:cacheprovider -rsf --spec-steps=3 --specperf-backend=$backend --specperf-profile=$profile --specperf-run-profile=seed-class-nightly ${EXTRA:-}"
# This machine's hardware key (read from the nightly's results; without a nightly, as the
# suite names it from nvidia-smi).
hardware_key() {
  if [[ -f $proof/nightly/results.json ]]; then
    $python -c 'import json, sys; print(json.load(open(sys.argv[1]))["runs"][0]["hardware"])' "$proof/nightly/results.json"
  else
    $python -c 'from pytest_specperf.server.hardware import gpu_key, local_gpu_names; print(gpu_key(local_gpu_names()))'
  fi
}
# The red night's target and the sleeps around it (LADDER_TARGET and LADDER_SLEEPS where set):
# sets TARGET, SLEEPS and SLOW, the middle sleep (the ladder then measures them).
red_target() {
  TARGET=${LADDER_TARGET:-} SLEEPS=${LADDER_SLEEPS:-}
  if [[ -z $TARGET || -z $SLEEPS ]]; then
    local nightly_results=()
    [[ -f $proof/nightly/results.json ]] && nightly_results=("$proof/nightly/results.json")
    $python lab/gpu/red_night_target.py "$proof/baselines/$profile/$(hardware_key)/steps-3.json" \
      "${nightly_results[@]}" 2>&1 | tee "$proof/red-target.txt"
    TARGET=${TARGET:-$(sed -n 's/^TARGET=//p' "$proof/red-target.txt")}
    SLEEPS=${SLEEPS:-$(sed -n 's/^SLEEPS=//p' "$proof/red-target.txt")}
  fi
  TARGET=${TARGET:-0.05} SLEEPS=${SLEEPS:-0.002 0.003 0.004}
  local rungs=($SLEEPS)
  SLOW=${rungs[$(( ${#rungs[@]} / 2 ))]}
}
# The runs on record for this machine's hardware key.
machines_on_record() {
  ls lab/runs/seed-class-nightly-machines/"$(hardware_key)"/*.results.json 2>/dev/null
}
{
  date -u +"start %FT%TZ"
  lent_gpu_banner
  nvidia-smi --query-gpu=name,uuid,driver_version,memory.total --format=csv,noheader 2>&1
  echo "vCPUs: $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
  for phase in ${ORDER:-nightly merge ladder red trace}; do
    if [[ -n ${LEFT_S:-} ]]; then
      left=$((LEFT_S - SECONDS)) need=${PHASE_S[$phase]:-0}
      if ((need > left)); then
        echo "skip $phase: it takes about $need s, $left s of device time left"
        continue
      fi
    fi
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
        red_target
        $python lab/gpu/slowdown_ladder.py "$proof/ladder" --backend "$backend" \
          --profile $profile --concurrency ${LADDER_C:-64} --max-new-tokens ${LADDER_TOKENS:-2048} --repeats 1 --warm-once \
          --sleeps $SLEEPS --target "$TARGET" 2>&1 | tee "$proof/ladder.txt"
        measured=$(sed -n 's/^SLOW=//p' "$proof/ladder.txt" | tail -1)
        SLOW=${measured:-$SLOW}
        echo "SLOW=$SLOW (${measured:+measured by the ladder}${measured:-from the slope: the ladder found none})" ;;
      red|slow5)
        # Without merge before it (ORDER="red ..."), against the shipped baseline.
        [[ -d $proof/baselines ]] || cp -r baselines "$proof/baselines"
        [[ -n ${SLOW:-} ]] || red_target
        echo "red: sleep $SLOW s, for a slowdown of $TARGET (a share of the baseline)"
        $nightly --specperf-baselines="$proof/baselines" --specperf-inject-slowdown="$SLOW" \
          --specperf-out="$proof/red" >"$proof/red.txt" 2>&1
        echo "red exit $?"; tail -30 "$proof/red.txt" ;;
      trace)
        $python -m pytest perf_tests $plugin -p no:cacheprovider -rsf --spec-steps=1,3 \
          --specperf-backend="$backend" --specperf-profile=$profile \
          --specperf-workload=trace:synthetic --specperf-concurrency=1 \
          --specperf-allow-no-baseline -k "test_open_loop_floor or test_kv_capacity" \
          --specperf-out="$proof/trace" ${TRACE_EXTRA:-} >"$proof/trace.txt" 2>&1
        echo "trace exit $?"; tail -40 "$proof/trace.txt" ;;
      bisect)
        # Its own log lines go to $proof/driver.log as well (it appends there).
        STOP_AFTER_S=${LEFT_S:+$((LEFT_S - SECONDS - 60))} PROOF="$proof" \
          bash lab/gpu/gpu-bisect-real-sglang.sh
        echo "bisect phase exit $?" ;;
      *) echo "no phase $phase: the phases are ${!PHASE_S[*]}" ;;
    esac
  done
  sglang_left "$proof/driver.log"
  date -u +"end %FT%TZ"
} >>"$proof/driver.log" 2>&1
