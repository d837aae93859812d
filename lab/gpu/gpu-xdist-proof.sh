#!/usr/bin/env bash
# Proof on a real 2-GPU machine that xdist workers each boot their server on their own GPU.
#
#   lab/gpu/gpu-xdist-proof.sh OUT_DIR
#
# Runs on the project's lent 2 x H200 machine ("nvidia-h200-x2"), set up as for
# lab/gpu/gpu-smoke-on-lent-h200.sh: the SGLang 0.5.12 bundle parts already in /tmp/stash
# (built with shared/tools/real-sglang/build-bundle.sh into .gpu-bundle/), the test
# dependencies (pytest-xdist among them) as wheels in .whl/. Nothing is written to ./baselines:
# the run records into OUT_DIR/baselines.
#
# Phases (each logged to OUT_DIR/summary.txt):
#   refused      -n 2 without --specperf-gpus-per-server: must be a usage error (exit 4),
#                saying why, before anything boots.
#   too-many     -n 2 --specperf-gpus-per-server 2 on 2 GPUs: usage error (needs 4).
#   parallel     -n 2 --specperf-gpus-per-server 1, depths 1 and 2 of the MTP smoke profile,
#                recording: exit 0; nvidia-smi sampled every 2 s during the run.
# What to look for at the end of summary.txt:
#   - "servers by GPU": two server PIDs, each on a different GPU UUID (one per GPU);
#   - results.json: steps=1 gpus=['0'] and steps=2 gpus=['1'] (or the other way round),
#     different ports, and max_total_num_tokens of steps=1 close to the one-GPU smoke figure
#     (57,934,502 with fp8 KV), not a fraction of it as when both servers shared one GPU;
#   - "sglang processes left: 0".
set -uo pipefail
out=${1:?usage: lab/gpu/gpu-xdist-proof.sh OUT_DIR}
out=$(mkdir -p "$out" && cd "$out" && pwd)
summary="$out/summary.txt"
: > "$summary"
start=$(date +%s)
log() { echo "[$(( $(date +%s) - start ))s] $*" | tee -a "$summary"; }

source "$(dirname "$0")/_lent_gpu.sh"
pytest_cmd=("$python" -m pytest -p pytest_specperf.plugin -p no:cacheprovider -rsf)
common=(perf_tests --spec-steps=1,2 --specperf-profile=smoke-tiny-qwen3next-mtp
  --specperf-concurrency=1,4,16 --specperf-max-new-tokens=256
  --specperf-baselines="$out/baselines" --specperf-update-baselines)

log "host: $(hostname); CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>}"
nvidia-smi -L | tee -a "$summary"
nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv | tee "$out/gpus.csv" >> "$summary"
log "sglang $("$python" -c 'import sglang; print(sglang.__version__)' 2>&1 | tail -1)"

phase() {  # phase NAME ARGS...: run pytest, log its exit code and its key lines
  local name=$1; shift
  log "phase $name: ${pytest_cmd[*]} $*"
  "${pytest_cmd[@]}" "$@" --specperf-out="$out/$name" > "$out/$name.txt" 2>&1
  local rc=$?
  log "phase $name: exit code $rc"
  grep -E 'ERROR:|UsageError|measure each other|needs [0-9]+ GPUs|RECORDED|recorded|passed|failed|gpus=' \
    "$out/$name.txt" | tail -20 >> "$summary"
  return 0
}

phase refused "${common[@]}" -n 2
phase too-many "${common[@]}" -n 2 --specperf-gpus-per-server 2

# Sample which process holds memory on which GPU, and each GPU's load, during the real run.
nvidia-smi --query-compute-apps=timestamp,pid,gpu_uuid,used_memory --format=csv -l 2 \
  > "$out/nvidia-smi-apps.csv" 2>&1 &
apps_pid=$!
nvidia-smi --query-gpu=timestamp,index,uuid,utilization.gpu,memory.used --format=csv -l 2 \
  > "$out/nvidia-smi-gpus.csv" 2>&1 &
gpus_pid=$!
phase parallel "${common[@]}" -n 2 --specperf-gpus-per-server 1
kill "$apps_pid" "$gpus_pid" 2> /dev/null
wait "$apps_pid" "$gpus_pid" 2> /dev/null

log "servers by GPU (pid -> GPU UUIDs it held memory on, from nvidia-smi-apps.csv):"
"$python" - "$out" >> "$summary" 2>&1 <<'EOF'
import csv, json, sys
from collections import defaultdict
from pathlib import Path

out = Path(sys.argv[1])
index_of = {}
with open(out / "gpus.csv") as fh:
    for row in csv.DictReader(fh, skipinitialspace=True):
        index_of[row["uuid"].strip()] = row["index"].strip()
held = defaultdict(set)
with open(out / "nvidia-smi-apps.csv") as fh:
    for row in csv.reader(fh, skipinitialspace=True):
        if len(row) == 4 and row[1].strip().isdigit():
            held[row[1].strip()].add(row[2].strip())
for pid, uuids in sorted(held.items()):
    print(f"  pid {pid}: GPU {sorted(index_of.get(u, u) for u in uuids)}")
gpus_used = [frozenset(u) for u in held.values()]
print(f"  {len(held)} server process(es); every one on a single GPU: "
      f"{all(len(u) == 1 for u in gpus_used)}; on distinct GPUs: "
      f"{len(set(gpus_used)) == len(gpus_used)}")
results = out / "parallel" / "results.json"
if results.exists():
    for run in json.loads(results.read_text())["runs"]:
        server = run.get("server") or {}
        print(f"  results.json steps={run['depth']}: gpus={server.get('gpus')} "
              f"url={server.get('url')} max_total_num_tokens={server.get('max_total_num_tokens')} "
              f"max_running_requests={server.get('max_running_requests')} status={run['status']}")
else:
    print("  no results.json from the parallel phase")
EOF
log "sglang processes left: $(pgrep -fc 'sglang.launch_server|sglang::' || true)"
log "done"
