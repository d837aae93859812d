"""Command line of the simulator: SGLang's launch flags plus `--sim-*` knobs.

`parse_args(argv)` returns a fully resolved `SimConfig` or raises `UsageError` (one line,
like argparse); `main` turns that into exit status 2. The simulator stands in for a server
that has hundreds of flags: every flag of SGLang's launch parser (`sglang_flags.py`) is
accepted, with a warning when the simulator does not model it; any other flag, a misspelt
`--sim-*` knob included, is refused as SGLang refuses it ("unrecognized arguments: ...").
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any, NoReturn

from pytest_specperf.sim import model
from pytest_specperf.sim.config import SimConfig
from pytest_specperf.sim.faults import Fault
from pytest_specperf.sim.sglang_defaults import SERVER_ARG_DEFAULTS
from pytest_specperf.sim.sglang_flags import SGLANG_FLAGS, SGLANG_VERSION

PROG = "python -m pytest_specperf.sim"
SIM_VERSION = "0.5.23-sim"
ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")
KV_CACHE_DTYPES = (
    "auto",
    "fp8_e5m2",
    "fp8_e4m3",
    "mxfp8",
    "bf16",
    "bfloat16",
    "nvfp4",
    "fp4_mx_block16",
)
FAULT_KINDS = tuple(fault.value for fault in Fault)


class UsageError(Exception):
    """A bad command line; the message is one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class _DefaultsOnce(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a flag's default once: not when its help already names it, nor when it is None."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default is None:
            return text
        return super()._get_help_string(action)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be in 0..65535, got {value}")
    return value


def _float_in(lo: float, hi: float, *, hi_open: bool = False, lo_open: bool = False) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
        bad = (
            value != value
            or (value <= lo if lo_open else value < lo)
            or (value >= hi if hi_open else value > hi)
        )
        if bad:
            left = "(" if lo_open else "["
            right = ")" if hi_open else "]"
            raise argparse.ArgumentTypeError(f"must be in {left}{lo}, {hi}{right}, got {text}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    """The parser; its --help documents every flag."""
    p = _Parser(
        prog=PROG,
        description=(
            "SGLang-compatible simulated server: SGLang's HTTP API, a continuous-batching "
            "scheduler and a speculative-decoding performance model fitted to the seed "
            "deployment. Flags named like SGLang's behave like SGLang's; the other flags of "
            f"SGLang {SGLANG_VERSION} are accepted with a warning and ignored; any other flag "
            "is an error. All --sim-* knobs are optional."
        ),
        formatter_class=_DefaultsOnce,
    )
    sglang = p.add_argument_group("SGLang server flags")
    _add_model_and_listen_flags(sglang)
    _add_speculative_flags(sglang)
    _add_memory_and_runtime_flags(sglang)
    knobs = p.add_argument_group("simulator knobs")
    _add_sim_performance_knobs(knobs)
    _add_sim_failure_knobs(knobs)
    _add_unmodelled_sglang_flags(p)
    return p


# Each `_add_*` helper adds one family of flags, in --help order. A new --sim-NAME knob goes in
# the `_add_sim_*` helper it belongs to, plus a `SimConfig` field NAME (`parse_args` passes it
# on as parsed, unless it is one of `_RESOLVED_KNOBS`).


def _add_model_and_listen_flags(g: argparse._ArgumentGroup) -> None:
    g.add_argument("--model-path", default=None, help="Model name/path (only reported).")
    g.add_argument("--served-model-name", default=None, help="Name in /v1/models.")
    g.add_argument("--tokenizer-path", default=None, help="Reported tokenizer path.")
    g.add_argument(
        "--tp-size",
        "--tensor-parallel-size",
        dest="tp_size",
        type=_positive_int,
        default=1,
        help="Tensor parallel size (reported; the profile already models the deployment).",
    )
    g.add_argument("--host", default="127.0.0.1", help="Address to listen on.")
    g.add_argument("--port", type=_port, default=30000, help="Port to listen on.")


def _add_speculative_flags(g: argparse._ArgumentGroup) -> None:
    g.add_argument(
        "--speculative-algorithm",
        default=None,
        type=str.upper,
        choices=ALGORITHMS,
        help="Speculative algorithm. NEXTN is an alias of EAGLE (/server_info says EAGLE).",
    )
    g.add_argument(
        "--speculative-num-steps",
        type=_positive_int,
        default=None,
        help="Draft chain length. Give steps, topk and draft tokens together or not at all "
        "(algorithm alone means 3/1/4).",
    )
    g.add_argument(
        "--speculative-eagle-topk",
        type=_positive_int,
        default=None,
        help="Draft top-k (with topk=1, draft tokens are forced to steps+1).",
    )
    g.add_argument(
        "--speculative-num-draft-tokens",
        type=_positive_int,
        default=None,
        help="Verified tokens per step (NGRAM: chain length is this minus 1).",
    )
    g.add_argument("--speculative-draft-model-path", default=None, help="Reported only.")


def _add_memory_and_runtime_flags(g: argparse._ArgumentGroup) -> None:
    g.add_argument(
        "--kv-cache-dtype",
        default="auto",
        choices=KV_CACHE_DTYPES,
        help="Reported only: the profile's KV capacity is the seed's, as measured.",
    )
    g.add_argument(
        "--mem-fraction-static",
        type=_float_in(0.0, 1.0, lo_open=True),
        default=None,
        help="Reported only.",
    )
    g.add_argument(
        "--max-running-requests",
        type=_positive_int,
        default=None,
        help="Lowers the KV-derived max_running_requests (min of the two).",
    )
    g.add_argument("--trust-remote-code", action="store_true", help="Reported only.")
    g.add_argument(
        "--api-key",
        default=None,
        help="Require 'Authorization: Bearer KEY' on every path except /health*, /ready*, "
        "/metrics* (as SGLang). Never reported in /server_info.",
    )
    g.add_argument("--quantization", default=None, help="Reported only.")
    g.add_argument("--attention-backend", default=None, help="Reported only.")
    g.add_argument(
        "--context-length",
        type=_positive_int,
        default=None,
        help="Context length (default: the profile's).",
    )
    g.add_argument("--load-format", default="auto", help="Reported only.")
    g.add_argument(
        "--disable-radix-cache",
        action="store_true",
        help="No prefix cache: every prefill computes the whole prompt.",
    )
    g.add_argument(
        "--enable-metrics",
        action="store_true",
        help="Serve SGLang's Prometheus /metrics (running and queued requests, retractions).",
    )
    g.add_argument("--cuda-graph-max-bs", type=_positive_int, default=None, help="Reported only.")
    g.add_argument("--sampling-backend", default=None, help="Reported only.")
    g.add_argument(
        "--random-seed",
        type=int,
        default=None,
        help="SGLang's seed; used as --sim-seed when that is not given.",
    )


def _add_sim_performance_knobs(g: argparse._ArgumentGroup) -> None:
    """What the simulated deployment is and how fast (and how noisily) it runs."""
    g.add_argument(
        "--sim-profile",
        default=model.DEFAULT_PROFILE,
        choices=sorted(model.PROFILES),
        help="Built-in performance profile (model constants, KV capacity, hardware name).",
    )
    g.add_argument(
        "--sim-seed",
        type=int,
        default=None,
        help="Seed for tokens, acceptance, noise and fault selection (default 0).",
    )
    g.add_argument(
        "--sim-speedup",
        type=_float_in(0.0, 1e6, lo_open=True),
        default=1.0,
        help="Divide ALL simulated times by K (steps, prefill, boot delay, /slow_down "
        "sleeps). Reported in /server_info 'sim'. Throughput in real seconds is K times "
        "the model's.",
    )
    g.add_argument(
        "--sim-noise",
        type=_float_in(0.0, 1.0),
        default=0.0,
        help="Boot-to-boot noise: one factor exp(N(0, sigma)) on every step time, drawn once "
        "per boot (a CV of about sigma between boots; 1%% in the gate's study, about 5%% on the "
        "H200 smoke models). See sim/noise.py.",
    )
    g.add_argument(
        "--sim-point-noise",
        type=_float_in(0.0, 1.0),
        default=0.0,
        help="Noise inside a boot: a factor exp(N(0, sigma)) redrawn every "
        "--sim-point-noise-period simulated seconds, so repeats of a point differ (3%% in the "
        "gate's study; about 2-5%% for the H200 NGRAM smoke, 5-14%% for the MTP smoke).",
    )
    g.add_argument(
        "--sim-point-noise-period",
        type=_float_in(0.0, 1e6, lo_open=True),
        default=10.0,
        help="Simulated seconds between draws of --sim-point-noise (default 10).",
    )
    g.add_argument(
        "--sim-noise-seed",
        default=None,
        help="Seed of the noise draws: a number (every boot with it draws the same noise), or "
        "'fresh' (default): a new one every boot, so that --sim-noise is noise between boots "
        "even when both sides of an A/B run give a --sim-seed. Reported in /server_info.",
    )
    g.add_argument(
        "--sim-jitter",
        type=_float_in(0.0, 1.0),
        default=0.0,
        help="Per-step jitter: a factor exp(N(0, sigma)) on each step time.",
    )
    g.add_argument(
        "--sim-slowdown",
        type=_float_in(0.0, 1.0, hi_open=True),
        default=0.0,
        help="Cut throughput by the fraction F: every step time is divided by (1-F), so "
        "0.2 means 20%% fewer tokens/s (step time x1.25).",
    )
    g.add_argument(
        "--sim-cpu-bound",
        action="store_true",
        help="Wait out each step on the CPU instead of sleeping: the server process holds one "
        "core flat out, as SGLang's scheduler does on a small model (step times unchanged).",
    )
    g.add_argument(
        "--sim-acceptance",
        type=_float_in(0.0, 1.0),
        default=None,
        help="Override the per-draft acceptance probability alpha for all "
        "requests (default: profile's, greedy ~0.995, sampled ~0.85).",
    )
    g.add_argument(
        "--sim-corrupt-output",
        type=int,
        default=None,
        metavar="DEPTH",
        help="A lossy server, to prove the losslessness check: when this server's "
        f"speculation depth is DEPTH (0: no speculation), every temperature-0 output gets "
        f"a different token at index {model.CORRUPT_OUTPUT_AT}. Greedy outputs otherwise "
        "depend on the prompt alone, at every depth.",
    )
    g.add_argument(
        "--sim-cold-shape-ms",
        type=_float_in(0.0, 1e6),
        default=0.0,
        help="A cold start, as a real GPU's first step of each new shape (kernels compiled "
        "for a batch size and sequence length not run before): the first step of each shape "
        "(prefill or decode, batch size, longest sequence rounded up to a power of two) after "
        "boot takes this many simulated ms more. 0: every shape is warm from the start.",
    )


def _add_sim_failure_knobs(g: argparse._ArgumentGroup) -> None:
    """Boot trouble, crashes and injected per-request faults."""
    g.add_argument(
        "--sim-boot-delay",
        type=_float_in(0.0, 1e6),
        default=0.0,
        help="Seconds (divided by speedup) before /health_generate turns 200.",
    )
    g.add_argument(
        "--sim-crash-after",
        type=_positive_int,
        default=None,
        help="SIGKILL itself a few steps after the N-th generation request is "
        "admitted (streams in flight see their connections die).",
    )
    g.add_argument(
        "--sim-hang-at-boot",
        action="store_true",
        help="Never become healthy: /health_generate stays 503.",
    )
    g.add_argument(
        "--sim-fault",
        choices=FAULT_KINDS,
        default=None,
        help="Inject this fault into a fraction of generation requests.",
    )
    g.add_argument(
        "--sim-fault-rate",
        type=_float_in(0.0, 1.0),
        default=1.0,
        help="Fraction of generation requests hit by --sim-fault, chosen "
        "deterministically from the seed and the request's arrival index.",
    )
    g.add_argument(
        "--sim-error-status",
        type=int,
        default=500,
        help="HTTP status for --sim-fault http-error (e.g. 429, 500, 503).",
    )


class _UnmodelledSGLangFlag(argparse.Action):
    """A flag SGLang has and the simulator does not model: its values are read and dropped,
    the flag is remembered for a warning."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        seen = list(getattr(namespace, self.dest, None) or [])
        seen.append(option_string or self.option_strings[0])
        setattr(namespace, self.dest, seen)


def _add_unmodelled_sglang_flags(p: argparse.ArgumentParser) -> None:
    """SGLang's other flags, taking as many values as SGLang's, hidden from --help."""
    modelled = set(p._option_string_actions)
    for flag, arity in SGLANG_FLAGS.items():
        if flag in modelled:
            continue
        p.add_argument(
            flag,
            nargs=arity,
            action=_UnmodelledSGLangFlag,
            dest="unmodelled_sglang_flags",
            default=[],
            help=argparse.SUPPRESS,
        )


def _resolve_speculative(ns: argparse.Namespace, warnings: list[str]) -> None:
    algo: str | None = ns.speculative_algorithm
    given = [
        ns.speculative_num_steps is not None,
        ns.speculative_eagle_topk is not None,
        ns.speculative_num_draft_tokens is not None,
    ]
    if algo is None:
        if any(given):
            warnings.append("speculative parameters given without --speculative-algorithm: ignored")
        ns.speculative_num_steps = ns.speculative_eagle_topk = None
        ns.speculative_num_draft_tokens = None
        return
    if algo == "NEXTN":
        ns.speculative_algorithm = "EAGLE"
    if algo == "NGRAM":
        if ns.speculative_num_draft_tokens is None:
            ns.speculative_num_draft_tokens = 4
        if ns.speculative_num_draft_tokens < 2:
            raise UsageError("argument --speculative-num-draft-tokens: NGRAM needs at least 2")
        if ns.speculative_eagle_topk is None:
            ns.speculative_eagle_topk = 10
        ns.speculative_num_steps = None
        return
    if not any(given):
        ns.speculative_num_steps, ns.speculative_eagle_topk = 3, 1
        ns.speculative_num_draft_tokens = 4
    elif not all(given):
        raise UsageError(
            "--speculative-num-steps, --speculative-eagle-topk and "
            "--speculative-num-draft-tokens must be given together or not at all"
        )
    if ns.speculative_eagle_topk == 1 and ns.speculative_num_draft_tokens != (
        ns.speculative_num_steps + 1
    ):
        warnings.append(
            f"speculative_eagle_topk=1: speculative_num_draft_tokens adjusted from "
            f"{ns.speculative_num_draft_tokens} to {ns.speculative_num_steps + 1}"
        )
        ns.speculative_num_draft_tokens = ns.speculative_num_steps + 1


def parse_args(argv: Sequence[str]) -> SimConfig:
    """Parse and resolve; raises UsageError with a one-line message."""
    parser = build_parser()
    ns = parser.parse_args(list(argv))
    warnings: list[str] = [
        f"SGLang's flag {flag} accepted and ignored (the simulator does not model it)"
        for flag in ns.unmodelled_sglang_flags
    ]
    if not 100 <= ns.sim_error_status <= 599:
        raise UsageError(
            f"argument --sim-error-status: must be in 100..599, got {ns.sim_error_status}"
        )
    _resolve_speculative(ns, warnings)
    profile = model.PROFILES[ns.sim_profile]
    algo: str | None = ns.speculative_algorithm
    chain = model.chain_length(algo, ns.speculative_num_steps, ns.speculative_num_draft_tokens)
    kv_total = model.kv_capacity(profile, chain)
    derived = model.max_running_requests(profile, chain)
    explicit: int | None = ns.max_running_requests
    cap = derived if explicit is None else min(derived, explicit)
    if algo is not None:
        cap = min(cap, profile.spec_running_cap) if explicit is None else cap
    seed = ns.sim_seed if ns.sim_seed is not None else (ns.random_seed or 0)
    context_length = ns.context_length or profile.context_length
    server_args = _reported_server_args(ns, profile, cap, seed)
    return SimConfig(
        host=ns.host,
        port=ns.port,
        api_key=ns.api_key,
        profile=profile,
        algorithm=algo,
        num_steps=ns.speculative_num_steps,
        eagle_topk=ns.speculative_eagle_topk,
        num_draft_tokens=ns.speculative_num_draft_tokens,
        chain=chain,
        max_running_requests=cap,
        max_total_num_tokens=kv_total,
        context_length=context_length,
        seed=seed,
        noise_seed=_noise_seed(ns.sim_noise_seed),
        corrupt_output=ns.sim_corrupt_output is not None and ns.sim_corrupt_output == chain,
        fault=None if ns.sim_fault is None else Fault(ns.sim_fault),
        server_args=server_args,
        warnings=tuple(warnings),
        **_knobs_as_parsed(ns),
    )


# The --sim-* knobs that parse_args resolves (the others go to SimConfig as parsed).
_RESOLVED_KNOBS = frozenset({"profile", "seed", "noise_seed", "corrupt_output", "fault"})


def _knobs_as_parsed(ns: argparse.Namespace) -> dict[str, Any]:
    """Each --sim-NAME knob that needs no resolving, as SimConfig's field NAME."""
    knobs = {dest[4:]: value for dest, value in vars(ns).items() if dest.startswith("sim_")}
    return {name: value for name, value in knobs.items() if name not in _RESOLVED_KNOBS}


def _noise_seed(raw: str | None) -> int:
    # Not --sim-seed: seeded by it, every boot of one seed drew the same boot factor, so an
    # A/B run with --sim-seed=1 against --sim-seed=2 compared two fixed offsets (about 2%
    # apart at --sim-noise=0.01), not two noisy deployments.
    if raw is None or raw == "fresh":
        return int.from_bytes(os.urandom(4), "big")
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"--sim-noise-seed: {raw!r} is neither a number nor 'fresh'") from None


# The modelled SGLang flags that /server_info reports as given (the others are resolved).
_REPORTED_AS_GIVEN = (
    "tp_size",
    "host",
    "port",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "kv_cache_dtype",
    "trust_remote_code",
    "quantization",
    "context_length",
    "load_format",
    "disable_radix_cache",
    "enable_metrics",
)


def _reported_server_args(
    ns: argparse.Namespace, profile: model.Profile, max_running: int, seed: int
) -> dict[str, Any]:
    """What /server_info reports: SGLang's defaults overlaid with the resolved flags."""
    algo: str | None = ns.speculative_algorithm
    model_path = ns.model_path or profile.model_path
    server_args = dict(SERVER_ARG_DEFAULTS)
    server_args.update({flag: getattr(ns, flag) for flag in _REPORTED_AS_GIVEN})
    server_args.update(
        model_path=model_path,
        tokenizer_path=ns.tokenizer_path or model_path,
        served_model_name=ns.served_model_name or model_path,
        speculative_algorithm=algo,
        speculative_draft_model_path=(
            None if algo in (None, "NGRAM") else ns.speculative_draft_model_path or model_path
        ),
        speculative_draft_model_revision=None if algo in (None, "NGRAM") else "main",
        mem_fraction_static=ns.mem_fraction_static if ns.mem_fraction_static else 0.85,
        max_running_requests=max_running,
        api_key="***" if ns.api_key else None,
        attention_backend=ns.attention_backend or "flashinfer",
        cuda_graph_max_bs=ns.cuda_graph_max_bs or 256,
        sampling_backend=ns.sampling_backend or "flashinfer",
        random_seed=seed,
    )
    return server_args
