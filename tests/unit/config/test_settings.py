"""pytest_specperf.config.settings: option values -> validated settings, one-line UsageErrors."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_specperf.config import settings as settings_module
from pytest_specperf.config.parsers import (
    MAX_CONCURRENCY,
    parse_backend,
    parse_concurrency,
    parse_depths,
    parse_float,
    parse_positive_int,
    parse_server_args,
    parse_url,
)
from pytest_specperf.config.settings import API_KEY_ENV, build_settings
from pytest_specperf.config.table import OPTIONS, OPTIONS_BY_KEY
from pytest_specperf.depth import MAX_DEPTH
from pytest_specperf.errors import UsageError
from pytest_specperf.measure.workload import SEED_CONCURRENCY
from pytest_specperf.server.profiles import DEFAULT_PROFILE

T = TypeVar("T")

# Nothing given: build_settings then sees each option's default, as the plugin would.
DEFAULTS: dict[str, Any] = {spec.key: None for spec in OPTIONS}


def settings_from(rootdir: Path, **overrides: Any) -> Any:
    values = {**DEFAULTS, **overrides}
    return build_settings(values.get, rootdir)


def assert_one_line(error: UsageError, option: str) -> None:
    message = str(error)
    assert "\n" not in message and len(message.splitlines()) == 1
    assert message.startswith(option)


def parsed_or_one_line_error(option: str, parse: Callable[[], T]) -> T | None:
    """What ``parse()`` returns; None when it raised a one-line UsageError led by ``option``."""
    try:
        return parse()
    except UsageError as exc:
        assert_one_line(exc, option)
        return None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("3", (3,)), ("1,2,3", (1, 2, 3)), (" 2 , 1", (1, 2)), ("3,1,3", (1, 3)), ("3,0", (0, 3))],
)
def test_parse_depths_returns_sorted_unique_depths(raw: str, expected: tuple[int, ...]) -> None:
    """Depth lists are split on commas, stripped, de-duplicated and sorted."""
    assert parse_depths(raw) == expected


@pytest.mark.parametrize("raw", ["abc", "", "-1", "1,,2", "   ", "17", "1.5"])
def test_parse_depths_rejects_bad_value_with_one_line(raw: str) -> None:
    """A depth that is empty, not a whole number or out of 0..16 is a one-line UsageError."""
    with pytest.raises(UsageError) as info:
        parse_depths(raw)
    assert_one_line(info.value, "--spec-steps")


def test_parse_concurrency_rejects_negative_value() -> None:
    """A negative concurrency level is a UsageError naming the option and the value."""
    with pytest.raises(UsageError) as info:
        parse_concurrency("-4")
    assert_one_line(info.value, "--specperf-concurrency")
    assert "-4" in str(info.value)


def test_parse_concurrency_accepts_the_seed_sweep() -> None:
    """The seed's C list parses to itself."""
    assert parse_concurrency("1,4,16,32,64") == SEED_CONCURRENCY


@given(st.text(max_size=40))
def test_parse_depths_fuzz_gives_valid_depths_or_one_line_usage_error(raw: str) -> None:
    """Any string yields sorted unique depths within 0..16, or a one-line UsageError."""
    depths = parsed_or_one_line_error("--spec-steps", lambda: parse_depths(raw))
    if depths is not None:
        assert depths and list(depths) == sorted(set(depths))
        assert all(0 <= depth <= MAX_DEPTH for depth in depths)


@given(st.text(alphabet="0123456789, -+_x\t", max_size=30))
def test_parse_concurrency_fuzz_gives_valid_levels_or_one_line_usage_error(raw: str) -> None:
    """Any string of digit-like characters yields levels in range, or a one-line UsageError."""
    levels = parsed_or_one_line_error("--specperf-concurrency", lambda: parse_concurrency(raw))
    if levels is not None:
        assert all(1 <= level <= MAX_CONCURRENCY for level in levels)


@pytest.mark.parametrize(("raw", "expected"), [("0.5", 0.5), (2, 2.0), ("1e-3", 0.001)])
def test_parse_float_accepts_numbers_in_range(raw: Any, expected: float) -> None:
    """Numbers (given as text or numbers) within the bounds parse to floats."""
    assert parse_float("--opt", raw, low=0.0, high=2.0) == expected


