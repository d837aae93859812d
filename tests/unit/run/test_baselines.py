"""run/baselines.py: writing a recording's baselines, and what a refused one tells to run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import msgspec
import pytest

from pytest_specperf.gate.baselines import Baseline, load_baseline
from pytest_specperf.results.schema import RunResults
from pytest_specperf.results.store import ResultsStore
from pytest_specperf.run.advice import record_hint
from pytest_specperf.run.baselines import REFUSED_DOWNGRADE, write_baselines
from pytest_specperf.run.depth_session import DepthSession
from pytest_specperf.server.profiles import DEFAULT_PROFILE
from tests.support.data import REPO
from tests.support.repository import SHIPPED_CALIBRATED, shipped_in_a_repository
from tests.unit.run.test_depth_session import Recorder, settings

PUBLISHED_HARDWARE = "4x-rtx-pro-6000-blackwell"
# A shipped baseline written before the workload key had ``workload`` and ``prompt_words``.
SHIPPED_PUBLISHED = REPO / "baselines" / DEFAULT_PROFILE / PUBLISHED_HARDWARE / "steps-3.json"


def _on_this_backend(text: str) -> str:
    """The published file as if recorded on the backend these tests record with (the
    simulator): a recording of another backend's figures is refused for that alone."""
    assert '"backend": "sglang"' in text
    return text.replace('"backend": "sglang"', '"backend": "sim"', 1)


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    fake = Recorder()
    monkeypatch.setattr("pytest_specperf.run.sampling.measure_point", fake)
    return fake


def options_of(command: str) -> dict[str, str]:
    """A printed ``pytest perf_tests --spec-steps=3 --specperf-x=y ...`` command's options, as
    the settings read them (``x``: ``y``; a flag reads ``true``)."""
    argv = shlex.split(command)
    assert argv[:2] == ["pytest", "perf_tests"]
    options: dict[str, str] = {}
    for arg in argv[2:]:
        name, _, value = arg.removeprefix("--").partition("=")
        options[name.removeprefix("specperf-").replace("-", "_")] = value or "true"
    return options


def recorded(tmp_path: Path, options: dict[str, str]) -> RunResults:
    """A run with these options that measured every planned point (the figures stand in)."""
    depth = DepthSession(settings(tmp_path, **options), 3, ResultsStore(tmp_path / "out"))
    depth.base_url = "http://127.0.0.1:1"
    for concurrency in depth.settings.concurrency:
        depth.measure(concurrency)
    depth.close()
    results = depth.store.load()
    assert results is not None
    return results


def record_over(tmp_path: Path, baseline_text: str) -> tuple[Path, str, list[str]]:
    """A baseline file of this text in a baselines folder of its own, then the refresh
    command a run against it prints, run as printed: (the file, that command, the lines
    write_baselines returned)."""
    baselines = tmp_path / "bl"
    target = baselines / DEFAULT_PROFILE / PUBLISHED_HARDWARE / "steps-3.json"
    target.parent.mkdir(parents=True)
    target.write_text(baseline_text)
    first = settings(
        tmp_path, baselines=str(baselines), hardware=PUBLISHED_HARDWARE, warmup_rounds="0"
    )
    command = record_hint(first, PUBLISHED_HARDWARE, 3)
    options = {**options_of(command), "warmup_rounds": "0"}
    run = recorded(tmp_path, options)
    return target, command, write_baselines(settings(tmp_path, **options), list(run.runs))


def advised_commands(line: str) -> list[str]:
    """The ``pytest perf_tests ...`` commands a refusal line tells to run."""
    return re.findall(r"with: (pytest perf_tests [^;(]*?)(?:;| \(|$)", line)


@pytest.mark.usefixtures("recorder")
def test_the_printed_refresh_of_a_baseline_without_workload_fields_writes_it(
    tmp_path: Path,
) -> None:
    """The published baseline records no ``workload`` nor ``prompt_words``: the refresh
    command a run against it prints writes it (filling those fields in), and is not refused
    with advice to run that same command again."""
    text = _on_this_backend(SHIPPED_PUBLISHED.read_text())
    old = msgspec.json.decode(text, type=Baseline)
    assert {"workload", "prompt_words"}.isdisjoint(old.workload)
    target, _, lines = record_over(tmp_path, text)
    assert lines == [f"steps=3: wrote {target}"]
    written = load_baseline(target)
    assert written is not None
    assert written.workload["workload"] == "greedy-synthetic"
    assert {k: written.workload[k] for k in old.workload} == old.workload


@pytest.mark.usefixtures("recorder")
def test_a_refusal_for_a_dropped_workload_field_never_advises_the_command_refused(
    tmp_path: Path,
) -> None:
    """A baseline whose workload records a field this run's does not (``top_p`` here) is
    kept; what the refusal tells to run is not the recording it refused."""
    text = _on_this_backend(SHIPPED_PUBLISHED.read_text())
    text = text.replace('"temperature": 0.0', '"temperature": 0.0, "top_p": 0.9', 1)
    target, command, [line] = record_over(tmp_path, text)
    assert REFUSED_DOWNGRADE in line and "top_p 0.9 -> None" in line
    assert target.read_text() == text
    advised = advised_commands(line)
    assert advised and command not in advised


@pytest.mark.usefixtures("recorder")
def test_simulator_figures_never_replace_a_gpu_baseline_and_the_advice_differs(
    tmp_path: Path,
) -> None:
    """The published baseline was recorded on SGLang: the simulator's recording over it is
    refused, and what the refusal tells to run is neither the recording it refused nor one
    into that folder."""
    target, command, [line] = record_over(tmp_path, SHIPPED_PUBLISHED.read_text())
    assert REFUSED_DOWNGRADE in line and "replace its sglang figures with sim ones" in line
    assert target.read_bytes() == SHIPPED_PUBLISHED.read_bytes()
    advised = advised_commands(line)
    assert advised and command not in advised
    assert all(f"--specperf-baselines={tmp_path / 'bl'}" not in a for a in advised)


@pytest.mark.usefixtures("recorder")
def test_a_refusal_in_the_repositorys_baselines_offers_no_command_that_writes_there(
    tmp_path: Path,
) -> None:
    """A one-sample recording at C=1 into a clone's committed baselines/ is refused (it would
    drop the shipped calibrated file's points and samples); "re-record it as it was" would
    rewrite the repository's file, so the only recording offered is into the user's own
    directory, with how to gate against it."""
    shipped = shipped_in_a_repository(tmp_path)
    options = {"concurrency": "1", "hardware": "sim-x5", "warmup_rounds": "0"}
    run = recorded(tmp_path, options)
    [line] = write_baselines(settings(tmp_path, **options), list(run.runs))
    assert REFUSED_DOWNGRADE in line and "re-record it as it was" not in line
    advised = advised_commands(line)
    assert len(advised) == 1
    assert "--specperf-baselines=.specperf/baselines/greedy-synthetic-1000-tokens" in advised[0]
    assert "then gate with --specperf-baselines=.specperf/baselines/" in line
    assert shipped.read_bytes() == SHIPPED_CALIBRATED.read_bytes()
