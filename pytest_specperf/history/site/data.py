"""What the history site shows, gathered from the store in two queries (pure below ``gather``).

One panel per profile x hardware x workload x depth (its series page, its card on the index):
each run's points, the change points of its series (history/changes.py) with their first
run's commit, the latest verdict. One speculation group per profile x hardware x workload:
the speedup over the control, where each extra depth stops paying and the recommended
schedule, run by run, and when those moved (history/speculation.py).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from pytest_specperf.history.changes import ChangePoint, DetectionSettings, detect_all
from pytest_specperf.history.series import build_series
from pytest_specperf.history.speculation import CategoryChange, category_changes
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.schema import Percentiles, Recommendation

# Worst first, as rows.py orders a point's verdicts.
OUTCOME_ORDER = ("regression", "improvement", "pass", "unjudged", "no-baseline", "recorded")
_HEX_COMMIT = re.compile(r"^[0-9a-fA-F]{7,40}$")


class _PointLatency(msgspec.Struct):
    """The latency percentiles of a stored point (point_json holds the whole PointMetrics)."""

    ttft_s: Percentiles | None = None
    itl_s: Percentiles | None = None


class _RunFingerprint(msgspec.Struct):
    """The testbed's fingerprint where a run recorded one in its results.json."""

    testbed: dict[str, Any] | None = None
    fingerprint: dict[str, Any] | None = None


_latency_decoder = msgspec.json.Decoder(_PointLatency)
_fingerprint_decoder = msgspec.json.Decoder(_RunFingerprint)
_recommendation_decoder = msgspec.json.Decoder(Recommendation)


@dataclass(frozen=True)
class RunView:
    """One run as the site shows it; ``index`` is its place in ``SiteData.runs``."""

    index: int
    seq: int
    run_id: str
    started_at: str
    commit: str | None
    commit_url: str | None
    sglang_version: str | None = None
    sglang_git_hash: str | None = None
    runner: str | None = None
    tool_version: str | None = None
    fingerprint: tuple[tuple[str, str], ...] = ()

    @property
    def when(self) -> str:
        """The start time as a chart axis reads it: ``YYYY-MM-DD HH:MM:SS`` in UTC."""
        return chart_time(self.started_at)

    @property
    def commit_label(self) -> str:
        return (self.commit or "-")[:10]

    def hover_fields(self) -> list[tuple[str, str]]:
        """What the charts' hover shows of the run; fields the store lacks are left out."""
        found = [("run", self.run_id), ("started", self.when)]
        for name, value in (
            ("commit", self.commit),
            ("SGLang", self.sglang_version),
            ("SGLang commit", self.sglang_git_hash),
            ("runner", self.runner),
            ("specperf", self.tool_version),
        ):
            if value:
                found.append((name, value))
        return [*found, *self.fingerprint]


@dataclass(frozen=True, order=True)
class PanelKey:
    profile: str
    hardware: str
    workload: str
    depth: int

    @property
    def slug(self) -> str:
        raw = f"{self.profile}--{self.hardware}--{self.workload}--steps{self.depth}"
        return re.sub(r"[^A-Za-z0-9_.=-]+", "_", raw)

    @property
    def depth_label(self) -> str:
        return "no speculation (control)" if self.depth == 0 else f"steps={self.depth}"


@dataclass(frozen=True)
class PointView:
    """One measured point of a panel, in one run."""

    run: int  # RunView.index
    concurrency: int
    agg_tok_s: float | None
    agg_interval: tuple[float, float] | None
    per_req_tok_s: float | None
    per_req_interval: tuple[float, float] | None
    goodput_tok_s: float | None
    ttft_ms: Percentiles | None
    itl_ms: Percentiles | None
    accept_length: float | None
    position_accept: tuple[float, ...]
    verify_steps_s: float | None
    step_ms: float | None  # one verify step as a request sees it (see step_time_ms)
    kv_max_total_tokens: int | None
    max_running_requests: int | None
    speedup_agg: float | None
    speedup_per_req: float | None
    outcome: str | None


@dataclass(frozen=True)
class ChangeView:
    """A change point of one of a panel's series, named by its first run."""

    metric: str
    concurrency: int
    run: RunView
    before: float
    after: float
    step: float
    step_low: float
    step_high: float
    p_value: float
    attribution: str | None
    acceptance_share: float | None
    position_note: str | None
    in_latest_run: bool