@pytest.mark.parametrize("raw", ["nan", "x", None, "-0.1", "2.5"])
def test_parse_float_rejects_non_numbers_nan_and_out_of_range(raw: Any) -> None:
    """NaN, text and values outside [low, high] are one-line UsageErrors naming the option."""
    with pytest.raises(UsageError) as info:
        parse_float("--opt", raw, low=0.0, high=2.0)
    assert_one_line(info.value, "--opt")


def test_parse_float_low_open_rejects_the_bound() -> None:
    """With low_open the lower bound itself is refused and the message says '> 0'."""
    with pytest.raises(UsageError, match="> 0"):
        parse_float("--opt", "0", low=0.0, low_open=True)


@given(st.text(max_size=30))
def test_parse_float_fuzz_gives_bounded_float_or_one_line_usage_error(raw: str) -> None:
    """Any string yields a float within the bounds, or a one-line UsageError."""
    value = parsed_or_one_line_error("--opt", lambda: parse_float("--opt", raw, low=0.0, high=2.0))
    if value is not None:
        assert not math.isnan(value) and 0.0 <= value <= 2.0


@pytest.mark.parametrize(("raw", "expected"), [("7", 7), (" 12 ", 12), (3, 3)])
def test_parse_positive_int_accepts_whole_numbers(raw: Any, expected: int) -> None:
    """Whole numbers >= 1, as text or ints, parse."""
    assert parse_positive_int("--n", raw) == expected


@pytest.mark.parametrize("raw", ["0", "-3", "1.5", "ten", ""])
def test_parse_positive_int_rejects_zero_negative_and_text(raw: str) -> None:
    """Zero, negatives and non-integers are one-line UsageErrors naming the option."""
    with pytest.raises(UsageError) as info:
        parse_positive_int("--n", raw)
    assert_one_line(info.value, "--n")


@given(st.text(max_size=30))
def test_parse_positive_int_fuzz_gives_positive_int_or_one_line_usage_error(raw: str) -> None:
    """Any string yields an int >= 1, or a one-line UsageError."""
    value = parsed_or_one_line_error("--n", lambda: parse_positive_int("--n", raw))
    if value is not None:
        assert value >= 1


@pytest.mark.parametrize(("raw", "expected"), [("sglang", "sglang"), (" SIM ", "sim")])
def test_parse_backend_is_case_and_space_insensitive(raw: str, expected: str) -> None:
    """Backends are matched after stripping and lower-casing."""
    assert parse_backend(raw) == expected


def test_parse_backend_rejects_unknown_and_lists_choices() -> None:
    """An unknown backend is a one-line UsageError listing sglang and sim."""
    with pytest.raises(UsageError) as info:
        parse_backend("vllm")
    assert_one_line(info.value, "--specperf-backend")
    assert "sglang, sim" in str(info.value)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("http://host:30000/", "http://host:30000"),
        (" https://example.test ", "https://example.test"),
    ],
)
def test_parse_url_strips_space_and_trailing_slash(raw: str, expected: str) -> None:
    """A URL is stripped of surrounding space and trailing slashes."""
    assert parse_url(raw) == expected


@pytest.mark.parametrize("raw", ["host:30000", "ftp://host", "http://", "https:///"])
def test_parse_url_rejects_non_http_urls(raw: str) -> None:
    """Values without an http(s) scheme and a host are one-line UsageErrors."""
    with pytest.raises(UsageError) as info:
        parse_url(raw)
    assert_one_line(info.value, "--specperf-url")


def test_parse_url_accepts_http_url_with_one_character_host() -> None:
    """'http://h' names host h and is a valid URL."""
    assert parse_url("http://h") == "http://h"


@given(st.text(max_size=40))
def test_parse_url_fuzz_gives_http_url_or_one_line_usage_error(raw: str) -> None:
    """Any string yields an http(s) URL without a trailing slash, or a one-line UsageError."""
    url = parsed_or_one_line_error("--specperf-url", lambda: parse_url(raw))
    if url is not None:
        assert url.startswith(("http://", "https://")) and not url.endswith("/")


