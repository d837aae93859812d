"""Every option of the suite, in one table, and option values -> validated settings.

``OPTIONS`` is the only place an option, its default and its parser are written: the pytest
plugin registers its command-line options and ini keys from it, :func:`build_settings` reads
it, and the ``specperf`` command builds its flags from it. To add an option, add one
:class:`OptionSpec` row (and the :class:`Settings` field it feeds, if any).

Each parser raises UsageError with one line naming the option and the bad value.
"""

from __future__ import annotations

import math
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pytest_specperf.depth import MAX_DEPTH, MIN_DEPTH
from pytest_specperf.errors import UsageError
from pytest_specperf.gate.baselines import DEFAULT_THROUGHPUT_TOLERANCE
from pytest_specperf.measure.goodput import parse_slo
from pytest_specperf.measure.procs import STREAMS_PER_PROCESS
from pytest_specperf.measure.warmup import DEFAULT_MAX_ROUNDS, DEFAULT_TOLERANCE, WarmupPlan
from pytest_specperf.measure.workload import (
    DEFAULT_WORKLOAD,
    SEED_CONCURRENCY,
    WORKLOADS,
    Endpoint,
    Workload,
    WorkloadName,
    workload_preset,
)
from pytest_specperf.profiles import DEFAULT_PROFILE, Profile, resolve_profile
from pytest_specperf.results.schema import Slo
from pytest_specperf.run_profiles import RunProfile, resolve_run_profile, with_run_profile
from pytest_specperf.server.cpu_use import SERVER_CPU_PLACEMENTS, ServerCpuPlacement
from pytest_specperf.server.gpus import parse_gpu_ids
from pytest_specperf.server.launch import BACKENDS, Backend
from pytest_specperf.server.process import (
    DEFAULT_BOOT_SILENCE_TIMEOUT_S,
    DEFAULT_LAUNCH_TIMEOUT_S,
)

API_KEY_ENV = "SPECPERF_API_KEY"
ALLOW_DOWNGRADE_FLAG = "--specperf-allow-baseline-downgrade"
ALLOW_NO_BASELINE_FLAG = "--specperf-allow-no-baseline"
MAX_CONCURRENCY = 4096
# Points shorter than about a second were measured drifting (up to 27% between boots on the
# H200, 5-11% CV on the simulator); past 2 s longer points bought little:
# docs/explanation/repeats.md.
DEFAULT_MIN_POINT_SECONDS = 2.0
ENDPOINTS: tuple[Endpoint, ...] = ("generate", "completions")
ConfirmMode = Literal["fresh-boot", "same-boot", "off"]
T = TypeVar("T", bound=str)


def parse_int_list(option: str, raw: str, *, low: int, high: int) -> tuple[int, ...]:
    """``"1,2,3"`` -> (1, 2, 3): sorted, unique, each within [low, high]."""
    text = str(raw).strip()
    if not text:
        raise UsageError(f"{option}: empty value; expected a number or a list like 1,2,3")
    values: set[int] = set()
    for part in text.split(","):
        item = part.strip()
        try:
            number = int(item)
        except ValueError:
            raise UsageError(f"{option}: {item!r} is not a whole number (got {raw!r})") from None
        if not low <= number <= high:
            raise UsageError(f"{option}: {number} is out of range {low}..{high} (got {raw!r})")
        values.add(number)
    return tuple(sorted(values))


def parse_depths(raw: str, option: str = "--spec-steps") -> tuple[int, ...]:
    return parse_int_list(option, raw, low=MIN_DEPTH, high=MAX_DEPTH)


def parse_concurrency(raw: str, option: str = "--specperf-concurrency") -> tuple[int, ...]:
    return parse_int_list(option, raw, low=1, high=MAX_CONCURRENCY)


def parse_float(
    option: str, raw: Any, *, low: float, high: float = math.inf, low_open: bool = False
) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise UsageError(f"{option}: {raw!r} is not a number") from None
    if not math.isfinite(value) or value > high or value < low or (low_open and value == low):
        bound = f"> {low:g}" if low_open else f">= {low:g}"
        upper = "" if high == math.inf else f" and <= {high:g}"
        raise UsageError(f"{option}: {raw!r} must be {bound}{upper}")
    return value


def parse_positive_int(option: str, raw: Any) -> int:
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise UsageError(f"{option}: {raw!r} is not a whole number") from None
    if value < 1:
        raise UsageError(f"{option}: {raw!r} must be >= 1")
    return value


def parse_count(option: str, raw: Any) -> int:
    """A whole number >= 0."""
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise UsageError(f"{option}: {raw!r} is not a whole number") from None
    if value < 0:
        raise UsageError(f"{option}: {raw!r} must be >= 0")
    return value