@dataclass
class Panel:
    key: PanelKey
    points: list[PointView] = field(default_factory=list)
    changes: list[ChangeView] = field(default_factory=list)

    @property
    def concurrencies(self) -> list[int]:
        return sorted({p.concurrency for p in self.points})

    @property
    def runs(self) -> list[int]:
        return sorted({p.run for p in self.points})

    @property
    def latest_run(self) -> int | None:
        return max((p.run for p in self.points), default=None)

    @property
    def latest_outcome(self) -> str | None:
        """The worst verdict of the panel's latest run (None: none of its points was judged)."""
        latest = self.latest_run
        return worst_outcome(p.outcome for p in self.points if p.run == latest)

    @property
    def last_change(self) -> ChangeView | None:
        """The newest change point; of one run's, the largest step."""
        return max(self.changes, key=lambda c: (c.run.index, abs(c.step), c.metric), default=None)


@dataclass(frozen=True)
class SpeedupView:
    run: int
    depth: int
    concurrency: int
    agg: float
    per_req: float | None


@dataclass(frozen=True)
class StopsPayingView:
    run: int
    shallower: int
    deeper: int
    concurrency: int | None  # None: the deeper depth paid at every concurrency measured


@dataclass(frozen=True)
class ScheduleView:
    run: int
    metric: str
    text: str
    depth_at: tuple[tuple[int, int], ...]  # (concurrency, the depth the schedule runs there)


@dataclass(frozen=True)
class MovedView:
    """A speculation category that moved and held (history/speculation.py)."""

    series: str
    run: RunView
    before: str
    after: str


@dataclass
class SpeculationGroup:
    profile: str
    hardware: str
    workload: str
    speedups: list[SpeedupView] = field(default_factory=list)
    stops_paying: list[StopsPayingView] = field(default_factory=list)
    schedules: list[ScheduleView] = field(default_factory=list)
    moved: list[MovedView] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"{self.profile} / {self.hardware} / {self.workload}"

    @property
    def latest_schedule(self) -> ScheduleView | None:
        return self.schedules[-1] if self.schedules else None


@dataclass
class SiteData:
    runs: list[RunView]
    panels: list[Panel]
    speculation: list[SpeculationGroup]
    kind: str | None  # the kind of runs shown (None: every kind)
    repo_url: str | None

    @property
    def changes(self) -> list[ChangeView]:
        return [c for panel in self.panels for c in panel.changes]


def chart_time(started_at: str) -> str:
    """An ISO time as Plotly's date axis reads it (UTC, no offset); unparsable: as given."""
    try:
        moment = dt.datetime.fromisoformat(started_at)
    except ValueError:
        return started_at
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def commit_url(repo_url: str | None, commit: str | None) -> str | None:
    """A commit's page on its repository (only for a hex commit id, and a known repository)."""
    if not repo_url or not commit or not _HEX_COMMIT.match(commit):
        return None
    return f"{repo_url.rstrip('/')}/commit/{commit}"


def worst_outcome(outcomes: Iterable[str | None]) -> str | None:
    found = {o for o in outcomes if o}
    return next((o for o in OUTCOME_ORDER if o in found), None)


def step_time_ms(
    depth: int, accept_length: float | None, per_req_tok_s: float | None
) -> float | None:
    """The time of one verify step as a request sees it: tokens per verify step (the accept
    length; 1 without speculation) over the request's tok/s."""
    tokens_per_step = 1.0 if depth == 0 else accept_length
    if not tokens_per_step or not per_req_tok_s or per_req_tok_s <= 0:
        return None
    return 1000.0 * tokens_per_step / per_req_tok_s


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _fingerprint(results_json: str | None) -> tuple[tuple[str, str], ...]:
    if not results_json:
        return ()
    try:
        found = _fingerprint_decoder.decode(results_json)
    except msgspec.DecodeError:
        return ()
    fields = {**(found.fingerprint or {}), **(found.testbed or {})}
    return tuple(
        (str(name), str(value))
        for name, value in fields.items()
        if value is not None and value != "" and not isinstance(value, dict | list)
    )


