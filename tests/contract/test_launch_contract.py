"""Every launch command the suite builds is one SGLang's own parser accepts as meant."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_specperf.server.launch import SIMULATE_ACCEPT_LENGTH_ENV, build_launch
from pytest_specperf.server.profiles import Profile, builtin_profiles, load_profile_file
from tests.support import sglang_contract as contract

pytestmark = pytest.mark.contract
pytest.importorskip(
    "sglang.srt.server_args",
    reason="SGLang is not importable; install it with tools/install-sglang-contract.sh",
)

DEPTHS = (0, 1, 2, 3, 4, 5)  # 0: the no-speculation control
EXTRA_SERVER_ARGS = ("--mem-fraction-static", "0.85", "--max-running-requests", "32")
PROFILES = builtin_profiles()
# Draft-model algorithms at topk 1, where SGLang forces draft tokens = steps + 1 (NGRAM has
# no draft model and sets its own draft token count).
TOPK_ONE_PROFILES = sorted(
    name
    for name, profile in PROFILES.items()
    if profile.speculative_algorithm in ("EAGLE", "EAGLE3", "NEXTN", "MTP")
    and profile.speculative_eagle_topk == 1
)


def _write_profile(tmp_path: Path, name: str, kv_flag: str, kv_value: str) -> Profile:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\n'
        'model_path = "org/some-model"\n'
        "tp_size = 2\n"
        'speculative_algorithm = "EAGLE"\n'
        'draft_model_path = "org/some-draft"\n'
        "[[args]]\n"
        f'flag = "{kv_flag}"\n'
        f'value = "{kv_value}"\n'
        'why = "contract test"\n',
        encoding="utf-8",
    )
    return load_profile_file(path)


def test_sglang_version_is_the_pinned_one() -> None:
    assert contract.sglang_version() == "0.5.23"


@pytest.mark.parametrize("steps", DEPTHS)
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_builtin_profile_launch_is_accepted_with_intended_values(name: str, steps: int) -> None:
    assert contract.check_launch(PROFILES[name], steps) == []


@pytest.mark.parametrize("steps", DEPTHS)
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_builtin_profile_launch_with_extra_server_args_is_accepted(name: str, steps: int) -> None:
    profile = PROFILES[name]
    assert contract.check_launch(profile, steps, server_args=EXTRA_SERVER_ARGS) == []
    parsed = contract.parse_launch_argv(
        build_launch(profile, steps, server_args=EXTRA_SERVER_ARGS).argv
    )
    assert parsed["mem_fraction_static"] == pytest.approx(0.85)
    assert parsed["max_running_requests"] == 32


@pytest.mark.parametrize("steps", [d for d in DEPTHS if d > 0])
@pytest.mark.parametrize("name", TOPK_ONE_PROFILES)
def test_topk_one_launch_has_draft_tokens_equal_to_steps_plus_one(name: str, steps: int) -> None:
    profile = PROFILES[name]
    parsed = contract.parse_launch_argv(build_launch(profile, steps).argv)
    assert parsed["speculative_eagle_topk"] == 1
    assert parsed["speculative_num_steps"] == steps
    assert parsed["speculative_num_draft_tokens"] == steps + 1


def test_launch_with_api_key_is_accepted() -> None:
    profile = next(iter(PROFILES.values()))
    parsed = contract.parse_launch_argv(build_launch(profile, 3, api_key="secret").argv)
    assert parsed["api_key"] == "secret"


def test_misspelt_profile_flag_is_reported_with_profile_and_flag(tmp_path: Path) -> None:
    profile = _write_profile(tmp_path, "typo-profile", "--kv-cahe-dtype", "fp8_e4m3")
    problems = contract.check_launch(profile, 3)
    assert len(problems) == 1, problems
    assert "'typo-profile'" in problems[0]
    assert str(tmp_path / "typo-profile.toml") in problems[0]
    assert "'--kv-cahe-dtype'" in problems[0]
    assert "unrecognized arguments" in problems[0]


def test_invalid_kv_cache_dtype_value_is_reported_with_profile_and_flag(tmp_path: Path) -> None:
    profile = _write_profile(tmp_path, "fp9-profile", "--kv-cache-dtype", "fp9")
    problems = contract.check_launch(profile, 3)
    assert len(problems) == 1, problems
    assert "'fp9-profile'" in problems[0]
    assert "'--kv-cache-dtype'" in problems[0]
    assert "'fp9'" in problems[0]


def test_valid_custom_profile_is_accepted_with_intended_values(tmp_path: Path) -> None:
    profile = _write_profile(tmp_path, "eagle-profile", "--kv-cache-dtype", "fp8_e5m2")
    assert contract.check_launch(profile, 2) == []
    parsed = contract.parse_launch_argv(build_launch(profile, 2).argv)
    assert parsed["kv_cache_dtype"] == "fp8_e5m2"
    assert parsed["speculative_draft_model_path"] == "org/some-draft"


def test_user_server_arg_with_bad_value_is_reported() -> None:
    profile = next(iter(PROFILES.values()))
    problems = contract.check_launch(profile, 3, server_args=["--max-running-requests", "many"])
    assert len(problems) == 1, problems
    assert "'--max-running-requests'" in problems[0]


def test_parse_launch_argv_error_names_the_unknown_flag() -> None:
    with pytest.raises(contract.ContractError, match="'--no-such-flag'"):
        contract.parse_launch_argv(["--model-path", "m", "--no-such-flag", "1"])


def test_abbreviated_flag_is_reported_with_its_full_name() -> None:
    with pytest.raises(contract.ContractError, match=r"'--tp'.*--tp-size"):
        contract.parse_launch_argv(["--model-path", "m", "--tp", "2"])


def test_ambiguous_flag_is_reported_by_name() -> None:
    with pytest.raises(contract.ContractError, match="rejects flag '--cuda-graph-max-bs'"):
        contract.parse_launch_argv(["--model-path", "m", "--cuda-graph-max-bs", "16"])


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_control_launch_parses_without_speculation(name: str) -> None:
    """Depth 0 of every shipped profile: SGLang's parser sees no speculative algorithm."""
    parsed = contract.parse_launch_argv(build_launch(PROFILES[name], 0).argv)
    assert parsed["speculative_algorithm"] is None
    assert parsed["speculative_num_steps"] is None


