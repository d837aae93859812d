"""specperf bisect's outputs: bisect.json, a markdown summary fit for an issue or a pull
request comment, and a plot of each measured commit's change along the range."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from pytest_specperf.files import atomic_write_bytes
from pytest_specperf.results.bisect_schema import BisectCommit, BisectResult, BisectStep
from pytest_specperf.results.formats import relative_change
from pytest_specperf.results.previous_run import move_into_previous
from pytest_specperf.results.schema import AbChange

RESULT_FILE = "bisect.json"
SUMMARY_FILE = "bisect.md"
PLOT_FILE = "bisect.png"
STEP_FOLDERS = "step*-*"  # each step's boots (run/bisect/steps.py step_settings)

RANGE_UNKNOWN = "unknown (step 1 reached no verdict)"
_HEADLINES = {
    "culprit": "culprit found",
    "no-change": "no change: the range's ends do not differ",
    "undecided": "undecided: no commit named",
}


def change_text(change: AbChange | None) -> str:
    """``-7.9% [-10.2%, -5.5%]`` (the repeated interval of the A/B's pairs)."""
    if change is None:
        return "-"
    text = relative_change(1 + change.change)
    if change.low is not None and change.high is not None:
        text += f" [{relative_change(1 + change.low)}, {relative_change(1 + change.high)}]"
    return text


def _commit(result: BisectResult, sha: str) -> BisectCommit:
    return next((c for c in result.commits if c.sha == sha), BisectCommit(sha=sha))


def _share_text(result: BisectResult) -> str:
    """What part of the range's change the culprit's own change is. Over 100% is the usual
    reading of one change measured twice (the range in its pairs, the culprit against its
    parent in its own): it is said as all of it unless the range's change lies outside the
    culprit's interval, where a change the other way elsewhere in the range is likelier, or
    the bisection found another change in the range (then the figure stands as measured)."""
    share = result.explained_share
    assert share is not None
    if share <= 1 or result.remaining:
        return f"explains {share:.0%} of the range's change"
    own, whole = result.culprit_change, result.range_change
    if own is None or whole is None or own.low is None or own.high is None:
        return f"explains all of the range's change ({share:.0%})"
    mine, range_text = relative_change(1 + own.change), relative_change(1 + whole.change)
    if own.low <= whole.change <= own.high:
        return (
            f"explains all of the range's change: its own {mine} against the range's "
            f"{range_text} ({share:.0%}) is the two measurements' noise (the range's change "
            f"lies in its interval)"
        )
    return (
        f"its own {mine} is more than the range's {range_text} ({share:.0%}), the range's "
        f"change outside its interval: a change the other way elsewhere in the range may have "
        f"won part of it back"
    )


def summary_markdown(result: BisectResult) -> str:
    """The bisection in a few lines, then every step: for an issue or a PR comment."""
    good, bad = _commit(result, result.good), _commit(result, result.bad)
    lines = [
        f"## specperf bisect: {_HEADLINES[result.outcome]}",
        "",
        f"Range: `{good.short}` (good) .. `{bad.short}` (bad), {len(result.commits) - 1} "
        f"commit(s); bad against good: "
        f"{change_text(result.range_change) if result.range_change else RANGE_UNKNOWN}.",
    ]
    if result.outcome == "culprit" and result.culprit is not None:
        culprit = _commit(result, result.culprit)
        change = result.culprit_change
        lines += [
            "",
            f"**Culprit: `{culprit.sha}`** {culprit.subject}",
            f"- author: {culprit.author}, {culprit.date}",
            f"- effect against its parent: {change_text(change)}",
        ]
        if change is not None and change.why:
            lines.append(f"- why: {change.why}")
        if result.explained_share is not None:
            lines.append(f"- {_share_text(result)}")
        if result.remaining:
            lines.append(f"- {result.remaining}")
    else:
        if result.interrupted:
            told = f"{result.interrupted}: {result.why}."
            lines += ["", told[:1].upper() + told[1:]]
        else:
            lines += ["", result.why]
        if result.narrowed_to:
            shown = ", ".join(f"`{sha[:12]}`" for sha in result.narrowed_to[:12])
            more = len(result.narrowed_to) - 12
            lines.append(
                f"- the change lies in {len(result.narrowed_to)} commit(s): {shown}"
                + (f" and {more} more" if more > 0 else "")
            )
    lines += ["", "| step | commit | against | verdict | pairs | change [interval] |"]
    lines.append("| --- | --- | --- | --- | --- | --- |")
    lines += [_step_row(result, step) for step in result.steps]
    skipped = [step for step in result.steps if step.verdict == "skipped"]
    if skipped:
        lines += ["", "Skipped (could not be served; neither good nor bad):"]
        lines += [f"- `{step.commit[:12]}`: {step.message}" for step in skipped]
    lines += [
        "",
        f"Cost: {len(result.steps)} step(s), {sum(s.pairs for s in result.steps)} pair(s) of "
        f"boots, {result.server_seconds:,.0f} server-seconds"
        + (f" (budget {result.budget_s:,.0f} s)" if result.budget_s is not None else "")
        + f". Estimated before the first step: {result.estimate}.",
    ]
    return "\n".join(lines) + "\n"


def _step_row(result: BisectResult, step: BisectStep) -> str:
    head = _commit(result, step.commit)
    resumed = f" ({step.resumed_pairs} resumed)" if step.resumed_pairs else ""
    return (
        f"| {step.number} ({step.kind}) | `{head.short}` {head.subject[:40]} | "
        f"`{step.against[:12]}` | {step.verdict} | {step.pairs}{resumed} | "
        f"{change_text(step.change)} |"
    )


def plot_changes(result: BisectResult, path: Path) -> Path | None:
    """Each commit measured against good, its change and interval along the range; the
    culprit marked. None when matplotlib is not installed (nothing is written)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    against_good = [s for s in result.steps if s.against == result.good and s.change]
    figure, axes = plt.subplots(figsize=(8, 3.5))
    for step in against_good:
        assert step.change is not None
        change = step.change.change * 100
        low = (step.change.low if step.change.low is not None else step.change.change) * 100
        high = (step.change.high if step.change.high is not None else step.change.change) * 100
        axes.errorbar(
            step.index, change, yerr=[[change - low], [high - change]], fmt="o", color="C0"
        )
    if result.culprit is not None:
        index = next(i for i, c in enumerate(result.commits) if c.sha == result.culprit)
        axes.axvline(
            index - 0.5, color="C3", linestyle="--", label=f"culprit {result.culprit[:12]}"
        )
        axes.legend(loc="best")
    axes.axhline(0, color="grey", linewidth=0.8)
    axes.set_xlabel("commit in the range (0: good)")
    axes.set_ylabel("change against good (%)")
    axes.set_xlim(-0.5, len(result.commits) - 0.5)
    axes.set_title("specperf bisect: each measured commit against good")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def write_outputs(result: BisectResult, out: Path, *, plots: bool = True) -> list[Path]:
    """bisect.json, bisect.md and (with matplotlib, unless ``plots`` is off: the suite's
    --specperf-no-plots) bisect.png in ``out``: the files written."""
    out.mkdir(parents=True, exist_ok=True)
    data = json.dumps(msgspec.to_builtins(result), indent=2) + "\n"
    atomic_write_bytes(out / RESULT_FILE, data.encode())
    atomic_write_bytes(out / SUMMARY_FILE, summary_markdown(result).encode())
    written = [out / RESULT_FILE, out / SUMMARY_FILE]
    plot = plot_changes(result, out / PLOT_FILE) if plots else None
    if plot is not None:
        written.append(plot)
    return written


def set_aside_other(out: Path, name: str, good: str, bad: str) -> list[str]:
    """Another bisection's outputs in ``out`` (bisect.json, bisect.md, bisect.png and its
    steps' folders) moved into ``out/previous/``, emptied first, so that a step's folder
    holds no other bisection's boots: its bisect.json names another bisection, or (an
    earlier version's, without a name) another range. A rerun of the same one keeps them.
    The names moved."""
    try:
        earlier = json.loads((out / RESULT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(earlier, dict):
        return []
    if earlier.get("name") == name or (
        not earlier.get("name") and (earlier.get("good"), earlier.get("bad")) == (good, bad)
    ):
        return []
    files = [out / n for n in (RESULT_FILE, SUMMARY_FILE, PLOT_FILE) if (out / n).is_file()]
    found = sorted([*files, *(path for path in out.glob(STEP_FOLDERS) if path.is_dir())])
    return move_into_previous(out, found)
