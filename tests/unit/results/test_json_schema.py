"""pytest_specperf.results.json_schema: docs/results.schema.json describes results.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest

from pytest_specperf.results.json_schema import results_schema, results_schema_text
from pytest_specperf.results.schema import AbChange, AbComparison, RunResults, Warmup
from tests.unit.results_samples import sample_point, sample_run, sample_verdict

SCHEMA_FILE = Path(__file__).resolve().parents[3] / "docs" / "results.schema.json"


def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def _full_results() -> dict[str, Any]:
    """Results with every optional part filled: intervals, samples, verdicts, commit."""
    verdict = sample_verdict(
        3, 1, "agg_tok_s", "improvement", remeasured=True, refresh_command="pytest perf_tests"
    )
    run = sample_run(3, interval=True, verdicts=[verdict])
    run.points[0].samples = [sample_point(1, 740.0)]
    run.warmups = [
        Warmup(
            seconds=12.5,
            rounds=3,
            settled=True,
            stopped_by="settled",
            concurrency=[1, 4],
            agg_tok_s=[[90.0, 300.0], [97.0, 340.0], [96.5, 342.0]],
            tolerance=0.05,
            max_rounds=3,
        )
    ]
    results = RunResults(
        run_id="r", started_at="2026-12-01T08:00:00+00:00", tool_version="0.1.0", runs=[run]
    )
    results.tested_commit = "abc123"
    change = AbChange(
        concurrency=1,
        base_median=740.0,
        head_median=700.0,
        change=-0.054,
        low=-0.07,
        high=-0.04,
        acceptance_change=0.0,
        step_time_change=-0.054,
        why="agg -5.4%",
    )
    results.ab = [
        AbComparison(
            depth=3,
            outcome="regression",
            pairs=3,
            boots=["base", "head"],
            server_seconds=90.0,
            message="steps=3 A/B",
            pooled=change,
            points=[change],
        )
    ]
    decoded: dict[str, Any] = json.loads(msgspec.json.encode(results))
    return decoded


def test_checked_in_schema_matches_the_structs() -> None:
    """docs/results.schema.json is what the structs generate (regenerate it when they change)."""
    assert SCHEMA_FILE.read_text(encoding="utf-8") == results_schema_text(), (
        "regenerate: python -m pytest_specperf.results.json_schema > docs/results.schema.json"
    )


def test_schema_is_a_valid_2020_12_schema() -> None:
    """The schema itself is valid JSON Schema (draft 2020-12)."""
    jsonschema.Draft202012Validator.check_schema(results_schema())


def test_results_with_every_optional_part_validate() -> None:
    """A results.json with intervals, samples and verdicts validates."""
    _validator().validate(_full_results())


def test_a_wrong_type_does_not_validate() -> None:
    """A figure written as text is rejected."""
    results = _full_results()
    results["runs"][0]["points"][0]["agg_tok_s"] = "fast"
    with pytest.raises(jsonschema.ValidationError):
        _validator().validate(results)