def parse_choice(option: str, raw: Any, choices: Sequence[T], *, any_case: bool = False) -> T:
    """``raw`` as the one of ``choices`` it names (spaces around it ignored)."""
    value = str(raw).strip()
    for choice in choices:
        if value == choice or (any_case and value.lower() == choice):
            return choice
    raise UsageError(f"{option}: {raw!r} is not one of {', '.join(choices)}")


def parse_backend(raw: str, option: str = "--specperf-backend") -> Backend:
    return parse_choice(option, raw, BACKENDS, any_case=True)


def parse_endpoint(raw: str, option: str = "--specperf-endpoint") -> Endpoint:
    return parse_choice(option, raw, ENDPOINTS)


def parse_workload(raw: str, option: str = "--specperf-workload") -> WorkloadName:
    return parse_choice(option, raw, WORKLOADS)


def parse_url(raw: str, option: str = "--specperf-url") -> str:
    text = str(raw).strip().rstrip("/")
    scheme, _, rest = text.partition("://")
    if scheme not in ("http", "https") or not rest or any(c.isspace() for c in rest):
        raise UsageError(f"{option}: {raw!r} is not an http(s) URL like http://host:30000")
    return text


def parse_server_args(
    raw: list[str] | None, option: str = "--specperf-server-arg"
) -> tuple[str, ...]:
    """Each value is split like a shell would: ``"--mem-fraction-static 0.8"`` is two items."""
    args: list[str] = []
    for value in raw or ():
        try:
            args.extend(shlex.split(value))
        except ValueError as exc:
            raise UsageError(f"{option}: cannot split {value!r}: {exc}") from None
    if args and not args[0].startswith("-"):
        raise UsageError(f"{option}: {args[0]!r} must start with '--' (a server flag)")
    return tuple(args)


def parse_dir_list(raw: str | list[str] | None) -> tuple[str, ...]:
    """Directories given as a comma list, as repeated values, or both: ``a,b`` == ``a`` ``b``."""
    values = [raw] if isinstance(raw, str) else list(raw or ())
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


# -- the table ---------------------------------------------------------------------------------
OptionKind = Literal["value", "flag", "append"]
# A parser takes (the flag it reports errors under, the raw value or None) -> the parsed value.
Parser = Callable[[str, Any], Any]
_WORKLOAD = Workload()  # the seed benchmark: its field defaults are the options' defaults


def _text(option: str, raw: Any) -> str | None:
    return str(raw) if raw else None


def _required_text(option: str, raw: Any) -> str:
    text = str(raw or "").strip()
    if not text:
        raise UsageError(f"{option}: empty value")
    return text


def _positive_int_or_none(option: str, raw: Any) -> int | None:
    return parse_positive_int(option, raw) if raw else None


def _float_in(
    low: float, high: float = math.inf, *, low_open: bool = False, optional: bool = False
) -> Parser:
    def parse(option: str, raw: Any) -> float | None:
        if optional and not raw:
            return None
        return parse_float(option, raw, low=low, high=high, low_open=low_open)

    return parse


def _flag(option: str, raw: Any) -> bool:
    return bool(raw)


# Boots of a calibration when none is given: the fewest from which the gate uses the measured
# noise between boots (gate.decision.MIN_BOOTS_FOR_BOOT_NOISE; below, it assumes at least 5%).
# More boots estimate it better (docs/explanation/ab-gating.md); each costs a server start.
DEFAULT_CALIBRATE_BOOTS = 3


@dataclass(frozen=True)
class OptionSpec:
    """One option: written once, registered in pytest, ini files and the ``specperf`` CLI."""

    flag: str  # the pytest flag, e.g. "--specperf-backend"
    key: str  # build_settings' name; the ini key is specperf_<key>
    help: str
    default: str | None = None  # as it would be typed; None: not set
    parse: Parser = _text
    kind: OptionKind = "value"  # value: one string; flag: on/off; append: repeatable
    ini: bool = True  # also settable as specperf_<key> in [tool.pytest.ini_options]
    commands: tuple[str, ...] = ()  # `specperf` subcommands that take it
    short: str | None = None  # the `specperf` CLI's own name for it, e.g. "--url"

    @property
    def dest(self) -> str:
        return f"specperf_{self.key}"

    @property
    def ini_name(self) -> str:
        return f"specperf_{self.key}"

    def cli_flags(self) -> tuple[str, ...]:
        return (self.short, self.flag) if self.short else (self.flag,)

    def value(self, raw: Any, *, option: str | None = None) -> Any:
        """The parsed value of ``raw`` (None or an empty list: the default)."""
        given = raw if raw not in (None, []) else self.default
        return self.parse(option or self.flag, given)


LAUNCH_CMD = "launch-cmd"
BENCH = "bench"

CONFIRM_MODES: tuple[ConfirmMode, ...] = ("fresh-boot", "same-boot", "off")


