"""Every option of the suite, in one table: ``OPTIONS``.

``OPTIONS`` is the only place an option, its default and its parser are written: the pytest
plugin registers its command-line options and ini keys from it, ``config/settings.py`` reads
it, and the ``specperf`` command builds its flags from it. To add an option, add one
:class:`OptionSpec` row (and the ``Settings`` field it feeds, if any); ``_bench`` writes a
row that ``specperf bench`` takes too, ``_switch`` an on/off flag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pytest_specperf.config.option_spec import OptionSpec
from pytest_specperf.config.parsers import (
    flag,
    float_in,
    parse_backend,
    parse_choice,
    parse_concurrency,
    parse_confirm,
    parse_count,
    parse_depths,
    parse_dir_list,
    parse_endpoint,
    parse_hardware_key,
    parse_positive_int,
    parse_server_args,
    parse_server_env,
    parse_url,
    parse_workload,
    positive_int_or_none,
    required_text,
)
from pytest_specperf.depth import MAX_DEPTH
from pytest_specperf.measure.arrivals import parse_rates
from pytest_specperf.measure.goodput import parse_slo
from pytest_specperf.measure.procs import STREAMS_PER_PROCESS
from pytest_specperf.measure.warmup import DEFAULT_MAX_ROUNDS, DEFAULT_TOLERANCE
from pytest_specperf.measure.workload import DEFAULT_WORKLOAD, SEED_CONCURRENCY, Workload
from pytest_specperf.results.schema import DEFAULT_THROUGHPUT_TOLERANCE
from pytest_specperf.server.cpu_use import SERVER_CPU_PLACEMENTS
from pytest_specperf.server.gpu_wait import SERVER_STACKS_CHOICES
from pytest_specperf.server.gpus import parse_gpu_ids
from pytest_specperf.server.process import (
    DEFAULT_BOOT_SILENCE_TIMEOUT_S,
    DEFAULT_LAUNCH_TIMEOUT_S,
)
from pytest_specperf.server.profiles import DEFAULT_PROFILE

# The history store of pytest's --specperf-history and of `specperf history`
# (history/commands.py's HISTORY_ENV: history/ does not import this module).
HISTORY_ENV = "SPECPERF_HISTORY"
ALLOW_DOWNGRADE_FLAG = "--specperf-allow-baseline-downgrade"
ALLOW_NO_BASELINE_FLAG = "--specperf-allow-no-baseline"
# Points shorter than about a second drift between boots, and past 2 s longer points buy
# little (docs/explanation/repeats.md has the measurements).
DEFAULT_MIN_POINT_SECONDS = 2.0

_WORKLOAD = Workload()  # the seed benchmark: its field defaults are the options' defaults


# Boots of a calibration when none is given: the fewest from which the gate uses the measured
# noise between boots (gate.decision.MIN_BOOTS_FOR_BOOT_NOISE; below, it assumes at least 5%).
# More boots estimate it better (docs/explanation/ab-gating.md); each costs a server start.
DEFAULT_CALIBRATE_BOOTS = 3


LAUNCH_CMD = "launch-cmd"
BENCH = "bench"


def _bench(flag_name: str, key: str, help: str, **row: Any) -> OptionSpec:
    """A row that ``specperf bench`` takes too, named there without ``--specperf-``."""
    short = f"--{flag_name.removeprefix('--specperf-')}"
    return OptionSpec(flag_name, key, help, commands=(BENCH,), short=short, **row)


def _switch(flag_name: str, key: str, help: str, **row: Any) -> OptionSpec:
    """An on/off flag, given on the command line only (no ini key)."""
    return OptionSpec(flag_name, key, help, parse=flag, kind="flag", ini=False, **row)


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "--spec-steps",
        "spec_steps",
        "speculation depth(s) to boot and measure: 3 or 0,1,2,3 (0: no speculation, the "
        "control every other depth's speedup is measured against)",
        default="3",
        parse=lambda option, raw: parse_depths(raw, option),
        commands=(LAUNCH_CMD,),
        command_help=(
            (
                LAUNCH_CMD,
                f"the speculation depth of the server, one of 0 to {MAX_DEPTH} (0: no "
                "speculation); one command is one server, so one depth",
            ),
        ),
    ),
    OptionSpec(
        "--specperf-backend",
        "backend",
        "server to boot: sglang (real) or sim (embedded simulator)",
        default="sglang",
        parse=lambda option, raw: parse_backend(raw, option),
        commands=(LAUNCH_CMD,),
    ),
    _bench(
        "--specperf-url",
        "url",
        "measure an existing server at this URL; nothing is booted",
        parse=lambda option, raw: parse_url(raw, option) if raw else None,
    ),
    _bench(
        "--specperf-concurrency",
        "concurrency",
        "concurrency levels of the closed-loop sweep",
        default=",".join(map(str, SEED_CONCURRENCY)),
        parse=lambda option, raw: parse_concurrency(raw, option),
    ),
    OptionSpec(
        "--specperf-profile",
        "profile",
        "deployment profile: a name or a .toml path",
        default=DEFAULT_PROFILE,
        parse=required_text,
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
        "--specperf-server-env",
        "server_env",
        "NAME=VALUE in the environment of every server the run starts, repeatable; "
        "$NAME in VALUE is the run's own (e.g. PYTHONPATH=/src/sglang/python:$PYTHONPATH "
        "to serve a source tree's Python code)",
        parse=lambda option, raw: parse_server_env(raw, option),
        kind="append",
        ini=False,
    ),
    OptionSpec(
        "--specperf-baselines",
        "baselines",
        "baselines directory",
        default="baselines",
        parse=required_text,
    ),
    _switch(
        "--specperf-update-baselines",
        "update_baselines",
        "after the run, write baselines for every depth whose points all succeeded",
    ),
    _bench(
        "--specperf-out",
        "out",
        "artifact directory: results.json, report.md, server logs",
        default=".specperf",
        parse=required_text,
        command_help=((BENCH, "artifact directory: results.json, report.md, plots"),),
    ),
    OptionSpec(
        "--specperf-launch-timeout",
        "launch_timeout",
        "seconds to wait for /health_generate",
        default=f"{DEFAULT_LAUNCH_TIMEOUT_S:g}",
        parse=float_in(0.0, low_open=True),
    ),
    OptionSpec(
        "--specperf-boot-silence-timeout",
        "boot_silence_timeout",
        "fail a boot whose server log has had no new line for this many seconds while it is "
        "not yet healthy, with the log tail and what its processes are doing, instead of "
        "waiting out --specperf-launch-timeout (0: off); generous enough for CUDA graph capture",
        default=f"{DEFAULT_BOOT_SILENCE_TIMEOUT_S:g}",
        parse=float_in(0.0),
    ),
    OptionSpec(
        "--specperf-sim-speedup",
        "sim_speedup",
        "simulator only: divide every simulated time by this factor",
        default="5",
        parse=float_in(0.0, low_open=True),
        commands=(LAUNCH_CMD,),
    ),
    _bench(
        "--specperf-hardware",
        "hardware",
        "hardware key for baselines, a name such as 1x-h200 (lowercase letters and digits "
        "joined by '-', '+' or '.'; default: from nvidia-smi or the simulator)",
        parse=parse_hardware_key,
    ),
    _bench(
        "--specperf-workload",
        "workload",
        "what the requests are: greedy-synthetic (the seed's: one prompt, temperature 0, "
        "ignore_eos), realistic (shipped coding/agentic/chat prompts, temperature 0.7, "
        "top_p 0.95, EOS respected), long-context (8k-24k word prompts, sampled like "
        "realistic), long-context-32k (prompts of 8k and 32k words) or trace:PATH (a Mooncake "
        "or plain JSONL/CSV trace replayed open-loop at its timestamps; trace:synthetic is the "
        "shipped one)",
        default=DEFAULT_WORKLOAD,
        parse=lambda option, raw: parse_workload(raw, option),
    ),
    _bench(
        "--specperf-max-new-tokens",
        "max_new_tokens",
        "output tokens per request",
        default=str(_WORKLOAD.max_new_tokens),
        parse=parse_positive_int,
    ),
    _bench(
        "--specperf-temperature",
        "temperature",
        "sampling temperature of every request (default: the workload's, 0 or 0.7)",
        parse=float_in(0.0, 2.0, optional=True),
    ),
    _bench(
        "--specperf-requests",
        "requests",
        "requests per point (default: 4 at C=1, else 2C)",
        parse=positive_int_or_none,
    ),
    _bench(
        "--specperf-endpoint",
        "endpoint",
        "generate (SGLang native) or completions (OpenAI)",
        default=_WORKLOAD.endpoint,
        parse=lambda option, raw: parse_endpoint(raw, option),
    ),
    _bench(
        "--specperf-request-timeout",
        "request_timeout",
        "seconds one request may take in all",
        default=f"{_WORKLOAD.request_timeout_s:g}",
        parse=float_in(0.0, low_open=True),
    ),
    _bench(
        "--specperf-stall-timeout",
        "stall_timeout",
        "seconds a stream may go without data",
        default=f"{_WORKLOAD.stall_timeout_s:g}",
        parse=float_in(0.0, low_open=True),
    ),
    _bench(
        "--specperf-client-procs",
        "client_procs",
        "client processes that stream each point (default: one per "
        f"{STREAMS_PER_PROCESS} streams, at most half the cores)",
        parse=positive_int_or_none,
    ),
    OptionSpec(
        "--specperf-min-success",
        "min_success",
        "fraction of requests of a point that must succeed",
        default="1.0",
        parse=float_in(0.0, 1.0),
    ),
    OptionSpec(
        "--specperf-tolerance",
        "tolerance",
        "tolerance written into newly recorded baselines",
        default=f"{DEFAULT_THROUGHPUT_TOLERANCE:.2f}",
        parse=float_in(0.0, 0.99),
    ),
    _bench(
        "--specperf-slo",
        "slo",
        "service-level objectives, e.g. ttft_p99_ms=2000,itl_p99_ms=50,e2e_p99_ms=30000 "
        "(optional attainment=0.99): each point's goodput and each depth's largest "
        "concurrency meeting them",
        parse=lambda option, raw: parse_slo(raw, option),
    ),
    OptionSpec(
        "--specperf-request-rate",
        "request_rate",
        "open-loop points beside the closed-loop ones: requests per second, e.g. 2,4,8, each "
        "sent on a seeded Poisson schedule (gamma with --specperf-burstiness); with "
        "--specperf-slo, each depth's highest rate meeting the SLOs is searched for",
        parse=lambda option, raw: parse_rates(raw or "", option),
    ),
    OptionSpec(
        "--specperf-burstiness",
        "burstiness",
        "shape of the gamma gaps between open-loop sends (as vLLM's --burstiness): 1 is "
        "Poisson arrivals (SGLang's bench_serving), below 1 burstier, above 1 more even",
        default="1",
        parse=float_in(0.0, low_open=True),
    ),
    OptionSpec(
        "--specperf-rate-seconds",
        "rate_seconds",
        "seconds of arrivals per open-loop rate point: rate x seconds requests (at least 8; "
        "--specperf-requests sets the count instead)",
        default="10",
        parse=float_in(0.0, low_open=True),
    ),
    OptionSpec(
        "--specperf-trace-speed",
        "trace_speed",
        "replay a trace workload this many times faster than its timestamps (0.5: half as "
        "fast; SGLang's --mooncake-slowdown-factor is its inverse)",
        default="1",
        parse=float_in(0.0, low_open=True),
    ),
    _switch(
        "--specperf-refine",
        "refine",
        "where the recommended depth changes between two measured concurrencies, measure "
        "their geometric midpoint at every depth too (keeps every depth's server up until "
        "the end of the run)",
    ),
    OptionSpec(
        "--specperf-inject-slowdown",
        "inject_slowdown",
        "seconds of sleep per forward pass, set through the server's /slow_down before "
        "measuring: a deliberate regression to prove the gate catches one (SGLang sleeps "
        "before each batch, and what a sleep costs is not proportional to it: measure the "
        "sleep that costs what you want at your point first, docs/how-to/run-nightly.md)",
        parse=float_in(0.0, optional=True),
    ),
    _bench(
        "--specperf-repeats",
        "repeats",
        "samples per point: each point is measured R times, interleaved across concurrency "
        "(1,4,16,1,4,16,...); figures are medians with an interval, every sample is kept",
        default="1",
        parse=parse_positive_int,
    ),
    _bench(
        "--specperf-min-point-seconds",
        "min_point_seconds",
        "a point's closed loop keeps sending until its N requests were sent and this many "
        "seconds passed (warm-up excluded); 0 turns it off",
        default=f"{DEFAULT_MIN_POINT_SECONDS:g}",
        parse=float_in(0.0),
    ),
    _switch(
        "--specperf-calibrate",
        "calibrate",
        "record baselines from an A/A run: every point measured --specperf-repeats times "
        "(per boot), the measured noise written into the baseline",
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
    _bench(
        "--specperf-alpha",
        "alpha",
        "false-positive rate of one depth's verdict (every point and metric together): with "
        "no change, a depth goes red at most this often, given the baseline's recorded noise",
        default="0.01",
        parse=float_in(0.0, 0.5, low_open=True),
    ),
    _bench(
        "--specperf-min-effect",
        "min_effect",
        "smallest throughput change the gate is for: caught with 95%% probability when the "
        "noise allows; smaller changes never fail",
        default="0.05",
        parse=float_in(0.0, 0.5, low_open=True),
    ),
    _bench(
        "--specperf-confirm",
        "confirm",
        "where a borderline verdict is re-measured before it stands: fresh-boot (restart the "
        "server; same boot with --specperf-url), same-boot, or off",
        default="fresh-boot",
        parse=parse_confirm,
    ),
    OptionSpec(
        "--specperf-gpus-per-server",
        "gpus_per_server",
        "give each server its own K GPUs (CUDA_VISIBLE_DEVICES): xdist worker gwN gets GPUs "
        "[N*K, (N+1)*K); needed for -n with the sglang backend",
        parse=positive_int_or_none,
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
        "(Linux; not with --specperf-url); default: rotate in A/B mode with the sglang backend "
        "when the run starts both servers on Linux (the lowest median pair spread on record, "
        "across machines), else none",
        default=None,
        parse=lambda option, raw: (
            parse_choice(option, raw, SERVER_CPU_PLACEMENTS) if raw is not None else None
        ),
    ),
    OptionSpec(
        "--specperf-server-stacks",
        "server_stacks",
        "read the server's busiest process's Python stack during each sample with py-spy (pip "
        "install py-spy; root or ptrace allowed), so that its wait for the GPU (a CUDA "
        "synchronize, which spins) is told from its own work: auto (with the sglang backend "
        "when py-spy is found and may read the server), on (a usage error where it cannot), "
        "off; never with --specperf-url",
        default="auto",
        parse=lambda option, raw: parse_choice(option, raw, SERVER_STACKS_CHOICES),
    ),
    _switch(
        "--specperf-rotate-server-cpu",
        "rotate_server_cpu",
        "the same as --specperf-server-cpu=rotate",
    ),
    _switch(
        "--specperf-self-test",
        "self_test",
        "after each depth's checks, set a known /slow_down on its server, check that the "
        "gate catches it, reset it, and report the result",
    ),
    OptionSpec(
        "--specperf-lossless-min-prefix",
        "lossless_min_prefix",
        "losslessness rule: the share of each greedy output that must equal the other "
        "depth's before the first differing token (1 = identical outputs)",
        default="1",
        parse=float_in(0.0, 1.0),
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
        "--specperf-base-server-env",
        "base_server_env",
        "A/B mode: NAME=VALUE in the base side's server environment only, repeatable (head "
        "gets --specperf-server-env)",
        parse=lambda option, raw: parse_server_env(raw, option),
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
    _switch(
        "--specperf-ab-boot-together",
        "ab_boot_together",
        "A/B mode, simulator only: boot each pair's base and head servers at the same time "
        "(measured one after the other): a pair costs one boot's wait. Refused with SGLang, "
        "whose KV pool is sized from the GPU memory free at boot",
    ),
    # -- history (issue 20): the history store and its change points --------------------
    OptionSpec(
        "--specperf-history",
        "history",
        "append this run to a history store: a file path (SQLite; e.g. "
        ".specperf/history.sqlite) or a database URL (sqlite:///..., postgresql://...); a "
        "nightly run then reports the change points (docs/how-to/history.md); not given: "
        f"${HISTORY_ENV}, as `specperf history` reads it",
        env=HISTORY_ENV,
    ),
    OptionSpec(
        "--specperf-history-on-change",
        "history_on_change",
        "what a change point new with this nightly run does: fail (the job goes red) or warn",
        default="fail",
        parse=lambda option, raw: parse_choice(option, raw, ("fail", "warn")),
    ),
    # -- baseline safety and verdicts (issue 24) --
    _switch(
        ALLOW_DOWNGRADE_FLAG,
        "allow_baseline_downgrade",
        "let a recording replace a baseline with one of fewer boots or samples, another "
        "workload or another sweep, losing what it held (refused otherwise, in one line naming "
        "what would be lost); typed on purpose: no printed command carries it",
    ),
    _switch(
        ALLOW_NO_BASELINE_FLAG,
        "allow_no_baseline",
        "an exploratory run: a depth whose throughput nothing judged (no baseline, not "
        "comparable, every point skipped) or a measured point the baseline has no figures for "
        "does not fail the run; the run's last line names each as not judged",
        commands=(BENCH,),
        short="--allow-no-baseline",
    ),
    _switch(
        "--specperf-no-plots",
        "no_plots",
        "leave the plots out of the run's artifacts (report.md says so): for runners that keep "
        "no pictures; every figure is in results.json and the benchmark files either way",
        commands=(BENCH,),
        short="--no-plots",
    ),
    # -- warm-up of each boot and the run's time (issue 21) --------------------------------
    _bench(
        "--specperf-warmup-rounds",
        "warmup_rounds",
        "before the first measured sample of each boot, warm every concurrency of the sweep "
        "with the workload's own requests, in rounds, until two rounds agree within "
        "--specperf-warmup-tolerance, at most this many rounds; 0 turns it off",
        default=str(DEFAULT_MAX_ROUNDS),
        parse=parse_count,
    ),
    _bench(
        "--specperf-warmup-seconds",
        "warmup_seconds",
        "a bound on each boot's warm-up: no round is started that would end past it "
        "(the first round always runs)",
        parse=float_in(0.0, low_open=True, optional=True),
    ),
    _bench(
        "--specperf-warmup-tolerance",
        "warmup_tolerance",
        "the warm-up has settled when every concurrency's agg tok/s moved by at most this "
        "fraction between two consecutive rounds",
        default=f"{DEFAULT_TOLERANCE:g}",
        parse=float_in(0.0, 1.0, low_open=True),
    ),
    OptionSpec(
        "--specperf-time-budget",
        "time_budget",
        "seconds the run may take: the run's estimated time (boots, warm-ups, points x "
        "repeats; in A/B mode every pair --specperf-ab-max-pairs allows) is printed before "
        "anything boots, and a run estimated longer is refused, saying what would fit",
        parse=float_in(0.0, low_open=True, optional=True),
    ),
    OptionSpec(
        "--specperf-boot-estimate",
        "boot_estimate",
        "seconds each server boot takes, for the run's time estimate (default: the profile's "
        "boot_estimate_s for the first boot and its later_boot_estimate_s, where it has one, "
        "for the others; else 120 for sglang and 5 for sim)",
        parse=float_in(0.0, optional=True),
    ),
)
OPTIONS_BY_KEY: Mapping[str, OptionSpec] = {spec.key: spec for spec in OPTIONS}


def option_values(get: Callable[[str], Any]) -> dict[str, Any]:
    """Every option parsed: ``get(key)`` gives the raw value (None: not given)."""
    return {spec.key: spec.value(get(spec.key)) for spec in OPTIONS}
