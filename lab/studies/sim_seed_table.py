"""Run the seed's sweep over HTTP against a freshly booted simulator; print seed vs sim.

    python lab/studies/sim_seed_table.py --steps 3 --speedup 1      # ~2.5 minutes
    python lab/studies/sim_seed_table.py --steps 1 --speedup 10

Agg tok/s = sum of server-reported completion tokens / wall time of the point;
Per-req tok/s = mean over requests of (tokens after the first chunk) / (last - first chunk).
Sim figures are divided by --speedup to put them in simulated time. The seed's own
"Tokens" column undercounts; its Agg figures are compared as printed. The "model" columns
are the simulator's virtual-time model (no HTTP, no client): how far the served figures
stray from it is the cost of the HTTP path and of the machine's load at that speedup.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

import httpx
from _probe import run_point
from _sim import boot_sim

from pytest_specperf.sim.model import (
    SEED_CONCURRENCIES,
    SEED_PROFILE,
    SEED_TABLE,
    seed_requests,
    simulate_sweep,
)


async def sweep(
    url: str, speedup: float, concurrencies: list[int], max_new_tokens: int
) -> list[tuple[int, float, float, int, float]]:
    rows = []
    for c in concurrencies:
        point, _ = await run_point(url, c, seed_requests(c), max_new_tokens)
        rows.append(
            (
                c,
                point.agg_tok_s / speedup,
                point.per_req_tok_s / speedup,
                point.tokens,
                point.wall_s * speedup,
            )
        )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--speedup", type=float, default=1.0)
    p.add_argument("--max-new-tokens", type=int, default=1000)
    p.add_argument("--concurrency", type=int, nargs="*", default=list(SEED_CONCURRENCIES))
    p.add_argument("--url", default=None, help="use a running sim instead of booting one")
    p.add_argument("sim_args", nargs="*", help="extra flags for the simulator (after --)")
    a = p.parse_args()
    server = None
    url = a.url
    if url is None:
        log = Path(tempfile.mkdtemp(prefix="specperf-seed-table-")) / "sim.log"
        server = boot_sim(a.steps, a.speedup, log, a.sim_args)
        url = server.url
    try:
        rows = asyncio.run(sweep(url, a.speedup, a.concurrency, a.max_new_tokens))
        steps = httpx.get(url + "/sim/ground_truth", timeout=10).json()["steps"]
    finally:
        if server is not None:
            server.stop()
    seed = SEED_TABLE.get(a.steps, {})
    modelled = {r.concurrency: r for r in simulate_sweep(SEED_PROFILE, a.steps)}
    print(f"steps={a.steps} speedup={a.speedup} (sim figures in simulated time)")
    print(
        f"{'C':>3} | {'seed agg':>8} {'sim agg':>8} {'diff':>7} {'model':>8} {'diff':>7} | "
        f"{'seed per':>8} {'sim per':>8} {'diff':>7} {'model':>8} {'diff':>7} | "
        f"{'tokens':>6} {'wall(s)':>7}"
    )
    nan = float("nan")
    for c, agg, per, tokens, wall in rows:
        s_agg, s_per = seed.get(c, (nan, nan))
        m = modelled.get(c)
        m_agg, m_per = (m.agg_tok_s, m.per_req_tok_s) if m else (nan, nan)
        print(
            f"{c:>3} | {s_agg:8.1f} {agg:8.1f} {100 * (agg / s_agg - 1):+6.1f}% "
            f"{m_agg:8.1f} {100 * (agg / m_agg - 1):+6.1f}% | "
            f"{s_per:8.1f} {per:8.1f} {100 * (per / s_per - 1):+6.1f}% "
            f"{m_per:8.1f} {100 * (per / m_per - 1):+6.1f}% | "
            f"{tokens:6d} {wall:7.1f}"
        )
    print(
        f"scheduler: {steps['count']} steps, achieved/model step time "
        f"{steps['achieved_over_model']:.4f}, "
        f"max lateness {1000 * steps['max_lateness_s']:.2f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