def parse_confirm(option: str, raw: Any) -> ConfirmMode:
    return parse_choice(option, raw, CONFIRM_MODES)


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "--spec-steps",
        "spec_steps",
        "speculation depth(s) to boot and measure: 3 or 0,1,2,3 (0: no speculation, the "
        "control every other depth's speedup is measured against)",
        default="3",
        parse=lambda option, raw: parse_depths(raw, option),
        commands=(LAUNCH_CMD,),
    ),
    OptionSpec(
        "--specperf-backend",
        "backend",
        "server to boot: sglang (real) or sim (embedded simulator)",
        default="sglang",
        parse=lambda option, raw: parse_backend(raw, option),
        commands=(LAUNCH_CMD,),
    ),
    OptionSpec(
        "--specperf-url",
        "url",
        "measure an existing server at this URL; nothing is booted",
        parse=lambda option, raw: parse_url(raw, option) if raw else None,
        commands=(BENCH,),
        short="--url",
    ),
    OptionSpec(
        "--specperf-concurrency",
        "concurrency",
        "concurrency levels of the closed-loop sweep",
        default=",".join(map(str, SEED_CONCURRENCY)),
        parse=lambda option, raw: parse_concurrency(raw, option),
        commands=(BENCH,),
        short="--concurrency",
    ),
    OptionSpec(
        "--specperf-profile",
        "profile",
        "deployment profile: a name or a .toml path",
        default=DEFAULT_PROFILE,
        parse=_required_text,
        commands=(LAUNCH_CMD, BENCH),
    ),
    OptionSpec(
        "--specperf-profile-dir",
        "profile_dir",
        "extra directories of profile .toml files (comma-separated, repeatable)",
        parse=lambda option, raw: parse_dir_list(raw),
        kind="append",
        commands=(LAUNCH_CMD, BENCH),
    ),
    OptionSpec(
        "--specperf-run-profile",
        "run_profile",
        "run profile: smoke, pr, nightly (or one of --specperf-run-profiles); sets the depths, "
        "concurrency, tokens and repeats that no option sets",
    ),
    OptionSpec(
        "--specperf-run-profiles",
        "run_profiles",
        "a TOML file of run profiles (relative to the rootdir) that changes or adds to the "
        "shipped ones",
    ),
    OptionSpec(
        "--specperf-server-arg",
        "server_arg",
        "extra server flag(s), appended last; repeatable "
        "(e.g. --specperf-server-arg=--sim-slowdown=0.2)",
        parse=lambda option, raw: parse_server_args(raw, option),
        kind="append",
        ini=False,
        commands=(LAUNCH_CMD,),
    ),
    OptionSpec(
        "--specperf-baselines",
        "baselines",
        "baselines directory",
        default="baselines",
        parse=_required_text,
    ),
    OptionSpec(
        "--specperf-update-baselines",
        "update_baselines",
        "after the run, write baselines for every depth whose points all succeeded",
        parse=_flag,
        kind="flag",
        ini=False,
    ),
    OptionSpec(
        "--specperf-out",
        "out",
        "artifact directory: results.json, report.md, server logs",
        default=".specperf",
        parse=_required_text,
        commands=(BENCH,),
        short="--out",
    ),
    OptionSpec(
        "--specperf-launch-timeout",
        "launch_timeout",
        "seconds to wait for /health_generate",
        default=f"{DEFAULT_LAUNCH_TIMEOUT_S:g}",
        parse=_float_in(0.0, low_open=True),
    ),
    OptionSpec(
        "--specperf-boot-silence-timeout",
        "boot_silence_timeout",
        "fail a boot whose server log has had no new line for this many seconds while it is "
        "not yet healthy, with the log tail and what its processes are doing, instead of "
        "waiting out --specperf-launch-timeout (0: off); generous enough for CUDA graph capture",
        default=f"{DEFAULT_BOOT_SILENCE_TIMEOUT_S:g}",
        parse=_float_in(0.0),
    ),
    OptionSpec(
        "--specperf-sim-speedup",
        "sim_speedup",
        "simulator only: divide every simulated time by this factor",
        default="5",
        parse=_float_in(0.0, low_open=True),
        commands=(LAUNCH_CMD,),
    ),
    OptionSpec(
        "--specperf-hardware",
        "hardware",
        "hardware key for baselines (default: from nvidia-smi or the simulator)",
        commands=(BENCH,),
        short="--hardware",
    ),
    OptionSpec(
        "--specperf-workload",
        "workload",
        "what the requests are: greedy-synthetic (the seed's: one prompt, temperature 0, "
        "ignore_eos), realistic (shipped coding/agentic/chat prompts, temperature 0.7, "
        "top_p 0.95, EOS respected) or long-context (8k-24k word prompts, sampled like "
        "realistic)",
        default=DEFAULT_WORKLOAD,
        parse=lambda option, raw: parse_workload(raw, option),
        commands=(BENCH,),
        short="--workload",
    ),
    OptionSpec(
        "--specperf-max-new-tokens",
        "max_new_tokens",
        "output tokens per request",
        default=str(_WORKLOAD.max_new_tokens),
        parse=parse_positive_int,
        commands=(BENCH,),
        short="--max-new-tokens",
    ),
    OptionSpec(
        "--specperf-temperature",
        "temperature",
        "sampling temperature of every request (default: the workload's, 0 or 0.7)",
        parse=_float_in(0.0, 2.0, optional=True),
        commands=(BENCH,),
        short="--temperature",
    ),
    OptionSpec(
        "--specperf-requests",
        "requests",
        "requests per point (default: 4 at C=1, else 2C)",
        parse=_positive_int_or_none,
        commands=(BENCH,),
        short="--requests",
    ),
    OptionSpec(
        "--specperf-endpoint",
        "endpoint",
        "generate (SGLang native) or completions (OpenAI)",
        default=_WORKLOAD.endpoint,
        parse=lambda option, raw: parse_endpoint(raw, option),
        commands=(BENCH,),
        short="--endpoint",
    ),
    OptionSpec(
        "--specperf-request-timeout",
        "request_timeout",
        "seconds one request may take in all",
        default=f"{_WORKLOAD.request_timeout_s:g}",
        parse=_float_in(0.0, low_open=True),
        commands=(BENCH,),
        short="--request-timeout",
    ),
    OptionSpec(
        "--specperf-stall-timeout",
        "stall_timeout",
        "seconds a stream may go without data",
        default=f"{_WORKLOAD.stall_timeout_s:g}",
        parse=_float_in(0.0, low_open=True),
        commands=(BENCH,),
        short="--stall-timeout",
    ),
    OptionSpec(
        "--specperf-client-procs",
        "client_procs",
        "client processes that stream each point (default: one per "
        f"{STREAMS_PER_PROCESS} streams, at most half the cores)",
        parse=_positive_int_or_none,
        commands=(BENCH,),
        short="--client-procs",
    ),
    OptionSpec(
        "--specperf-min-success",
        "min_success",
        "fraction of requests of a point that must succeed",
        default="1.0",
        parse=_float_in(0.0, 1.0),
    ),
    OptionSpec(
        "--specperf-tolerance",
        "tolerance",
        "tolerance written into newly recorded baselines",
        default=f"{DEFAULT_THROUGHPUT_TOLERANCE:.2f}",
        parse=_float_in(0.0, 0.99),
    ),
    OptionSpec(
        "--specperf-slo",
        "slo",
        "service-level objectives, e.g. ttft_p99_ms=2000,itl_p99_ms=50,e2e_p99_ms=30000 "
        "(optional attainment=0.99): each point's goodput and each depth's largest "
        "concurrency meeting them",
        parse=lambda option, raw: parse_slo(raw, option),
        commands=(BENCH,),
        short="--slo",
    ),
    OptionSpec(
        "--specperf-refine",
        "refine",
        "where the recommended depth changes between two measured concurrencies, measure "
        "their geometric midpoint at every depth too (keeps every depth's server up until "
        "the end of the run)",
        parse=_flag,
        kind="flag",
        ini=False,
    ),
    OptionSpec(
        "--specperf-inject-slowdown",
        "inject_slowdown",
        "seconds of sleep per forward pass, set through the server's /slow_down before "
        "measuring: a deliberate regression to prove the gate catches one",
        parse=_float_in(0.0, optional=True),
    ),
    OptionSpec(
        "--specperf-repeats",
        "repeats",
        "samples per point: each point is measured R times, interleaved across concurrency "
        "(1,4,16,1,4,16,...); figures are medians with an interval, every sample is kept",
        default="1",
        parse=parse_positive_int,
        commands=(BENCH,),
        short="--repeats",
    ),
    OptionSpec(
        "--specperf-min-point-seconds",
        "min_point_seconds",
        "a point's closed loop keeps sending until its N requests were sent and this many "
        "seconds passed (warm-up excluded); 0 turns it off",
        default=f"{DEFAULT_MIN_POINT_SECONDS:g}",
        parse=_float_in(0.0),
        commands=(BENCH,),
        short="--min-point-seconds",
    ),
    OptionSpec(
        "--specperf-calibrate",
        "calibrate",
        "record baselines from an A/A run: every point measured --specperf-repeats times "
        "(per boot), the measured noise written into the baseline",
        parse=_flag,
        kind="flag",
        ini=False,
    ),
    OptionSpec(
        "--specperf-calibrate-boots",
        "calibrate_boots",
        "with --specperf-calibrate: boot the server this many times per depth (restarting "
        "it between rounds) so that the baseline also knows the noise between boots "
        f"(default {DEFAULT_CALIBRATE_BOOTS}; 1 with --specperf-url; below 3 boots the gate "
        "assumes at least 5%% between boots)",
        parse=lambda option, raw: None if raw is None else parse_positive_int(option, raw),
    ),
    OptionSpec(
        "--specperf-alpha",
        "alpha",
        "false-positive rate of one depth's verdict (every point and metric together): with "
        "no change, a depth goes red at most this often, given the baseline's recorded noise",
        default="0.01",
        parse=_float_in(0.0, 0.5, low_open=True),
        commands=(BENCH,),
        short="--alpha",
    ),
    OptionSpec(
        "--specperf-min-effect",
        "min_effect",
        "smallest throughput change the gate is for: caught with 95%% probability when the "
        "noise allows; smaller changes never fail",
        default="0.05",
        parse=_float_in(0.0, 0.5, low_open=True),
        commands=(BENCH,),
        short="--min-effect",
    ),
    OptionSpec(
        "--specperf-confirm",
        "confirm",
        "where a borderline verdict is re-measured before it stands: fresh-boot (restart the "
        "server; same boot with --specperf-url), same-boot, or off",
        default="fresh-boot",
        parse=parse_confirm,
        commands=(BENCH,),
        short="--confirm",
    ),
    OptionSpec(
        "--specperf-gpus-per-server",
        "gpus_per_server",
        "give each server its own K GPUs (CUDA_VISIBLE_DEVICES): xdist worker gwN gets GPUs "
        "[N*K, (N+1)*K); needed for -n with the sglang backend",
        parse=_positive_int_or_none,
    ),
    OptionSpec(
        "--specperf-gpus",
        "gpus",
        "the GPUs there are to hand out: a count (8) or ids (0,1,5); "
        "default: $SPECPERF_GPUS, else $CUDA_VISIBLE_DEVICES, else nvidia-smi -L",
        parse=lambda option, raw: ",".join(parse_gpu_ids(option, raw)) if raw else None,
    ),
    OptionSpec(
        "--specperf-server-cpu",
        "server_cpu",
        "where the server's busiest process (SGLang's scheduler) runs: none (where the OS puts "
        "it), rotate (before each sample, pinned to the next of its vCPUs in turn, the same "
        "order every boot; under -n each worker turns over its own share), pin-fastest (the "
        "free vCPUs' single-thread speed timed before each boot, the process pinned to the "
        "fastest), sglang-affinity (SGLANG_SET_CPU_AFFINITY=1 in the server's environment: "
        "SGLang binds each scheduler to its GPU's share of the physical cores) "
        "(Linux; not with --specperf-url)",
        default=None,
        parse=lambda option, raw: (
            parse_choice(option, raw, SERVER_CPU_PLACEMENTS) if raw is not None else None
        ),
    ),
    OptionSpec(
        "--specperf-rotate-server-cpu",
        "rotate_server_cpu",
        "the same as --specperf-server-cpu=rotate",
        parse=_flag,
        kind="flag",
        ini=False,
    ),
    OptionSpec(
        "--specperf-self-test",
        "self_test",
        "after each depth's checks, set a known /slow_down on its server, check that the "
        "gate catches it, reset it, and report the result",
        parse=_flag,
        kind="flag",
        ini=False,
    ),
    OptionSpec(
        "--specperf-lossless-min-prefix",
        "lossless_min_prefix",
        "losslessness rule: the share of each greedy output that must equal the other "
        "depth's before the first differing token (1 = identical outputs)",
        default="1",
        parse=_float_in(0.0, 1.0),
    ),
    # -- A/B mode (issue 19): any base option compares base and head in pairs of fresh boots
    OptionSpec(
        "--specperf-base-python",
        "base_python",
        "A/B mode: the base side's Python (e.g. a venv with the merge-base SGLang); head "
        "runs with this interpreter",
        ini=False,
    ),
    OptionSpec(
        "--specperf-base-server-arg",
        "base_server_arg",
        "A/B mode: a server flag of the base side only, repeatable (head gets "
        "--specperf-server-arg)",
        parse=lambda option, raw: parse_server_args(raw, option),
        kind="append",
        ini=False,
    ),
    OptionSpec(
        "--specperf-base-profile",
        "base_profile",
        "A/B mode: the base side's deployment profile (default: head's)",
        ini=False,
    ),
    OptionSpec(
        "--specperf-base-url",
        "base_url",
        "A/B mode: an existing base server (not rebooted between pairs)",
        parse=lambda option, raw: parse_url(raw, option) if raw else None,
        ini=False,
    ),
    OptionSpec(
        "--specperf-ab-max-pairs",
        "ab_max_pairs",
        "A/B mode: the most pairs of boots (base, head) before the verdict is 'undecided'",
        default="8",
        parse=parse_positive_int,
    ),
    OptionSpec(
        "--specperf-ab-boot-together",
        "ab_boot_together",
        "A/B mode, simulator only: boot each pair's base and head servers at the same time "
        "(measured one after the other): a pair costs one boot's wait. Refused with SGLang, "
        "whose KV pool is sized from the GPU memory free at boot",
        parse=_flag,
        kind="flag",
        ini=False,
    ),
    # -- history (issue 20): the history store and its change points --------------------
    OptionSpec(
        "--specperf-history",
        "history",
        "append this run to a history store: a file path (SQLite; e.g. "
        ".specperf/history.sqlite) or a database URL (sqlite:///..., postgresql://...); a "
        "nightly run then reports the change points (docs/how-to/history.md)",
    ),
    OptionSpec(
        "--specperf-history-on-change",
        "history_on_change",
        "what a change point new with this nightly run does: fail (the job goes red) or warn",
        default="fail",
        parse=lambda option, raw: parse_choice(option, raw, ("fail", "warn")),
    ),
    # -- baseline safety and verdicts (issue 24) --
    OptionSpec(
        ALLOW_DOWNGRADE_FLAG,
        "allow_baseline_downgrade",
        "let a recording replace a baseline with one of fewer boots or samples, another "
        "workload or another sweep (refused otherwise, showing the old and new provenance)",
        parse=_flag,
        kind="flag",
        ini=False,
    ),
    OptionSpec(
        ALLOW_NO_BASELINE_FLAG,
        "allow_no_baseline",
        "an exploratory run: a depth whose throughput nothing judged (no baseline, not "
        "comparable, every point skipped) does not fail the run",
        parse=_flag,
        kind="flag",
        ini=False,
    ),
    # -- warm-up of each boot and the run's time (issue 21) --------------------------------
    OptionSpec(
        "--specperf-warmup-rounds",
        "warmup_rounds",
        "before the first measured sample of each boot, warm every concurrency of the sweep "
        "with the workload's own requests, in rounds, until two rounds agree within "
        "--specperf-warmup-tolerance, at most this many rounds; 0 turns it off",
        default=str(DEFAULT_MAX_ROUNDS),
        parse=parse_count,
        commands=(BENCH,),
        short="--warmup-rounds",
    ),
    OptionSpec(
        "--specperf-warmup-seconds",
        "warmup_seconds",
        "a bound on each boot's warm-up: no round is started that would end past it "
        "(the first round always runs)",
        parse=_float_in(0.0, low_open=True, optional=True),
        commands=(BENCH,),
        short="--warmup-seconds",
    ),
    OptionSpec(
        "--specperf-warmup-tolerance",
        "warmup_tolerance",
        "the warm-up has settled when every concurrency's agg tok/s moved by at most this "
        "fraction between two consecutive rounds",
        default=f"{DEFAULT_TOLERANCE:g}",
        parse=_float_in(0.0, 1.0, low_open=True),
        commands=(BENCH,),
        short="--warmup-tolerance",
    ),
    OptionSpec(
        "--specperf-time-budget",
        "time_budget",
        "seconds the run may take: the run's estimated time (boots, warm-ups, points x "
        "repeats; in A/B mode every pair --specperf-ab-max-pairs allows) is printed before "
        "anything boots, and a run estimated longer is refused, saying what would fit",
        parse=_float_in(0.0, low_open=True, optional=True),
    ),
    OptionSpec(
        "--specperf-boot-estimate",
        "boot_estimate",
        "seconds one server boot takes, for the run's time estimate (default: the profile's "
        "boot_estimate_s, else 120 for sglang and 5 for sim)",
        parse=_float_in(0.0, optional=True),
    ),
)
OPTIONS_BY_KEY: Mapping[str, OptionSpec] = {spec.key: spec for spec in OPTIONS}


