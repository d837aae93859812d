"""Writes pytest_specperf/measure/traces/synthetic-mooncake.jsonl: the shipped trace.

A synthetic trace in the Mooncake format (timestamp in ms, input_length, output_length,
hash_ids of 512-token blocks), so that ``--specperf-workload=trace:synthetic`` works with no
download. Seeded: the file is the same every time this script runs.

- Arrivals are bursty: a Markov-modulated Poisson process of two states, calm (10 requests/s)
  and burst (60 requests/s), staying in each for an exponential time (mean 2 s calm, 0.6 s
  burst): bursts of a few dozen requests in well under a second, then quiet spells.
- Prompts share prefixes as a service's do: each request belongs to one of 8 prefix groups
  (a system prompt plus tools, Zipf-distributed: a few groups take most requests) whose first
  1-4 blocks it shares; some requests continue an earlier conversation of their group and
  share all of that request's blocks; the rest of the prompt is its own.
- Input lengths are log-normal (median about 1,500 tokens, up to 8,000); output lengths
  log-normal (median about 120, 16 to 600).

    python tools/make_synthetic_trace.py            # 200 requests
    python tools/make_synthetic_trace.py --requests 1000 --out /tmp/trace.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "pytest_specperf/measure/traces"
BLOCK = 512
SEED = 20261204
CALM_RATE, BURST_RATE = 10.0, 60.0
CALM_MEAN_S, BURST_MEAN_S = 2.0, 0.6
GROUPS = 8


def arrivals(rng: random.Random, count: int) -> list[float]:
    """Send times (s) of a two-state Markov-modulated Poisson process, starting calm."""
    times: list[float] = []
    now, burst = 0.0, False
    state_ends = rng.expovariate(1 / CALM_MEAN_S)
    while len(times) < count:
        rate = BURST_RATE if burst else CALM_RATE
        gap = rng.expovariate(rate)
        if now + gap > state_ends:
            # Memoryless: the next arrival is drawn afresh in the new state.
            now = state_ends
            burst = not burst
            state_ends = now + rng.expovariate(1 / (BURST_MEAN_S if burst else CALM_MEAN_S))
            continue
        now += gap
        times.append(now)
    return times


def make_trace(count: int, seed: int = SEED) -> list[dict[str, object]]:
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(GROUPS)]
    group_blocks = [rng.randint(1, 4) for _ in range(GROUPS)]
    next_id = 0
    group_ids: list[list[int]] = []
    for blocks in group_blocks:
        group_ids.append(list(range(next_id, next_id + blocks)))
        next_id += blocks
    history: dict[int, list[list[int]]] = {group: [] for group in range(GROUPS)}
    rows: list[dict[str, object]] = []
    for when in arrivals(rng, count):
        group = rng.choices(range(GROUPS), weights)[0]
        earlier = history[group]
        if earlier and rng.random() < 0.3:
            shared = list(rng.choice(earlier))  # a later turn of an earlier conversation
        else:
            shared = list(group_ids[group])
        input_length = int(min(8000, max(64, rng.lognormvariate(math.log(1500), 0.8))))
        input_length = max(input_length, len(shared) * BLOCK - BLOCK + 1)
        blocks = math.ceil(input_length / BLOCK)
        own = []
        for _ in range(max(0, blocks - len(shared))):
            own.append(next_id)
            next_id += 1
        hash_ids = (shared + own)[: max(blocks, len(shared))]
        input_length = max(input_length, (len(hash_ids) - 1) * BLOCK + 1)
        history[group].append(hash_ids)
        output_length = int(min(600, max(16, rng.lognormvariate(math.log(120), 0.7))))
        rows.append(
            {
                "timestamp": round(when * 1000),
                "input_length": input_length,
                "output_length": output_length,
                "hash_ids": hash_ids,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, default=OUT / "synthetic-mooncake.jsonl")
    args = parser.parse_args()
    rows = make_trace(args.requests, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    span = rows[-1]["timestamp"] if rows else 0
    print(f"wrote {args.out}: {len(rows)} requests over {span} ms")


if __name__ == "__main__":
    main()