def run_views(runs: Sequence[Mapping[str, Any]], repo_url: str | None) -> list[RunView]:
    return [
        RunView(
            index=index,
            seq=int(run["seq"]),
            run_id=str(run["run_id"]),
            started_at=str(run["started_at"]),
            commit=run.get("tested_commit"),
            commit_url=commit_url(repo_url, run.get("tested_commit")),
            sglang_version=run.get("sglang_version"),
            sglang_git_hash=run.get("sglang_git_hash"),
            runner=run.get("runner"),
            tool_version=run.get("tool_version"),
            fingerprint=_fingerprint(run.get("results_json")),
        )
        for index, run in enumerate(runs)
    ]


def _interval(intervals: Mapping[str, Any], metric: str) -> tuple[float, float] | None:
    found = intervals.get(metric)
    if not isinstance(found, Mapping) or found.get("low") is None or found.get("high") is None:
        return None
    return float(found["low"]), float(found["high"])


def _in_ms(value: Percentiles | None) -> Percentiles | None:
    if value is None:
        return None
    return Percentiles(value.p50 * 1e3, value.p90 * 1e3, value.p99 * 1e3, value.mean * 1e3)


def point_view(run: int, depth: int, row: Mapping[str, Any]) -> PointView:
    intervals = json.loads(row.get("intervals_json") or "{}")
    latency = _latency_decoder.decode(row["point_json"]) if row.get("point_json") else None
    accept = _finite(row.get("accept_length"))
    per_req = _finite(row.get("per_req_tok_s"))
    return PointView(
        run=run,
        concurrency=int(row["concurrency"]),
        agg_tok_s=_finite(row.get("agg_tok_s")),
        agg_interval=_interval(intervals, "agg_tok_s"),
        per_req_tok_s=per_req,
        per_req_interval=_interval(intervals, "per_req_tok_s"),
        goodput_tok_s=_finite(row.get("goodput_tok_s")),
        ttft_ms=_in_ms(latency.ttft_s) if latency else None,
        itl_ms=_in_ms(latency.itl_s) if latency else None,
        accept_length=accept,
        position_accept=tuple(
            float(x) for x in json.loads(row.get("position_accept_json") or "[]")
        ),
        verify_steps_s=_finite(row.get("verify_steps_s")),
        step_ms=step_time_ms(depth, accept, per_req),
        kv_max_total_tokens=row.get("kv_max_total_tokens"),
        max_running_requests=row.get("max_running_requests"),
        speedup_agg=_finite(row.get("speedup_agg")),
        speedup_per_req=_finite(row.get("speedup_per_req")),
        outcome=row.get("outcome"),
    )


def _panel_key(run: Mapping[str, Any], depth: int) -> PanelKey:
    return PanelKey(
        str(run.get("profile")), str(run.get("hardware")), str(run.get("workload")), depth
    )


def change_view(change: ChangePoint, runs_by_seq: Mapping[int, RunView], latest: int) -> ChangeView:
    drop = change.position_drop
    note = (
        f"draft position {drop.position}: {drop.before:.2f} -> {drop.after:.2f}"
        if drop is not None and change.attribution == "acceptance"
        else None
    )
    run = runs_by_seq[change.night.seq]
    return ChangeView(
        metric=change.key.metric,
        concurrency=change.key.concurrency,
        run=run,
        before=change.before,
        after=change.after,
        step=change.step,
        step_low=change.step_low,
        step_high=change.step_high,
        p_value=change.p_value,
        attribution=change.attribution,
        acceptance_share=change.acceptance_share,
        position_note=note,
        in_latest_run=run.index == latest,
    )


def _schedule_depths(
    recommendation: Recommendation, concurrencies: Iterable[int]
) -> tuple[tuple[int, int], ...]:
    found = []
    for concurrency in sorted(set(concurrencies)):
        for item in recommendation.schedule:
            upper = item.max_concurrency
            if item.min_concurrency <= concurrency and (upper is None or concurrency <= upper):
                found.append((concurrency, item.depth))
                break
    return tuple(found)


def _schedule_text(recommendation: Recommendation) -> str:
    parts = []
    for item in recommendation.schedule:
        upper = item.max_concurrency
        span = (
            f"C>={item.min_concurrency}" if upper is None else f"C={item.min_concurrency}-{upper}"
        )
        depth = "no speculation" if item.depth == 0 else f"steps {item.depth}"
        parts.append(f"{depth} at {span}")
    return ", ".join(parts) or "none"


