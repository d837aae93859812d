"""Where speculation stops paying, night by night: a lasting change is reported, a blip not."""

from __future__ import annotations

import json
from typing import Any

from pytest_specperf.history.speculation import category_changes


def night(seq: int, stops_at: int | None) -> dict[str, Any]:
    recommendation = {
        "metric": "agg_tok_s",
        "schedule": [{"min_concurrency": 1, "max_concurrency": None, "depth": 3}],
        "stops_paying": [
            {"shallower": 0, "deeper": 3, "metric": "agg_tok_s", "concurrency": stops_at}
        ],
    }
    return {
        "seq": seq,
        "run_id": f"r{seq}",
        "started_at": f"2026-12-{seq:02d}T00:00:00+00:00",
        "tested_commit": f"c{seq}",
        "sglang_version": None,
        "recommendation_json": json.dumps(recommendation),
    }


def test_a_lasting_move_of_where_speculation_stops_paying_is_reported() -> None:
    runs = [night(i, 32) for i in range(1, 4)] + [night(i, 16) for i in range(4, 7)]
    (change,) = category_changes(runs)
    assert change.night.date == "2026-12-04"
    assert change.summary == (
        "from 2026-12-04 (c4), steps 3 (agg_tok_s) stops paying: at C=16 instead of at C=32"
    )


def test_one_night_off_is_not_a_change() -> None:
    stops = [32, 32, 32, 16, 32, 32]
    assert category_changes([night(i + 1, c) for i, c in enumerate(stops)]) == []