def test_parse_server_args_splits_each_value_like_a_shell() -> None:
    """Each value is shlex-split, so a quoted value stays one item."""
    raw = ["--mem-fraction-static 0.8", "--chat-template 'a b'"]
    assert parse_server_args(raw) == (
        "--mem-fraction-static",
        "0.8",
        "--chat-template",
        "a b",
    )


def test_parse_server_args_of_none_is_empty() -> None:
    """No server arguments parse to an empty tuple."""
    assert parse_server_args(None) == ()


def test_parse_server_args_must_start_with_a_flag() -> None:
    """A first item that is not a flag is a one-line UsageError."""
    with pytest.raises(UsageError) as info:
        parse_server_args(["0.8 --mem-fraction-static"])
    assert_one_line(info.value, "--specperf-server-arg")


def test_parse_server_args_rejects_unbalanced_quote() -> None:
    """A value shlex cannot split is a one-line UsageError naming the option."""
    with pytest.raises(UsageError) as info:
        parse_server_args(["--x 'open"])
    assert_one_line(info.value, "--specperf-server-arg")


@given(st.lists(st.text(max_size=20), max_size=4))
def test_parse_server_args_fuzz_gives_flag_first_or_one_line_usage_error(raw: list[str]) -> None:
    """Any list of strings yields args led by a flag (or none), or a one-line UsageError."""
    args = parsed_or_one_line_error("--specperf-server-arg", lambda: parse_server_args(raw))
    if args is not None:
        assert not args or args[0].startswith("-")


def test_build_settings_from_defaults(tmp_path: Path) -> None:
    """The plugin's defaults give the seed sweep at depth 3 with paths under the rootdir."""
    settings = settings_from(tmp_path)
    assert settings.profile.name == DEFAULT_PROFILE
    assert settings.depths == (3,)
    assert settings.concurrency == SEED_CONCURRENCY
    assert settings.baselines_dir == tmp_path / "baselines"
    assert settings.out_dir == tmp_path / ".specperf"
    assert settings.workload.max_new_tokens == 1000
    assert settings.url is None


def test_build_settings_reads_api_key_from_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPECPERF_API_KEY becomes the settings' API key."""
    monkeypatch.setenv(API_KEY_ENV, "s3cret")
    assert settings_from(tmp_path).api_key == "s3cret"


def test_build_settings_without_api_key_env_has_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty SPECPERF_API_KEY means no key."""
    monkeypatch.setenv(API_KEY_ENV, "")
    assert settings_from(tmp_path).api_key is None


def test_build_settings_parses_every_option(tmp_path: Path) -> None:
    """Non-default option values reach the settings parsed."""
    settings = settings_from(
        tmp_path,
        spec_steps="2,1",
        backend="sim",
        url="http://127.0.0.1:30000/",
        concurrency="4",
        server_arg=["--sim-slowdown 0.2"],
        requests="8",
        endpoint="completions",
        hardware="my-box",
    )
    assert settings.depths == (1, 2)
    assert settings.backend == "sim"
    assert settings.url == "http://127.0.0.1:30000"
    assert settings.server_args == ("--sim-slowdown", "0.2")
    assert settings.workload.fixed_requests == 8
    assert settings.workload.endpoint == "completions"
    assert settings.hardware == "my-box"


def test_build_settings_finds_profile_in_profile_dir(tmp_path: Path) -> None:
    """A profile in a --specperf-profile-dir directory (relative to rootdir) resolves by name."""
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "mine.toml").write_text('name = "mine"\nmodel_path = "org/model"\n')
    settings = settings_from(tmp_path, profile="mine", profile_dir="profiles")
    assert settings.profile.model_path == "org/model"


@pytest.mark.parametrize(
    ("key", "value", "option"),
    [
        ("spec_steps", "17", "--spec-steps"),
        ("backend", "vllm", "--specperf-backend"),
        ("url", "localhost:30000", "--specperf-url"),
        ("concurrency", "-4", "--specperf-concurrency"),
        ("profile", "no-such-profile", "--specperf-profile"),
        ("launch_timeout", "0", "--specperf-launch-timeout"),
        ("sim_speedup", "fast", "--specperf-sim-speedup"),
        ("max_new_tokens", "0", "--specperf-max-new-tokens"),
        ("temperature", "3", "--specperf-temperature"),
        ("requests", "many", "--specperf-requests"),
        ("endpoint", "chat", "--specperf-endpoint"),
        ("request_timeout", "-1", "--specperf-request-timeout"),
        ("stall_timeout", "nan", "--specperf-stall-timeout"),
        ("min_success", "1.5", "--specperf-min-success"),
        ("tolerance", "1", "--specperf-tolerance"),
        ("server_arg", ["value-first"], "--specperf-server-arg"),
        ("inject_slowdown", "-1", "--specperf-inject-slowdown"),
    ],
)
def test_build_settings_bad_value_is_one_line_usage_error_naming_option(
    tmp_path: Path, key: str, value: Any, option: str
) -> None:
    """Each bad option value fails with a one-line UsageError that starts with the option."""
    with pytest.raises(UsageError) as info:
        settings_from(tmp_path, **{key: value})
    assert_one_line(info.value, option)


def test_every_option_row_has_a_unique_flag_and_key() -> None:
    """Two rows with one flag or one key would register or read the same option twice."""
    assert len({spec.flag for spec in OPTIONS}) == len(OPTIONS)
    assert len(OPTIONS_BY_KEY) == len(OPTIONS)


@pytest.mark.parametrize("key", [s.key for s in OPTIONS if s.default is not None])
def test_every_default_parses_with_its_own_parser(key: str) -> None:
    """A default the option's own parser rejects would break every run that leaves it unset."""
    OPTIONS_BY_KEY[key].value(None)