def option_values(get: Callable[[str], Any]) -> dict[str, Any]:
    """Every option parsed: ``get(key)`` gives the raw value (None: not given)."""
    return {spec.key: spec.value(get(spec.key)) for spec in OPTIONS}


# -- settings ----------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Settings:
    """Everything a run needs, as plain values (no pytest objects); built by build_settings."""

    profile: Profile
    backend: Backend
    depths: tuple[int, ...]
    concurrency: tuple[int, ...]
    url: str | None
    server_args: tuple[str, ...]
    baselines_dir: Path
    out_dir: Path
    update_baselines: bool
    launch_timeout_s: float
    sim_speedup: float
    hardware: str | None
    min_success_rate: float
    tolerance: float
    workload: Workload
    api_key: str | None
    inject_slowdown_s: float | None
    gpus_per_server: int | None
    gpus: str | None
    run_profile: str | None = None
    repeats: int = 1
    calibrate: bool = False
    calibrate_boots: int = 1
    alpha: float = 0.01
    min_effect: float = 0.05
    confirm: ConfirmMode = "fresh-boot"
    self_test: bool = False
    lossless_min_prefix: float = 1.0
    slo: Slo | None = None
    refine: bool = False
    client_procs: int | None = None  # None: chosen by load (measure/procs.py)
    # A/B mode (any base option given): the base side; head is everything above.
    base_python: str | None = None
    base_server_args: tuple[str, ...] = ()
    base_profile: Profile | None = None
    base_url: str | None = None
    ab_max_pairs: int = 8
    ab_boot_together: bool = False
    # --specperf-server-cpu (server/cpu_use.py): where the server's busiest process runs.
    server_cpu: ServerCpuPlacement = "none"
    # --specperf-boot-silence-timeout: a boot whose log is silent this long fails (0: off).
    boot_silence_timeout_s: float = DEFAULT_BOOT_SILENCE_TIMEOUT_S
    # The server's interpreter (None: this one); the base side of A/B mode sets it.
    python: str | None = None

    @property
    def pins_server_process(self) -> bool:
        """Whether the suite pins the server's busiest process before each sample."""
        return self.server_cpu in ("rotate", "pin-fastest")

    @property
    def rotate_server_cpu(self) -> bool:
        """--specperf-rotate-server-cpu, now --specperf-server-cpu=rotate."""
        return self.server_cpu == "rotate"

    @property
    def ab_mode(self) -> bool:
        return bool(self.base_python or self.base_server_args or self.base_profile or self.base_url)

    history: str | None = None  # a history store's URL or file path (resolved); None: off
    history_on_change: str = "fail"
    # As given (printed back in the commands the suite suggests: commands.py).
    profile_option: str = DEFAULT_PROFILE
    profile_dirs: tuple[str, ...] = ()
    baselines_option: str = "baselines"
    allow_baseline_downgrade: bool = False
    allow_no_baseline: bool = False
    warmup: WarmupPlan = field(default_factory=WarmupPlan)
    time_budget_s: float | None = None
    boot_estimate_s: float | None = None  # None: the profile's, else the backend's default


