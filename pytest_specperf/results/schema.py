"""One results schema for the suite, the CLI and the reports (msgspec structs, JSON on disk)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

# The open-loop and testbed structs live in their own modules; their names are this module's
# too, so that every part imports results.json's types from one place.
from pytest_specperf.results.open_loop_schema import RateProbe as RateProbe
from pytest_specperf.results.open_loop_schema import RateSearch as RateSearch
from pytest_specperf.results.open_loop_schema import SendTime as SendTime
from pytest_specperf.results.open_loop_schema import ServerLoad as ServerLoad
from pytest_specperf.results.testbed_schema import CPU_BOUND_MEANING as CPU_BOUND_MEANING
from pytest_specperf.results.testbed_schema import CPU_BOUND_SHARE as CPU_BOUND_SHARE
from pytest_specperf.results.testbed_schema import GPU_BUSY_SHARE as GPU_BUSY_SHARE
from pytest_specperf.results.testbed_schema import Bound as Bound
from pytest_specperf.results.testbed_schema import GpuUse as GpuUse
from pytest_specperf.results.testbed_schema import ServerCpu as ServerCpu
from pytest_specperf.results.testbed_schema import Testbed as Testbed
from pytest_specperf.results.testbed_schema import follows_its_core as follows_its_core
from pytest_specperf.results.testbed_schema import point_bound as point_bound

RESULTS_SCHEMA_VERSION = 1
# The throughput tolerance of a baseline that records none (a published figure, a point without
# recorded noise): the option's default (--specperf-tolerance) and the baselines' own.
DEFAULT_THROUGHPUT_TOLERANCE = 0.10

RunStatus = Literal["running", "complete", "failed"]


class Percentiles(msgspec.Struct, frozen=True):
    p50: float
    p90: float
    p99: float
    mean: float


class RequestRecord(msgspec.Struct, kw_only=True):
    """What the client saw of one request. Times are time.monotonic() seconds."""

    ok: bool
    error: str | None = None
    start: float
    end: float
    first_chunk: float | None = None
    # Arrival time and server-reported token count of every chunk that carried tokens.
    chunk_times: list[float] = []
    chunk_tokens: list[int] = []
    completion_tokens: int = 0
    prompt_tokens: int | None = None
    spec_verify_ct: int | None = None
    server_e2e_s: float | None = None
    # Verify steps by correct drafts (SGLang's spec_correct_drafts_histogram); see acceptance.py.
    accept_histogram: list[int] | None = None
    # Open loop (measure/openloop.py): when the schedule said to send it (``start``: when it
    # was sent), and how much of the send's lateness the OS kept the sender off the CPU.
    scheduled: float | None = None
    send_held: float | None = None
    # meta_info of the last chunk: times SGLang retracted it (KV pool full: back to the queue),
    # and prompt tokens it found in the prefix cache.
    num_retractions: int | None = None
    cached_tokens: int | None = None


class ClientHealth(msgspec.Struct, frozen=True, kw_only=True):
    """How the load generator itself fared during a point (measure/client_monitor.py)."""

    cpu_s: float
    wall_s: float
    loop_lag_p50_s: float
    loop_lag_p99_s: float
    loop_lag_max_s: float
    samples: int
    # Client processes of the point; with several, cpu_s is their sum, the lags their worst.
    processes: int = 1
    busiest_cpu_share: float | None = None

    @property
    def cpu_share(self) -> float:
        """CPU time of the client per second of wall time (1.0 = one core busy)."""
        return self.cpu_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def cpu_share_of_busiest(self) -> float:
        """The busiest client process's CPU share (one asyncio process tops out at 1.0)."""
        return self.cpu_share if self.busiest_cpu_share is None else self.busiest_cpu_share


class Interval(msgspec.Struct, frozen=True, kw_only=True):
    """A confidence interval of a reported figure (see gate/decision.py for the method)."""

    low: float
    high: float
    level: float
    method: str