def speculation_groups(
    runs: Sequence[Mapping[str, Any]],
    views: Sequence[RunView],
    points_by_seq: Mapping[int, list[Mapping[str, Any]]],
    min_size: int,
) -> list[SpeculationGroup]:
    groups: dict[tuple[str, str, str], SpeculationGroup] = {}
    group_runs: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for run, view in zip(runs, views, strict=True):
        ident = (str(run.get("profile")), str(run.get("hardware")), str(run.get("workload")))
        group = groups.setdefault(ident, SpeculationGroup(*ident))
        group_runs.setdefault(ident, []).append(run)
        rows = points_by_seq.get(view.seq, [])
        for row in rows:
            agg = _finite(row.get("speedup_agg"))
            if agg is not None and int(row["depth"]) > 0:
                group.speedups.append(
                    SpeedupView(
                        view.index,
                        int(row["depth"]),
                        int(row["concurrency"]),
                        agg,
                        _finite(row.get("speedup_per_req")),
                    )
                )
        if not run.get("recommendation_json"):
            continue
        recommendation = _recommendation_decoder.decode(run["recommendation_json"])
        group.stops_paying.extend(
            StopsPayingView(view.index, s.shallower, s.deeper, s.concurrency)
            for s in recommendation.stops_paying
            if s.metric == recommendation.metric
        )
        group.schedules.append(
            ScheduleView(
                view.index,
                recommendation.metric,
                _schedule_text(recommendation),
                _schedule_depths(recommendation, (int(r["concurrency"]) for r in rows)),
            )
        )
    by_seq = {v.seq: v for v in views}
    for ident, group in groups.items():
        group.moved = [
            _moved(change, by_seq) for change in category_changes(group_runs[ident], min_size)
        ]
    return [
        groups[ident]
        for ident in sorted(groups)
        if groups[ident].speedups or groups[ident].schedules
    ]


def _moved(change: CategoryChange, runs_by_seq: Mapping[int, RunView]) -> MovedView:
    return MovedView(change.series, runs_by_seq[change.night.seq], change.before, change.after)


def assemble(
    runs: Sequence[Mapping[str, Any]],
    points: Sequence[Mapping[str, Any]],
    *,
    settings: DetectionSettings | None = None,
    kind: str | None = "nightly",
    repo_url: str | None = None,
) -> SiteData:
    """The site's data from the store's rows (runs oldest first)."""
    settings = settings or DetectionSettings()
    views = run_views(runs, repo_url)
    by_seq = {view.seq: view for view in views}
    runs_by_seq = {int(run["seq"]): run for run in runs}
    points_by_seq: dict[int, list[Mapping[str, Any]]] = {}
    panels: dict[PanelKey, Panel] = {}
    for row in points:
        seq = int(row["run_seq"])
        if seq not in by_seq:
            continue
        points_by_seq.setdefault(seq, []).append(row)
        depth = int(row["depth"])
        key = _panel_key(runs_by_seq[seq], depth)
        panels.setdefault(key, Panel(key)).points.append(point_view(by_seq[seq].index, depth, row))
    latest = len(views) - 1
    for change in detect_all(build_series(runs, points), settings):
        key = PanelKey(
            change.key.profile, change.key.hardware, change.key.workload, change.key.depth
        )
        if key in panels:
            panels[key].changes.append(change_view(change, by_seq, latest))
    for panel in panels.values():
        panel.points.sort(key=lambda p: (p.concurrency, p.run))
        panel.changes.sort(key=lambda c: (c.run.index, c.metric, c.concurrency))
    return SiteData(
        runs=views,
        panels=[panels[key] for key in sorted(panels)],
        speculation=speculation_groups(runs, views, points_by_seq, settings.min_size),
        kind=kind,
        repo_url=repo_url,
    )


def gather(
    store: HistoryStore,
    *,
    settings: DetectionSettings | None = None,
    kind: str | None = "nightly",
    repo_url: str | None = None,
) -> SiteData:
    """The site's data: the complete runs of ``kind`` (None: every kind) and their points,
    two queries however many runs the store holds."""
    runs = [r for r in store.runs(complete_only=True) if kind is None or r["kind"] == kind]
    points = store.points([int(r["seq"]) for r in runs]) if runs else []
    return assemble(runs, points, settings=settings, kind=kind, repo_url=repo_url)