def resolve_profile_option(name: str, dirs: tuple[str, ...], rootdir: Path) -> Profile:
    try:
        return resolve_profile(name, [rootdir / d for d in dirs])
    except Exception as exc:
        raise UsageError(f"--specperf-profile: {exc}") from exc


def workload_from(values: Mapping[str, Any]) -> Workload:
    """The request plan the workload options describe."""
    return workload_preset(
        values["workload"],
        max_new_tokens=values["max_new_tokens"],
        temperature=values["temperature"],
        fixed_requests=values["requests"],
        request_timeout_s=values["request_timeout"],
        stall_timeout_s=values["stall_timeout"],
        endpoint=values["endpoint"],
        min_point_seconds=values["min_point_seconds"],
    )


def resolve_run_profile_option(get: Callable[[str], Any], rootdir: Path) -> RunProfile | None:
    """The run profile named by --specperf-run-profile, if any (with the project's file)."""
    name = OPTIONS_BY_KEY["run_profile"].value(get("run_profile"))
    if not name:
        return None
    extra = OPTIONS_BY_KEY["run_profiles"].value(get("run_profiles"))
    return resolve_run_profile(name, rootdir / extra if extra else None)


def build_settings(get: Callable[[str], Any], rootdir: Path) -> Settings:
    """Build settings from option values; ``get(key)`` returns the option or ini value.

    A run profile fills the options that ``get`` leaves out (None); the rest keep their
    given value or their default.
    """
    values = option_values(with_run_profile(get, resolve_run_profile_option(get, rootdir)))
    baselines_dir = _directory_option("--specperf-baselines", values["baselines"], rootdir)
    out_dir = _directory_option("--specperf-out", values["out"], rootdir)
    return Settings(
        profile=resolve_profile_option(values["profile"], values["profile_dir"], rootdir),
        backend=values["backend"],
        depths=values["spec_steps"],
        concurrency=values["concurrency"],
        url=values["url"],
        server_args=values["server_arg"],
        baselines_dir=baselines_dir,
        out_dir=out_dir,
        update_baselines=values["update_baselines"] or values["calibrate"],
        launch_timeout_s=values["launch_timeout"],
        sim_speedup=values["sim_speedup"],
        hardware=values["hardware"],
        min_success_rate=values["min_success"],
        tolerance=values["tolerance"],
        workload=workload_from(values),
        api_key=os.environ.get(API_KEY_ENV) or None,
        inject_slowdown_s=values["inject_slowdown"],
        run_profile=values["run_profile"],
        gpus_per_server=values["gpus_per_server"],
        gpus=values["gpus"],
        repeats=values["repeats"],
        calibrate=values["calibrate"],
        calibrate_boots=_calibrate_boots(values),
        alpha=values["alpha"],
        min_effect=values["min_effect"],
        confirm=values["confirm"],
        self_test=values["self_test"],
        lossless_min_prefix=values["lossless_min_prefix"],
        slo=values["slo"],
        refine=values["refine"],
        client_procs=values["client_procs"],
        base_python=values["base_python"],
        base_server_args=values["base_server_arg"] or (),
        base_profile=resolve_profile_option(values["base_profile"], values["profile_dir"], rootdir)
        if values["base_profile"]
        else None,
        base_url=values["base_url"],
        ab_max_pairs=_ab_max_pairs(values),
        ab_boot_together=_ab_boot_together(values),
        server_cpu=_server_cpu(values),
        boot_silence_timeout_s=values["boot_silence_timeout"],
        history=_history_location(values["history"], rootdir),
        history_on_change=values["history_on_change"],
        profile_option=values["profile"],
        profile_dirs=values["profile_dir"],
        baselines_option=values["baselines"],
        allow_baseline_downgrade=values["allow_baseline_downgrade"],
        allow_no_baseline=values["allow_no_baseline"],
        warmup=warmup_plan_from(values),
        time_budget_s=values["time_budget"],
        boot_estimate_s=values["boot_estimate"],
    )