def test_sglang_reads_the_simulated_accept_length_the_profiles_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SGLang declares SGLANG_SIMULATE_ACC_LEN as a number and reads the suite's value."""
    environ = contract._import("sglang.srt.environ")
    assert environ.envs.SGLANG_SIMULATE_ACC_LEN.get() < 0  # off unless set
    monkeypatch.setenv(SIMULATE_ACCEPT_LENGTH_ENV, "3.19")
    assert environ.envs.SGLANG_SIMULATE_ACC_LEN.get() == pytest.approx(3.19)


def test_sglang_reads_the_cpu_affinity_switch_the_suite_sets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--specperf-server-cpu=sglang-affinity: SGLang's scheduler reads this variable as a
    bool (managers/scheduler.py configure_scheduler_process) and then calls
    set_gpu_proc_affinity (utils/common.py), which both still define."""
    from pytest_specperf.server.cpu_use import SGLANG_AFFINITY_ENV

    environ = contract._import("sglang.srt.environ")
    ((name, value),) = SGLANG_AFFINITY_ENV.items()
    monkeypatch.delenv(name, raising=False)
    assert environ.envs.SGLANG_SET_CPU_AFFINITY.get() is False
    monkeypatch.setenv(name, value)
    assert environ.envs.SGLANG_SET_CPU_AFFINITY.get() is True
    common = contract._import("sglang.srt.utils.common")
    assert callable(common.set_gpu_proc_affinity)