@pytest.mark.parametrize(
    "profile_dir", ["first,mine", ["first", "mine"], ["first,mine"], [" first ", "mine,"]]
)
def test_profile_dir_takes_a_comma_list_repeated_values_or_both(
    tmp_path: Path, profile_dir: Any
) -> None:
    """--specperf-profile-dir=a,b and --specperf-profile-dir=a --specperf-profile-dir=b agree."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "mine.toml").write_text('name = "mine"\nmodel_path = "org/model"\n')
    settings = settings_from(tmp_path, profile="mine", profile_dir=profile_dir)
    assert settings.profile.model_path == "org/model"


def test_flag_option_is_off_unless_given() -> None:
    """--specperf-update-baselines is False when absent and True when given."""
    spec = OPTIONS_BY_KEY["update_baselines"]
    assert (spec.value(None), spec.value(True)) == (False, True)


def test_cli_name_of_an_option_names_the_error() -> None:
    """The specperf CLI reports a bad value under the flag its user typed."""
    with pytest.raises(UsageError) as info:
        OPTIONS_BY_KEY["url"].value("localhost", option="--url")
    assert_one_line(info.value, "--url")


def test_workload_option_selects_the_preset(tmp_path: Path) -> None:
    """--specperf-workload=realistic gives its sampling; an explicit temperature wins."""
    realistic = settings_from(tmp_path, workload="realistic").workload
    assert (realistic.name, realistic.temperature, realistic.ignore_eos) == (
        "realistic",
        0.7,
        False,
    )
    assert settings_from(tmp_path, workload="realistic", temperature="0").workload.temperature == 0
    assert settings_from(tmp_path).workload.name == "greedy-synthetic"


def test_unknown_workload_is_one_line_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--specperf-workload: 'chatty' is not one of"):
        settings_from(tmp_path, workload="chatty")


def test_slo_and_refine_reach_the_settings(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, slo="ttft_p99_ms=800", refine=True)
    assert settings.slo is not None and settings.slo.ttft_p99_ms == 800
    assert settings.refine
    assert settings_from(tmp_path).slo is None


def test_booting_base_and_head_together_is_refused_with_sglang(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="KV cache from the GPU memory free at boot"):
        settings_from(tmp_path, backend="sglang", ab_boot_together=True)


def test_booting_base_and_head_together_is_kept_on_the_simulator(tmp_path: Path) -> None:
    assert settings_from(tmp_path, backend="sim", ab_boot_together=True).ab_boot_together


def test_rotating_the_server_cpu_reaches_the_settings(tmp_path: Path) -> None:
    assert settings_from(tmp_path, rotate_server_cpu=True).rotate_server_cpu
    assert not settings_from(tmp_path).rotate_server_cpu


def test_the_server_cpu_placement_reaches_the_settings(tmp_path: Path) -> None:
    assert settings_from(tmp_path).server_cpu == "none"
    for choice in ("none", "rotate", "pin-fastest", "sglang-affinity"):
        assert settings_from(tmp_path, server_cpu=choice).server_cpu == choice
    assert settings_from(tmp_path, server_cpu="pin-fastest").pins_server_process
    assert not settings_from(tmp_path, server_cpu="sglang-affinity").pins_server_process


def test_an_ab_of_sglang_servers_rotates_the_scheduler_by_default(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, backend="sglang", base_python="/opt/base/bin/python")
    assert settings.server_cpu == "rotate" and settings.server_cpu_by_default


def test_a_placement_given_in_an_ab_stands(tmp_path: Path) -> None:
    settings = settings_from(
        tmp_path, backend="sglang", base_python="/opt/base/bin/python", server_cpu="none"
    )
    assert settings.server_cpu == "none" and not settings.server_cpu_by_default
    given = settings_from(
        tmp_path, backend="sglang", base_python="/opt/base/bin/python", server_cpu="rotate"
    )
    assert given.server_cpu == "rotate" and not given.server_cpu_by_default


def test_the_old_rotate_flag_in_an_ab_is_the_users_choice(tmp_path: Path) -> None:
    settings = settings_from(
        tmp_path, backend="sglang", base_python="/opt/base/bin/python", rotate_server_cpu=True
    )
    assert settings.server_cpu == "rotate" and not settings.server_cpu_by_default


def test_an_ab_where_no_process_can_be_pinned_leaves_the_scheduler_to_the_os(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(settings_module.os, "sched_setaffinity")
    settings = settings_from(tmp_path, backend="sglang", base_python="/opt/base/bin/python")
    assert settings.server_cpu == "none" and not settings.server_cpu_by_default


@pytest.mark.parametrize(
    "overrides",
    [
        {"backend": "sglang"},  # a nightly against its baseline
        {"backend": "sim", "base_python": "/opt/base/bin/python"},
        {"backend": "sglang", "base_url": "http://127.0.0.1:30001"},
        {"backend": "sglang", "base_python": "/opt/base/bin/python", "url": "http://h:30000"},
    ],
)
def test_the_scheduler_is_left_to_the_os_outside_an_ab_of_sglang_servers_it_starts(
    tmp_path: Path, overrides: dict[str, str]
) -> None:
    settings = settings_from(tmp_path, **overrides)
    assert settings.server_cpu == "none" and not settings.server_cpu_by_default


def test_the_old_rotate_flag_is_the_rotate_placement(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, rotate_server_cpu=True)
    assert settings.server_cpu == "rotate" and settings.pins_server_process
    assert settings_from(tmp_path, rotate_server_cpu=True, server_cpu="rotate").rotate_server_cpu


def test_the_old_rotate_flag_and_another_placement_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="two placements") as caught:
        settings_from(tmp_path, rotate_server_cpu=True, server_cpu="pin-fastest")
    assert_one_line(caught.value, "--specperf-rotate-server-cpu")


def test_an_unknown_placement_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="pin-fastest"):
        settings_from(tmp_path, server_cpu="fastest")


def test_placing_the_cpu_of_a_server_by_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not with --specperf-url"):
        settings_from(tmp_path, server_cpu="pin-fastest", url="http://127.0.0.1:30000")


def test_the_boot_silence_timeout_reaches_the_settings(tmp_path: Path) -> None:
    assert settings_from(tmp_path).boot_silence_timeout_s == 300
    assert settings_from(tmp_path, boot_silence_timeout="0").boot_silence_timeout_s == 0


def test_rotating_the_cpu_of_a_server_by_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not with --specperf-url"):
        settings_from(tmp_path, rotate_server_cpu=True, url="http://127.0.0.1:30000")


def test_the_stacks_are_read_by_default_only_on_a_real_server_where_py_spy_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings_module, "find_py_spy", lambda: "/opt/bin/py-spy")
    monkeypatch.setattr(settings_module, "ptrace_problem", lambda: None)
    assert settings_from(tmp_path).py_spy == "/opt/bin/py-spy"  # sglang, auto
    assert settings_from(tmp_path, backend="sim").py_spy is None
    assert settings_from(tmp_path, backend="sim", server_stacks="on").py_spy == "/opt/bin/py-spy"
    assert settings_from(tmp_path, server_stacks="off").py_spy is None
    assert settings_from(tmp_path, url="http://127.0.0.1:30000").py_spy is None


def test_stacks_on_without_py_spy_or_with_a_url_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings_module, "find_py_spy", lambda: None)
    assert settings_from(tmp_path).py_spy is None  # auto: read where it can be
    with pytest.raises(UsageError, match="pip install py-spy") as caught:
        settings_from(tmp_path, server_stacks="on")
    assert_one_line(caught.value, "--specperf-server-stacks")
    with pytest.raises(UsageError, match="not this run's process"):
        settings_from(tmp_path, server_stacks="on", url="http://127.0.0.1:30000")


def test_stacks_where_py_spy_may_not_read_the_server_are_off_or_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings_module, "find_py_spy", lambda: "/opt/bin/py-spy")
    monkeypatch.setattr(settings_module, "ptrace_problem", lambda: "ptrace_scope is 1: ...")
    assert settings_from(tmp_path).py_spy is None  # auto
    with pytest.raises(UsageError, match="ptrace_scope is 1") as caught:
        settings_from(tmp_path, server_stacks="on")
    assert_one_line(caught.value, "--specperf-server-stacks")


def test_why_auto_reads_no_stack_of_a_real_server_is_kept_for_the_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings_module, "find_py_spy", lambda: None)
    assert "pip install py-spy" in settings_from(tmp_path).server_stacks_off
    assert settings_from(tmp_path, backend="sim").server_stacks_off is None
    assert settings_from(tmp_path, server_stacks="off").server_stacks_off is None
    monkeypatch.setattr(settings_module, "find_py_spy", lambda: "/opt/bin/py-spy")
    monkeypatch.setattr(settings_module, "ptrace_problem", lambda: None)
    assert settings_from(tmp_path).server_stacks_off is None


def _trace(path: Path, lengths: list[tuple[int, int]]) -> Path:
    path.write_text(
        "".join(
            f'{{"timestamp": {i}, "input_length": {prompt}, "output_length": {output}}}\n'
            for i, (prompt, output) in enumerate(lengths)
        )
    )
    return path


def test_a_trace_line_longer_than_the_models_context_is_refused_naming_its_line(
    tmp_path: Path,
) -> None:
    """A trace on the default profile (its model's context: 262,144 tokens) with one request
    longer than that: refused when the settings are built, before any boot, naming the
    trace's file, the line and the context."""
    trace = _trace(tmp_path / "t.jsonl", [(100, 10), (100, 10), (300_000, 10)])
    with pytest.raises(UsageError) as caught:
        settings_from(tmp_path, workload="trace:t.jsonl")
    message = str(caught.value)
    assert_one_line(caught.value, "--specperf-workload=trace:t.jsonl")
    assert f"trace {trace} line 3: its request needs 300,010 tokens" in message
    assert f"262,144-token context of profile {DEFAULT_PROFILE}" in message


def test_a_trace_line_longer_than_a_smoke_models_context_names_its_line(tmp_path: Path) -> None:
    """The tiny smoke model's context (8,192): the request over it is named by its line."""
    trace = _trace(tmp_path / "t.jsonl", [(9000, 10), (100, 10)])
    with pytest.raises(UsageError, match=f"trace {trace} line 1: its request needs 9,010"):
        settings_from(tmp_path, workload="trace:t.jsonl", profile="smoke-tiny-qwen3-ngram")


@pytest.mark.parametrize("given", [["--context-length=1000"], ["--context-length 1000"]])
def test_a_context_length_given_to_the_server_bounds_the_workload(
    tmp_path: Path, given: list[str]
) -> None:
    """--context-length passed to the server, as one word or two, is the context the longest
    request is held to, and the message says it came from there."""
    with pytest.raises(UsageError) as caught:
        settings_from(tmp_path, workload="realistic", server_arg=given)
    assert "1,000-token context given by --context-length" in str(caught.value)
