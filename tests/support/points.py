"""One way for tests to build a measured point (``PointMetrics``) without listing every field."""

from __future__ import annotations

from types import EllipsisType
from typing import Any

from pytest_specperf.results.schema import PointMetrics


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
