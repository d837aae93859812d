"""pytest_specperf.server.launch: the one builder of server commands."""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path

import pytest

from pytest_specperf.errors import ServerStartError, UsageError
from pytest_specperf.server.launch import (
    SGLANG_MODULE,
    SIM_MODULE,
    build_launch,
    redact_argv,
    require_server_module,
    server_environment,
)
from pytest_specperf.server.profiles import Profile, builtin_profiles, load_profile_file
from tests.support.no_sglang import hiding_sglang


def value_of(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def profile_from(tmp_path: Path, text: str) -> Profile:
    path = tmp_path / "p.toml"
    path.write_text('name = "p"\nmodel_path = "org/model"\n' + text, encoding="utf-8")
    return load_profile_file(path)


@pytest.mark.parametrize("steps", [1, 2, 3, 4, 5])
def test_default_profile_speculation_flags_per_depth(default_profile: Profile, steps: int) -> None:
    """At topk 1 the draft tokens are steps + 1, and '@model' drafts with the model path."""
    argv = build_launch(default_profile, steps).argv
    assert value_of(argv, "--speculative-algorithm") == "NEXTN"
    assert value_of(argv, "--speculative-num-steps") == str(steps)
    assert value_of(argv, "--speculative-eagle-topk") == "1"
    assert value_of(argv, "--speculative-num-draft-tokens") == str(steps + 1)
    assert value_of(argv, "--speculative-draft-model-path") == default_profile.model_path


def test_sglang_command_runs_launch_server_on_host_and_port(default_profile: Profile) -> None:
    """The SGLang command runs sglang.launch_server with full flag names, 127.0.0.1 and the port."""
    argv = build_launch(default_profile, 3, port=31234).argv
    assert argv[:3] == [sys.executable, "-m", SGLANG_MODULE]
    assert value_of(argv, "--model-path") == default_profile.model_path
    assert value_of(argv, "--tp-size") == "4"
    assert value_of(argv, "--host") == "127.0.0.1"
    assert value_of(argv, "--port") == "31234"
    assert value_of(argv, "--kv-cache-dtype") == "fp8_e4m3"
    assert "--trust-remote-code" in argv


def test_argv_is_a_list_of_strings(default_profile: Profile) -> None:
    """Every argv item is a str, numbers written as a user would type them (no shell)."""
    command = build_launch(default_profile, 2, backend="sim", sim_speedup=5.0, api_key="k")
    assert all(isinstance(item, str) for item in command.argv)
    assert value_of(command.argv, "--sim-speedup") == "5"
    assert value_of(command.argv, "--speculative-num-steps") == "2"
    assert value_of(command.argv, "--api-key") == "k"


def test_model_path_override_is_also_the_draft(default_profile: Profile) -> None:
    """An overriding model path replaces the model and the '@model' draft path."""
    argv = build_launch(default_profile, 3, model_path="/models/local").argv
    assert value_of(argv, "--model-path") == "/models/local"
    assert value_of(argv, "--speculative-draft-model-path") == "/models/local"


def test_sim_backend_runs_simulator_with_profile_and_speedup(default_profile: Profile) -> None:
    """The sim backend runs pytest_specperf.sim and adds --sim-profile and --sim-speedup."""
    argv = build_launch(default_profile, 3, backend="sim", sim_speedup=5.0).argv
    assert argv[1:3] == ["-m", SIM_MODULE]
    assert value_of(argv, "--sim-profile") == default_profile.sim_profile
    assert value_of(argv, "--sim-speedup") == "5"


def test_sglang_backend_has_no_sim_flags(default_profile: Profile) -> None:
    """The real server is never given simulator flags."""
    argv = build_launch(default_profile, 3, sim_speedup=5.0).argv
    assert not [item for item in argv if item.startswith("--sim-")]


def test_server_args_are_appended_last(default_profile: Profile) -> None:
    """User server arguments come after everything else, so they win."""
    extra = ("--kv-cache-dtype", "auto")
    argv = build_launch(default_profile, 3, backend="sim", api_key="k", server_args=extra).argv
    assert argv[-2:] == list(extra)


def test_ngram_profile_gives_only_draft_tokens(tmp_path: Path) -> None:
    """NGRAM has no steps or topk: its depth is steps + 1 draft tokens."""
    profile = profile_from(tmp_path, 'speculative_algorithm = "NGRAM"\n')
    argv = build_launch(profile, 3).argv
    assert value_of(argv, "--speculative-algorithm") == "NGRAM"
    assert value_of(argv, "--speculative-num-draft-tokens") == "4"
    assert "--speculative-num-steps" not in argv
    assert "--speculative-eagle-topk" not in argv


def test_topk_above_one_uses_profile_draft_tokens(tmp_path: Path) -> None:
    """With topk > 1 the profile's draft token count is used as given."""
    profile = profile_from(
        tmp_path,
        'speculative_algorithm = "EAGLE"\nspeculative_eagle_topk = 4\n'
        "speculative_num_draft_tokens = 16\n",
    )
    argv = build_launch(profile, 3).argv
    assert value_of(argv, "--speculative-num-draft-tokens") == "16"


def test_non_speculative_profile_has_no_speculative_flags(tmp_path: Path) -> None:
    """A profile without an algorithm launches without speculative flags."""
    argv = build_launch(profile_from(tmp_path, ""), 3).argv
    assert not [item for item in argv if item.startswith("--speculative")]


def test_negative_depth_raises_usage_error(default_profile: Profile) -> None:
    """A speculation depth below 0 is a UsageError."""
    with pytest.raises(UsageError, match="depth"):
        build_launch(default_profile, -1)


@pytest.mark.parametrize("name", sorted(builtin_profiles()))
def test_control_depth_boots_the_same_deployment_without_speculative_flags(name: str) -> None:
    """Depth 0 of every shipped profile: no --speculative-* flag, every other flag kept."""
    profile = builtin_profiles()[name]
    control = build_launch(profile, 0, sglang_version="0.5.23").argv
    speculative = build_launch(profile, 3, sglang_version="0.5.23").argv
    assert not [item for item in control if item.startswith("--speculative")]
    assert _without_speculative_flags(speculative) == control


def _without_speculative_flags(argv: list[str]) -> list[str]:
    """argv without each --speculative-* flag and its value."""
    kept: list[str] = []
    skip_value = False
    for item in argv:
        if skip_value:
            skip_value = False
        elif item.startswith("--speculative"):
            skip_value = True
        else:
            kept.append(item)
    return kept


def test_control_depth_leaves_out_speculative_only_and_speculative_named_args(
    tmp_path: Path,
) -> None:
    """Profile flags marked speculative_only, or named --speculative-*, are not in depth 0."""
    profile = profile_from(
        tmp_path,
        'speculative_algorithm = "EAGLE"\n'
        '[[args]]\nflag = "--speculative-attention-mode"\nvalue = "decode"\nwhy = "t"\n'
        '[[args]]\nflag = "--mamba-scheduler-strategy"\nvalue = "extra_buffer"\nwhy = "t"\n'
        "speculative_only = true\n"
        '[[args]]\nflag = "--kv-cache-dtype"\nvalue = "fp8_e4m3"\nwhy = "t"\n',
    )
    control = build_launch(profile, 0).argv
    assert "--speculative-attention-mode" not in control
    assert "--mamba-scheduler-strategy" not in control
    assert value_of(control, "--kv-cache-dtype") == "fp8_e4m3"
    deeper = build_launch(profile, 2).argv
    assert value_of(deeper, "--speculative-attention-mode") == "decode"
    assert value_of(deeper, "--mamba-scheduler-strategy") == "extra_buffer"


def test_unknown_backend_raises_usage_error(default_profile: Profile) -> None:
    """A backend other than sglang or sim is a UsageError."""
    with pytest.raises(UsageError, match="backend"):
        build_launch(default_profile, 3, backend="vllm")  # type: ignore[arg-type]


def test_profile_env_is_carried(tmp_path: Path) -> None:
    """The profile's environment variables travel with the command."""
    profile = profile_from(tmp_path, '[env]\nSGLANG_FLAG = "1"\n')
    assert build_launch(profile, 1).env == {"SGLANG_FLAG": "1"}


SIMULATED = "[simulated_accept_length]\n1 = 1.85\n3 = 3.19\n"


def test_simulated_accept_length_sets_sglang_env_at_its_depth(tmp_path: Path) -> None:
    """A depth with a simulated accept length tells SGLang through SGLANG_SIMULATE_ACC_LEN."""
    profile = profile_from(tmp_path, SIMULATED)
    assert build_launch(profile, 3).env == {"SGLANG_SIMULATE_ACC_LEN": "3.19"}


def test_simulated_accept_length_is_absent_at_other_depths_and_the_control(
    tmp_path: Path,
) -> None:
    """Depths without a figure, and the control, run SGLang's real acceptance."""
    profile = profile_from(tmp_path, SIMULATED)
    assert build_launch(profile, 2).env == {}
    assert build_launch(profile, 0).env == {}


def test_simulated_accept_length_is_not_given_to_the_simulator(tmp_path: Path) -> None:
    """The simulator models acceptance itself: SGLang's knob is not passed to it."""
    profile = profile_from(tmp_path, SIMULATED)
    assert build_launch(profile, 3, backend="sim").env == {}


def test_display_round_trips_through_shell_quoting(default_profile: Profile) -> None:
    """display() is shell-quoted: splitting it gives back the argv."""
    command = build_launch(default_profile, 3, server_args=["--chat-template", "a b"])
    assert shlex.split(command.display()) == command.argv


def test_display_redacts_api_key_given_by_builder(default_profile: Profile) -> None:
    """The API key the builder adds is shown as ***."""
    command = build_launch(default_profile, 3, api_key="s3cret-key")
    assert "--api-key" in command.argv and "s3cret-key" in command.argv
    shown = command.display()
    assert "s3cret-key" not in shown
    assert shlex.split(shown)[-2:] == ["--api-key", "***"]


def test_display_redacts_api_key_given_with_equals(default_profile: Profile) -> None:
    """'--api-key=X' in server args is shown as '--api-key=***'."""
    command = build_launch(default_profile, 3, server_args=["--api-key=s3cret-key"])
    shown = command.display()
    assert "s3cret-key" not in shown
    assert shlex.split(shown)[-1] == "--api-key=***"


def test_redact_argv_hides_admin_api_key_value() -> None:
    """The admin key's value is redacted too, other items are kept."""
    assert redact_argv(["--admin-api-key", "adm", "--port", "1"]) == [
        "--admin-api-key",
        "***",
        "--port",
        "1",
    ]


def test_sglang_launch_without_sglang_fails_before_boot_suggesting_the_simulator(
    default_profile: Profile, tmp_path: Path
) -> None:
    """The check runs the command's Python in the server's environment, as the boot would."""
    command = build_launch(default_profile, 3)
    command.env["PYTHONPATH"] = hiding_sglang(tmp_path / "no-sglang")
    with pytest.raises(ServerStartError) as info:
        require_server_module(command)
    assert str(info.value) == (
        f"SGLang is not installed for {sys.executable} (no module {SGLANG_MODULE}): "
        'pip install "pytest-specperf[sglang]" on a GPU machine, or run on the simulator '
        "with --specperf-backend=sim"
    )


@pytest.mark.skipif(
    importlib.util.find_spec("sglang") is None, reason="SGLang is not installed here"
)
def test_sglang_launch_with_sglang_installed_passes_the_check(default_profile: Profile) -> None:
    require_server_module(build_launch(default_profile, 3))


def test_a_server_python_that_does_not_run_is_named(
    default_profile: Profile, tmp_path: Path
) -> None:
    missing = str(tmp_path / "no-python")
    with pytest.raises(ServerStartError, match=f"cannot run the server's Python {missing}: "):
        require_server_module(build_launch(default_profile, 3, python=missing))


def test_the_simulator_needs_no_sglang(default_profile: Profile, tmp_path: Path) -> None:
    command = build_launch(default_profile, 3, backend="sim", python=str(tmp_path / "nothing"))
    require_server_module(command)  # not run: the simulator is this package


def test_server_environment_expands_the_runs_own_variables_and_a_later_pair_wins() -> None:
    """``$NAME``/``${NAME}`` is this process's value (empty when unset), so a source tree can
    be put before the Python path a server already needs."""
    found = server_environment(
        [("PYTHONPATH", "/src/python:$PYTHONPATH"), ("X", "${UNSET_VAR}y"), ("X", "z")],
        {"PYTHONPATH": "/site"},
    )
    assert found == {"PYTHONPATH": "/src/python:/site", "X": "z"}


def test_an_unset_variable_leaves_no_empty_element_in_a_path() -> None:
    """Found with specperf bisect run from inside the repository it bisects: its default
    ``PYTHONPATH={worktree}:$PYTHONPATH``, with PYTHONPATH unset, ended in ``:``, an empty
    element, so the server's working directory (the user's checkout) came next on its
    path, and a commit without a sitecustomize.py of its own ran the checkout's: both ends
    of a 15% range read alike ("no-change")."""
    found = server_environment(
        [("PYTHONPATH", "/tree:$PYTHONPATH"), ("P", "${UNSET_VAR}:/a::$B"), ("U", "http://$H:80")],
        {"B": "/b"},
    )
    assert found == {"PYTHONPATH": "/tree", "P": "/a::/b", "U": "http://:80"}
