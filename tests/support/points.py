"""One way for tests to build a measured point (``PointMetrics``) without listing every field."""

from __future__ import annotations

from collections.abc import Sequence
from types import EllipsisType
from typing import Any

from pytest_specperf.results.schema import DepthRun, PointMetrics


def make_point(
    concurrency: int = 1,
    agg: float = 100.0,
    per_req: float | EllipsisType | None = ...,
    *,
    requests: int = 4,
    failed: int = 0,
    tokens: int | None = None,
    wall_s: float = 1.0,
    **fields: Any,
) -> PointMetrics:
    """A point at ``concurrency`` with ``agg`` tok/s; the rest follows unless given.

    ``per_req`` defaults to ``agg / concurrency``, ``ok`` to ``requests - failed``, ``tokens``
    to 100 per request; any other ``PointMetrics`` field can be passed by name.
    """
    return PointMetrics(
        concurrency=concurrency,
        requests=requests,
        ok=fields.pop("ok", requests - failed),
        failed=failed,
        tokens=100 * requests if tokens is None else tokens,
        wall_s=wall_s,
        agg_tok_s=agg,
        per_req_tok_s=agg / concurrency if per_req is ... else per_req,
        **fields,
    )


def seed_point(concurrency: int, agg: float, **fields: Any) -> PointMetrics:
    """A point shaped like the seed's: 2C requests of 1000 tokens in 10 s, 400 verify steps/C."""
    return make_point(
        concurrency,
        agg,
        requests=2 * concurrency,
        tokens=1000 * concurrency,
        wall_s=10.0,
        spec_verify_ct=400 * concurrency,
        **fields,
    )


def make_run(depth: int, points: Sequence[PointMetrics] = (), **fields: Any) -> DepthRun:
    """A run of ``points``: profile "prof", backend "sim", hardware "sim-x5" unless given."""
    values: dict[str, Any] = {"profile": "prof", "backend": "sim", "hardware": "sim-x5"}
    return DepthRun(depth=depth, workload={}, points=list(points), **{**values, **fields})