class Slo(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Service-level objectives (``--specperf-slo``); see measure/goodput.py for the rules.

    A request meets them when its TTFT, the p99 of its own inter-token latencies and its e2e
    are each within the limit set (an unset limit is not checked); a point meets them when at
    least ``attainment`` of its requests (failed ones count as misses) do.
    """

    ttft_p99_ms: float | None = None
    itl_p99_ms: float | None = None
    e2e_p99_ms: float | None = None
    attainment: float = 0.99


class Goodput(msgspec.Struct, kw_only=True):
    """One point under the SLOs: the tokens of requests that met every SLO, per second."""

    goodput_tok_s: float
    requests_meeting: int
    requests: int
    # Misses by reason: "failed", "ttft", "itl", "e2e" (a request can miss several).
    misses: dict[str, int] = {}
    meets_slo: bool
    # The share of requests that must meet the SLOs for the point to (Slo.attainment).
    required_attainment: float = 0.99

    @property
    def attainment(self) -> float:
        return self.requests_meeting / self.requests if self.requests else 0.0


class PointMetrics(msgspec.Struct, kw_only=True):
    """The figures of one (depth, concurrency) point; definitions in metrics.py.

    An open-loop point (``load`` set: requests sent on a schedule, not when earlier ones end)
    is kept in ``DepthRun.rate_points``, keyed by ``load``; its ``concurrency`` is the most
    requests the client had in flight at once.
    """

    concurrency: int
    requests: int
    ok: int
    failed: int
    errors: dict[str, int] = {}
    tokens: int
    wall_s: float
    agg_tok_s: float
    per_req_tok_s: float | None
    ttft_s: Percentiles | None = None
    itl_s: Percentiles | None = None
    tpot_s: Percentiles | None = None
    e2e_s: Percentiles | None = None
    accept_length: float | None = None
    spec_verify_ct: int = 0
    chunks: int = 0
    client: ClientHealth | None = None
    # With repeats: the figures above are the medians of the samples; intervals by metric
    # name ("agg_tok_s", "per_req_tok_s", ...); samples holds every repeat's own figures.
    intervals: dict[str, Interval] = {}
    samples: list[PointMetrics] = []
    # Why the load generator, not the server, bounded this point (None: it did not).
    client_bound: str | None = None
    # Figures that cannot be true (e2e shorter than TTFT, tokens not matching meta_info, ...).
    truth_problems: list[str] = []
    # Which server boot of its depth measured this sample (0: the first; calibration across
    # boots restarts the server, and noise between boots is told from noise within one).
    boot: int = 0
    # Verify steps by correct drafts, summed over the point's successful requests (and its
    # samples), and the acceptance rate of draft positions 1, 2, ... (results/acceptance.py;
    # with repeats: position by position, the median of the samples' rates).
    accept_histogram: list[int] = []
    position_accept_rate: list[float] = []
    # With --specperf-slo: this point under the SLOs (measure/goodput.py).
    goodput: Goodput | None = None
    # Measured by --specperf-refine at a boundary of the recommendation, after the sweep.
    refined: bool = False
    # The server's busiest process during the sample (None: not a server this run started);
    # with repeats, the least busy of the samples' (CPU-bound only if every sample was).
    server_cpu: ServerCpu | None = None
    # Open loop: the schedule's key ("rate=4", "rate=4,burstiness=0.5", "trace"; None: a
    # closed-loop point), the offered request rate (requests/s over the schedule), each
    # request's scheduled and actual send, and how late the sends were (s).
    load: str | None = None
    request_rate: float | None = None
    send_times: list[SendTime] = []
    send_lag_s: Percentiles | None = None
    # Retractions (summed meta_info num_retractions) and prompt tokens found in the prefix
    # cache (summed meta_info cached_tokens), over the successful requests.
    retractions: int | None = None
    cached_tokens: int | None = None
    # The server's own count of its running and queued requests during the point.
    server_load: ServerLoad | None = None

    # The server's GPUs during the sample (None: not read: no NVML, or not a local server);
    # with repeats, the least busy of the samples'.
    gpu: GpuUse | None = None
    # point_bound of the sample; with repeats, the samples' when they agree, else mixed.
    bound: Bound | None = None

    @property
    def key(self) -> str:
        """The point's name in baselines, verdicts and history: ``C=4`` or its load."""
        return self.load if self.load is not None else f"C={self.concurrency}"

    @property
    def success_rate(self) -> float:
        return self.ok / self.requests if self.requests else 0.0

    @property
    def median_request_tok_s(self) -> float | None:
        """The median request's decode rate (1 / TPOT p50), else the mean per-request rate.

        The mean (Per-req tok/s) is skewed by streams that end after a few tokens, as
        EOS-respecting workloads have: their first and last chunks can arrive together and
        give an enormous rate. The median request is what a user sees.
        """
        if self.tpot_s is not None and self.tpot_s.p50 > 0:
            return 1.0 / self.tpot_s.p50
        return self.per_req_tok_s

    def all_samples(self) -> list[PointMetrics]:
        """Every sample behind this point: its repeats, or the point itself when not repeated."""
        return self.samples or [self]

    def boots(self) -> set[int]:
        """The server boots its samples were measured in."""
        return {sample.boot for sample in self.all_samples()}


class ServerSummary(msgspec.Struct, kw_only=True):
    """What /server_info said, reduced to what the suite compares and shows."""

    url: str
    version: str | None = None
    model_path: str | None = None
    tp_size: int | None = None
    speculative_algorithm: str | None = None
    speculative_num_steps: int | None = None
    speculative_eagle_topk: int | None = None
    speculative_num_draft_tokens: int | None = None
    kv_cache_dtype: str | None = None
    max_total_num_tokens: int | None = None
    max_running_requests: int | None = None
    lifetime_accept_length: float | None = None
    sim: dict[str, Any] | None = None
    launch_command: str | None = None
    boot_s: float | None = None
    # The GPUs the suite gave this server (its CUDA_VISIBLE_DEVICES); None: not assigned.
    gpus: list[str] | None = None
    # --specperf-server-cpu of this boot (None: a server this run did not start, or a file
    # older than the option); with pin-fastest, each free vCPU's single-thread speed timed
    # before the boot (M iterations/s, server/cpu_use.py) and the vCPU the scheduler got.
    cpu_placement: str | None = None
    free_core_speeds: dict[int, float] | None = None
    pinned_core: int | None = None


VerdictOutcome = Literal["regression", "improvement", "pass", "unjudged", "no-baseline", "recorded"]


class Verdict(msgspec.Struct, kw_only=True):
    """The gate's decision on one metric of one point (or of a whole depth: concurrency None)."""

    depth: int
    concurrency: int | None
    metric: str
    outcome: VerdictOutcome
    measured: float | None = None
    interval: Interval | None = None
    floor: float | None = None
    baseline: float | None = None
    samples: list[float] = []
    noise_source: str | None = None
    # remeasured: borderline at first, so judged again with more samples; confirmed: a
    # regression that the re-measuring upheld.
    remeasured: bool = False
    confirmed: bool = False
    # An improvement: the command that re-records the baseline, to run after review.
    refresh_command: str | None = None
    message: str = ""
    # An open-loop point's load ("rate=4", "trace"); its concurrency is then None.
    load: str | None = None


class SelfTest(msgspec.Struct, kw_only=True):
    """--specperf-self-test: a known /slow_down set on the server, and whether the gate saw it."""

    slowdown_s: float
    concurrency: int
    reference: str  # what the slowed point was judged against (a baseline file or this run)
    before_agg_tok_s: float | None = None
    before_per_req_tok_s: float | None = None
    slowed_agg_tok_s: float | None = None
    slowed_per_req_tok_s: float | None = None
    after_agg_tok_s: float | None = None
    caught: bool = False
    gate_messages: list[str] = []
    reset: bool = False
    problem: str | None = None


class Speedup(msgspec.Struct, frozen=True, kw_only=True):
    """One point of a speculative depth divided by the same point of the control (depth 0)."""

    depth: int
    concurrency: int
    agg: float
    per_req: float | None = None


class OutputComparison(msgspec.Struct, kw_only=True):
    """Greedy outputs of one depth against a reference depth (measure/lossless.py)."""

    depth: int
    reference_depth: int
    prompts: int
    identical: int
    # Prompt name -> first differing token index; absent for identical outputs.
    first_divergence: dict[str, int] = {}
    # Prompt name -> length of the common prefix / length of the reference output.
    prefix_match: dict[str, float] = {}

    @property
    def match_rate(self) -> float:
        return self.identical / self.prompts if self.prompts else 1.0


WarmupStop = Literal["settled", "rounds", "seconds"]


class Warmup(msgspec.Struct, kw_only=True):
    """The warm-up before the first measured sample of one boot (measure/warmup.py)."""

    # Which boot of its depth (0: the first), as PointMetrics.boot.
    boot: int = 0
    seconds: float
    rounds: int
    # Two consecutive rounds agreed within ``tolerance`` at every concurrency.
    settled: bool
    stopped_by: WarmupStop
    concurrency: list[int]
    # Aggregate tok/s of each round (outer), per concurrency in ``concurrency`` order (inner).
    agg_tok_s: list[list[float]] = []
    tolerance: float
    max_rounds: int
    max_seconds: float | None = None


class DepthRun(msgspec.Struct, kw_only=True):
    """One server (one speculation depth) and the points measured on it."""

    depth: int
    profile: str
    backend: str
    hardware: str
    workload: dict[str, Any]
    server: ServerSummary | None = None
    points: list[PointMetrics] = []
    planned_concurrency: list[int] = []
    status: RunStatus = "running"
    failure: str | None = None
    verdicts: list[Verdict] = []
    # Over every point of the depth (as accept_length): see results/acceptance.py.
    accept_histogram: list[int] = []
    position_accept_rate: list[float] = []
    # Greedy output ids of the fixed prompt set, by prompt name (measure/lossless.py).
    greedy_outputs: dict[str, list[int]] = {}
    self_test: SelfTest | None = None
    # One per boot of the depth: each boot's warm-up before its first measured sample.
    warmups: list[Warmup] = []
    # Open-loop points (--specperf-request-rate, a trace workload), by their ``load``.
    rate_points: list[PointMetrics] = []
    # With --specperf-request-rate and --specperf-slo: the highest rate that met the SLOs.
    rate_search: RateSearch | None = None

    # The machine it ran on (None: a run older than the fingerprint, or not collected).
    testbed: Testbed | None = None

    def rate_point(self, load: str) -> PointMetrics | None:
        for item in self.rate_points:
            if item.load == load:
                return item
        return None

    def point(self, concurrency: int) -> PointMetrics | None:
        for item in self.points:
            if item.concurrency == concurrency:
                return item
        return None

    @property
    def accept_length(self) -> float | None:
        """Run-scoped: sum(completion tokens) / sum(verify steps) over all closed-loop points."""
        return accept_length_over(self.points)

    @property
    def open_loop_accept_length(self) -> float | None:
        """The same over the open-loop points (a trace's replay, request rates)."""
        return accept_length_over(self.rate_points)


def accept_length_over(points: Sequence[PointMetrics]) -> float | None:
    """sum(completion tokens) / sum(verify steps) of ``points``; None: no verify step."""
    verify = sum(p.spec_verify_ct for p in points)
    if verify == 0:
        return None
    return sum(p.tokens for p in points) / verify


class ScheduleRange(msgspec.Struct, frozen=True, kw_only=True):
    """Run ``depth`` from ``min_concurrency`` to ``max_concurrency`` (None: no upper bound)."""

    min_concurrency: int
    max_concurrency: int | None
    depth: int


class BestDepth(msgspec.Struct, frozen=True, kw_only=True):
    """At one measured concurrency, the best depth by each metric (None: not measurable)."""

    concurrency: int
    by_agg: int | None = None
    by_per_req: int | None = None
    by_goodput: int | None = None


class StopsPaying(msgspec.Struct, frozen=True, kw_only=True):
    """The lowest measured concurrency from which ``deeper`` no longer beats ``shallower``."""

    shallower: int
    deeper: int
    metric: str  # "agg_tok_s" | "per_req_tok_s" | "goodput_tok_s"
    concurrency: int | None  # None: the deeper depth paid at every concurrency measured


class StepCost(msgspec.Struct, frozen=True, kw_only=True):
    """What going from ``shallower`` to ``deeper`` costs in KV capacity, per extra step."""

    shallower: int
    deeper: int
    kv_tokens_lost_per_step: float | None = None
    running_requests_lost_per_step: float | None = None


class SloCapacity(msgspec.Struct, frozen=True, kw_only=True):
    """Per depth: the largest concurrency at which it and every lower measured point met the
    SLOs (None: not even the lowest did)."""

    depth: int
    max_concurrency: int | None


class Recommendation(msgspec.Struct, kw_only=True):
    """Which depth to run at which load, from a multi-depth run (gate/recommend.py)."""

    # The metric the schedule optimises: goodput_tok_s with SLOs, else agg_tok_s.
    metric: str
    schedule: list[ScheduleRange] = []
    # The schedule of every metric, by metric name.
    schedules: dict[str, list[ScheduleRange]] = {}
    best: list[BestDepth] = []
    stops_paying: list[StopsPaying] = []
    kv_cost: list[StepCost] = []
    slo_capacity: list[SloCapacity] = []
    # Pairs of measured concurrencies between which the best depth changes.
    boundaries: list[list[int]] = []
    margin: float = 0.0


class AbChange(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A/B mode: one point's change head / base over the pairs of boots (concurrency None:
    the depth pooled), as fractions (-0.05: head 5% slower), with the interval over pairs and
    its split into acceptance and step time (gate/ab/verdict.py, gate/attribution.py)."""

    concurrency: int | None = None
    base_median: float | None = None
    head_median: float | None = None
    change: float
    low: float | None = None
    high: float | None = None
    acceptance_change: float | None = None
    step_time_change: float | None = None
    why: str = ""


class AbPair(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A/B mode: one pair of boots, pooled over its points (gate/ab/verdict.py, pair_record), as
    fractions: its change head / base and that change's acceptance and step-time parts."""

    pair: int  # 1: the first pair booted
    change: float
    acceptance_change: float | None = None
    step_time_change: float | None = None
    # The median speed of the vCPU each side's CPU-bound server process ran on
    # (ServerCpu.core_speed over the boot's points, M loop iterations/s; None: not timed).
    base_core_speed: float | None = None
    head_core_speed: float | None = None


class AbStall(msgspec.Struct, kw_only=True):
    """A/B mode: one sample far slower than its boot's other samples (gate/ab/stalls.py)."""

    pair: int
    side: str  # base or head
    concurrency: int
    tok_s: float
    others_median: float  # the median of the boot's other samples at that point
    left_out: bool  # False: kept in the figures (head stalled more often than base)


class AbComparison(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A/B mode: one depth's comparison of base and head, booted in pairs (run/ab/)."""

    depth: int
    # regression, improvement, no-regression, undecided, failed (a boot failed: see message),
    # or interrupted (a signal ended it: its pairs so far are kept, the message says when)
    outcome: str
    pairs: int
    # The sides in boot order ("base", "head", "head", "base", ...).
    boots: list[str] = []
    # Seconds the servers were up (times each server's GPUs, the GPU-seconds; the simulator
    # has none).
    server_seconds: float = 0.0
    min_effect: float = 0.05
    alpha: float = 0.01
    message: str = ""
    pooled: AbChange | None = None
    points: list[AbChange] = []
    # Each pair's own change, in boot order: what moved between the boots of a pair.
    pair_changes: list[AbPair] = []
    # The two-sided level of the repeated intervals of `points` and `pooled` (1 - 2 alpha), at
    # the last look; and which of the pooled change's intervals decided there, in words.
    interval_level: float | None = None
    decided_by: str = ""
    # Stalled samples (gate/ab/stalls.py): those left out of the figures (the pairs' changes
    # above are without them) and those of head kept in them; the boots' own results keep
    # every sample.
    stalls: list[AbStall] = []


class RunResults(msgspec.Struct, kw_only=True):
    schema_version: int = RESULTS_SCHEMA_VERSION
    run_id: str
    started_at: str
    tool_version: str
    runs: list[DepthRun] = []
    # With the control (depth 0) in the run: every other depth's points divided by its own.
    speedup: list[Speedup] = []
    # Every pair of depths whose greedy outputs were compared, the later one against the earlier.
    lossless: list[OutputComparison] = []
    # Speculative depths whose speedup floors were judged (each once, by whichever of the
    # depth and the control finished its sweep last).
    speedup_judged: list[int] = []
    slo: Slo | None = None
    recommendation: Recommendation | None = None
    # `git rev-parse HEAD` of the directory the run was started in (None: not a git checkout).
    tested_commit: str | None = None
    # Set when a SIGINT or SIGTERM ended the run: which, and what was running (no baseline is
    # written from such a run).
    interrupted: str | None = None
    # A/B mode (--specperf-base-*): each depth's comparison of base and head.
    ab: list[AbComparison] = []
    # Once the run has ended: its exit status (pytest's, or `specperf bench`'s; None while it
    # runs, or from an older file) and the reasons of a red one beyond the depths' failures
    # and the verdicts (a gate that judged nothing, bench's problems), one line each.
    exit_status: int | None = None
    exit_reasons: list[str] = []
    # Once a green run has ended: what it did not judge and why, one line each (an exploratory
    # run's, --specperf-allow-no-baseline), which report.md says beside its verdicts.
    exit_notes: list[str] = []

    def depth(self, depth: int) -> DepthRun | None:
        for run in self.runs:
            if run.depth == depth:
                return run
        return None
