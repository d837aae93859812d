"""One results schema for the suite, the CLI and the reports (msgspec structs, JSON on disk)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

RESULTS_SCHEMA_VERSION = 1

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


class ClientHealth(msgspec.Struct, frozen=True, kw_only=True):
    """How the load generator itself fared during a point (see client_health.py)."""

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


class PointMetrics(msgspec.Struct, kw_only=True):
    """The figures of one (depth, concurrency) point; definitions in metrics.py."""

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

    @property
    def success_rate(self) -> float:
        return self.ok / self.requests if self.requests else 0.0


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
    confirmed: bool = False
    message: str = ""


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

    def point(self, concurrency: int) -> PointMetrics | None:
        for item in self.points:
            if item.concurrency == concurrency:
                return item
        return None

    @property
    def accept_length(self) -> float | None:
        """Run-scoped: sum(completion tokens) / sum(verify steps) over all points."""
        verify = sum(p.spec_verify_ct for p in self.points)
        if verify == 0:
            return None
        return sum(p.tokens for p in self.points) / verify


class RunResults(msgspec.Struct, kw_only=True):
    schema_version: int = RESULTS_SCHEMA_VERSION
    run_id: str
    started_at: str
    tool_version: str
    runs: list[DepthRun] = []

    def depth(self, depth: int) -> DepthRun | None:
        for run in self.runs:
            if run.depth == depth:
                return run
        return None