def warmup_plan_from(values: Mapping[str, Any]) -> WarmupPlan:
    """Each boot's warm-up as the warm-up options describe it."""
    return WarmupPlan(
        max_rounds=values["warmup_rounds"],
        max_seconds=values["warmup_seconds"],
        tolerance=values["warmup_tolerance"],
    )


def _ab_max_pairs(values: Mapping[str, Any]) -> int:
    ab_mode = any(
        values[key] for key in ("base_python", "base_server_arg", "base_profile", "base_url")
    )
    if ab_mode and (values["update_baselines"] or values["calibrate"]):
        raise UsageError(
            "A/B mode (--specperf-base-*) compares base and head in this run: it neither reads "
            "nor writes baseline files; drop --specperf-update-baselines/--specperf-calibrate"
        )
    pairs: int = values["ab_max_pairs"]
    if pairs < 3:
        raise UsageError(
            f"--specperf-ab-max-pairs: at least 3 (the first look of the A/B gate), got {pairs}"
        )
    return pairs


def _directory_option(option: str, raw: str, rootdir: Path) -> Path:
    """rootdir / raw, refused when it (or the nearest part of it that exists) is not a
    directory: found now, before boot, instead of at the first write after the sweep."""
    path = rootdir / raw
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        where = "" if existing == path else f" ({existing} is a file)"
        raise UsageError(f"{option}: {raw!r} is not a directory{where}")
    return path


