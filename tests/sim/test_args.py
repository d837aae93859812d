"""Command-line parsing: SGLang's flags and rules, --sim-* knobs, one-line errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pytest_specperf.sim.args import UsageError, build_parser, parse_args


def test_defaults_are_sglang_like_and_fast() -> None:
    cfg = parse_args([])
    assert (cfg.host, cfg.port) == ("127.0.0.1", 30000)
    assert cfg.algorithm is None and cfg.chain == 0
    assert cfg.speedup == 1.0 and cfg.noise == 0.0 and cfg.jitter == 0.0
    assert cfg.fault is None and cfg.crash_after is None and cfg.boot_delay == 0.0
    assert cfg.profile.name == "qwen3.5-122b-a10b-fp8-4x-rtx-pro-6000"


def test_nextn_is_reported_as_eagle_and_algorithm_alone_means_3_1_4() -> None:
    cfg = parse_args(["--speculative-algorithm", "NEXTN"])
    assert cfg.algorithm == "EAGLE"
    assert (cfg.num_steps, cfg.eagle_topk, cfg.num_draft_tokens) == (3, 1, 4)
    assert cfg.server_args["speculative_algorithm"] == "EAGLE"


@pytest.mark.parametrize(
    ("steps", "tokens", "cap"), [(1, 455_357, 26), (2, 377_207, 21), (3, 295_931, 17)]
)
def test_seed_kv_capacity_per_depth(steps: int, tokens: int, cap: int) -> None:
    cfg = parse_args(
        [
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            str(steps),
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            str(steps + 1),
        ]
    )
    assert cfg.max_total_num_tokens == tokens
    assert cfg.max_running_requests == cap
    assert cfg.server_args["max_running_requests"] == cap


def test_explicit_max_running_requests_lowers_only() -> None:
    base = ["--speculative-algorithm", "EAGLE"]
    assert parse_args([*base, "--max-running-requests", "5"]).max_running_requests == 5
    assert parse_args([*base, "--max-running-requests", "500"]).max_running_requests == 17


def test_topk_1_forces_draft_tokens_with_warning() -> None:
    cfg = parse_args(
        [
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "2",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "8",
        ]
    )
    assert cfg.num_draft_tokens == 3
    assert any("adjusted from 8 to 3" in w for w in cfg.warnings)


def test_partial_speculative_triple_is_an_error() -> None:
    with pytest.raises(UsageError, match="together"):
        parse_args(["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2"])


def test_ngram_chain_is_draft_tokens_minus_one() -> None:
    cfg = parse_args(["--speculative-algorithm", "NGRAM", "--speculative-num-draft-tokens", "4"])
    assert cfg.algorithm == "NGRAM" and cfg.chain == 3 and cfg.num_steps is None


def test_tensor_parallel_alias_and_api_key_redacted() -> None:
    cfg = parse_args(["--tensor-parallel-size", "4", "--api-key", "sekrit"])
    assert cfg.server_args["tp_size"] == 4
    assert cfg.api_key == "sekrit"
    assert "sekrit" not in repr(cfg.server_args)


def test_unknown_flags_with_or_without_value_warn() -> None:
    cfg = parse_args(["--foo", "--bar", "3", "--baz=x", "--port", "1234"])
    assert cfg.port == 1234
    assert len(cfg.warnings) == 3


def test_slowdown_means_throughput_fraction() -> None:
    assert parse_args(["--sim-slowdown", "0.2"]).slowdown == 0.2
    with pytest.raises(UsageError):
        parse_args(["--sim-slowdown", "1"])


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            [
                "--speculative-algorithm",
                "EAGLE",
                "--speculative-num-steps",
                "0",
                "--speculative-eagle-topk",
                "1",
                "--speculative-num-draft-tokens",
                "1",
            ],
            "positive",
        ),
        (
            [
                "--speculative-algorithm",
                "EAGLE",
                "--speculative-num-steps",
                "-2",
                "--speculative-eagle-topk",
                "1",
                "--speculative-num-draft-tokens",
                "1",
            ],
            "positive",
        ),
        (["--speculative-num-steps", "three"], "invalid int"),
        (["--speculative-algorithm", "MEDUSA"], "invalid choice"),
        (["--port", "70000"], "port"),
        (["--sim-speedup", "0"], "sim-speedup"),
        (["--sim-fault", "explode"], "invalid choice"),
        (["--sim-error-status", "42"], "sim-error-status"),
    ],
)
def test_invalid_values_raise_one_line(argv: list[str], needle: str) -> None:
    with pytest.raises(UsageError) as e:
        parse_args(argv)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_cli_error_exits_2_with_one_stderr_line() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "pytest_specperf.sim", "--port", "99999"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0] and "port" in lines[0]


def test_help_documents_every_flag() -> None:
    text = build_parser().format_help()
    for flag in [
        "--model-path",
        "--tp-size",
        "--tensor-parallel-size",
        "--host",
        "--port",
        "--speculative-algorithm",
        "--speculative-num-steps",
        "--speculative-eagle-topk",
        "--speculative-num-draft-tokens",
        "--speculative-draft-model-path",
        "--kv-cache-dtype",
        "--mem-fraction-static",
        "--max-running-requests",
        "--trust-remote-code",
        "--api-key",
        "--quantization",
        "--attention-backend",
        "--context-length",
        "--load-format",
        "--disable-radix-cache",
        "--cuda-graph-max-bs",
        "--sampling-backend",
        "--sim-profile",
        "--sim-seed",
        "--sim-speedup",
        "--sim-noise",
        "--sim-jitter",
        "--sim-slowdown",
        "--sim-acceptance",
        "--sim-boot-delay",
        "--sim-crash-after",
        "--sim-hang-at-boot",
        "--sim-fault",
        "--sim-fault-rate",
        "--sim-error-status",
    ]:
        assert flag in text, flag