def _history_location(raw: str | None, rootdir: Path) -> str | None:
    """A URL as given; a file path relative to the project's root directory."""
    if not raw:
        return None
    return raw if "://" in raw else str(rootdir / Path(raw).expanduser())


def _ab_boot_together(values: Mapping[str, Any]) -> bool:
    together = bool(values["ab_boot_together"])
    if together and values["backend"] == "sglang":
        # SGLang sizes its KV pool from the GPU memory free when it loads the model
        # (model_runner_kv_cache_mixin._profile_available_bytes): two servers booting on one
        # GPU race, and the later one gets a smaller pool or fails with "Not enough memory".
        raise UsageError(
            "--specperf-ab-boot-together: not with SGLang: a server sizes its KV cache from "
            "the GPU memory free at boot, so two servers booted on one GPU get unequal KV "
            "pools (or the second fails to boot); A/B mode boots base and head one after "
            "the other without it"
        )
    return together


def _server_cpu(values: Mapping[str, Any]) -> ServerCpuPlacement:
    """--specperf-server-cpu, with --specperf-rotate-server-cpu as its older spelling."""
    chosen: ServerCpuPlacement | None = values["server_cpu"]
    if values["rotate_server_cpu"]:
        if chosen not in (None, "rotate"):
            raise UsageError(
                f"--specperf-rotate-server-cpu and --specperf-server-cpu={chosen} name two "
                "placements; keep one"
            )
        chosen = "rotate"
    placement: ServerCpuPlacement = chosen or "none"
    if placement == "none":
        return placement
    if values["url"]:
        raise UsageError(
            f"--specperf-server-cpu={placement}: places the processes of a server this run "
            "starts; not with --specperf-url"
        )
    if not hasattr(os, "sched_setaffinity"):
        raise UsageError(f"--specperf-server-cpu={placement}: this platform cannot pin a process")
    return placement


def _calibrate_boots(values: Mapping[str, Any]) -> int:
    given: int | None = values["calibrate_boots"]
    if given is None:
        return DEFAULT_CALIBRATE_BOOTS if values["calibrate"] and not values["url"] else 1
    boots = given
    if boots > 1 and not values["calibrate"]:
        raise UsageError("--specperf-calibrate-boots: only with --specperf-calibrate")
    if boots > 1 and values["url"]:
        raise UsageError(
            "--specperf-calibrate-boots: a server given by --specperf-url cannot be restarted "
            "between boots; let the suite boot it, or calibrate with one boot"
        )
    return boots
