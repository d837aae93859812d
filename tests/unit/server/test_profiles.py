"""pytest_specperf.server.profiles: deployment profiles as validated TOML."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_specperf.errors import ProfileError
from pytest_specperf.server.profiles import (
    BUILTIN_PROFILE_DIR,
    DEFAULT_PROFILE,
    RESERVED_FLAGS,
    Profile,
    available_profiles,
    builtin_profiles,
    load_profile_file,
    resolve_profile,
)
from pytest_specperf.sim.model import PROFILES as SIM_PROFILES

MINIMAL = 'name = "mine"\nmodel_path = "org/model"\n'


def write_profile(directory: Path, text: str, filename: str = "p.toml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / filename
    path.write_text(text, encoding="utf-8")
    return path


def load_error(tmp_path: Path, text: str) -> tuple[Path, str]:
    path = write_profile(tmp_path, text)
    with pytest.raises(ProfileError) as info:
        load_profile_file(path)
    return path, str(info.value)


@pytest.mark.parametrize("path", sorted(BUILTIN_PROFILE_DIR.glob("*.toml")), ids=lambda p: p.name)
def test_builtin_profile_file_loads_and_validates(path: Path) -> None:
    """Every shipped profile file loads, and its name matches its file name."""
    profile = load_profile_file(path)
    assert profile.name == path.stem
    assert profile.source == str(path)


def test_default_profile_is_builtin() -> None:
    """The default profile is among the built-ins."""
    assert DEFAULT_PROFILE in builtin_profiles()


def test_default_profile_uses_model_as_draft_with_fp8_kv(default_profile: Profile) -> None:
    """The seed deployment drafts with the model's own MTP layer and an FP8 KV cache."""
    assert default_profile.draft_model_path == "@model"
    assert default_profile.tp_size == 4
    assert default_profile.extra_argv()[:2] == ["--kv-cache-dtype", "fp8_e4m3"]


def test_user_profile_dir_shadows_builtin_of_same_name(tmp_path: Path) -> None:
    """A user profile named like a built-in replaces it."""
    write_profile(tmp_path, f'name = "{DEFAULT_PROFILE}"\nmodel_path = "my/fork"\n')
    assert resolve_profile(DEFAULT_PROFILE, [tmp_path]).model_path == "my/fork"


def test_user_profile_dir_extends_builtins(tmp_path: Path) -> None:
    """A user directory adds its profiles next to the built-ins."""
    write_profile(tmp_path, MINIMAL)
    names = set(available_profiles([tmp_path]))
    assert {"mine", DEFAULT_PROFILE} <= names


def test_resolve_profile_by_path(tmp_path: Path) -> None:
    """A path to a .toml file resolves to that file's profile."""
    path = write_profile(tmp_path, MINIMAL)
    profile = resolve_profile(str(path))
    assert (profile.name, profile.source) == ("mine", str(path))


def test_resolve_profile_missing_toml_path_names_it(tmp_path: Path) -> None:
    """A .toml path that does not exist is a ProfileError naming the path."""
    missing = tmp_path / "nope.toml"
    with pytest.raises(ProfileError, match="does not exist") as info:
        resolve_profile(str(missing))
    assert str(missing) in str(info.value)


def test_resolve_unknown_profile_lists_known_names() -> None:
    """An unknown name is a ProfileError that lists the known profiles."""
    with pytest.raises(ProfileError) as info:
        resolve_profile("no-such-profile")
    assert "no-such-profile" in str(info.value)
    assert DEFAULT_PROFILE in str(info.value)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        pytest.param(MINIMAL + "colour = 'red'\n", ["colour"], id="unknown-field"),
        pytest.param(MINIMAL + 'tp_size = "4"\n', ["tp_size"], id="wrong-type"),
        pytest.param(MINIMAL + "tp_size = 0\n", ["tp_size"], id="tp-size-not-positive"),
        pytest.param('name = "a/b"\nmodel_path = "m"\n', ["name"], id="name-with-slash"),
        pytest.param('name = "mine\\n"\nmodel_path = "m"\n', ["name"], id="name-with-newline"),
        pytest.param(
            MINIMAL + 'speculative_algorithm = "MEDUSA"\n',
            ["speculative_algorithm", "EAGLE"],
            id="unknown-algorithm-lists-choices",
        ),
        pytest.param(
            MINIMAL + 'speculative_algorithm = "EAGLE"\nspeculative_eagle_topk = 4\n',
            ["speculative_num_draft_tokens"],
            id="topk-above-one-needs-draft-tokens",
        ),
        pytest.param(
            MINIMAL + '[[args]]\nflag = "--kv-cache-dtype\\n"\nwhy = "x"\n',
            ["args"],
            id="flag-with-newline",
        ),
        pytest.param(MINIMAL + '[[args]]\nflag = "--x"\n', ["why"], id="flag-without-why"),
        pytest.param(
            MINIMAL + '[[args]]\nflag = "--x"\nwhy = "  "\n', ["why"], id="flag-with-blank-why"
        ),
        pytest.param("name = \n", ["TOML"], id="invalid-toml"),
        pytest.param(MINIMAL + '[env]\n"1BAD" = "x"\n', ["env"], id="bad-env-name"),
        pytest.param(
            MINIMAL + "launch_timeout_s = 0.0\n", ["launch_timeout_s"], id="timeout-not-positive"
        ),
        pytest.param(MINIMAL + "launch_timeout_s = nan\n", ["launch_timeout_s"], id="timeout-nan"),
        pytest.param(
            MINIMAL + "later_boot_estimate_s = -1\n",
            ["later_boot_estimate_s"],
            id="later-boot-negative",
        ),
    ],
)
def test_bad_profile_is_refused_naming_file_and_field(
    tmp_path: Path, text: str, named: list[str]
) -> None:
    """A profile file that breaks a rule is a ProfileError naming the file and what is wrong."""
    path, message = load_error(tmp_path, text)
    assert str(path) in message
    for word in named:
        assert word in message


@pytest.mark.parametrize("flag", sorted(RESERVED_FLAGS))
def test_reserved_flag_in_args_is_refused(tmp_path: Path, flag: str) -> None:
    """A flag the suite sets itself may not appear in args."""
    text = MINIMAL + f'[[args]]\nflag = "{flag}"\nvalue = "4"\nwhy = "x"\n'
    path, message = load_error(tmp_path, text)
    assert str(path) in message and "args" in message and flag in message


@pytest.mark.parametrize("flag", ["-x", "kv-cache-dtype", "--KV", "--kv cache"])
def test_flag_not_a_long_option_is_refused(tmp_path: Path, flag: str) -> None:
    """Every args flag must look like '--lower-case-name'."""
    _, message = load_error(tmp_path, MINIMAL + f'[[args]]\nflag = "{flag}"\nwhy = "x"\n')
    assert "args" in message and repr(flag) in message


def test_non_utf8_file_is_profile_error(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are a ProfileError, not a UnicodeDecodeError."""
    path = tmp_path / "p.toml"
    path.write_bytes(b"name = '\xff'\n")
    with pytest.raises(ProfileError, match="TOML"):
        load_profile_file(path)


def test_deeply_nested_toml_is_profile_error(tmp_path: Path) -> None:
    """Pathologically nested TOML is reported as a ProfileError."""
    path = write_profile(tmp_path, "x = " + "[" * 5000 + "\n")
    with pytest.raises(ProfileError):
        load_profile_file(path)


def test_invalid_user_profile_breaks_resolution_with_its_file_named(tmp_path: Path) -> None:
    """An invalid file in a profile directory is reported by path when resolving names."""
    bad = write_profile(tmp_path, "name = 1\n", filename="bad.toml")
    with pytest.raises(ProfileError) as info:
        resolve_profile(DEFAULT_PROFILE, [tmp_path])
    assert str(bad) in str(info.value)


_FIELDS = [
    "name",
    "model_path",
    "description",
    "tp_size",
    "speculative_algorithm",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "draft_model_path",
    "sim_profile",
    "launch_timeout_s",
    "later_boot_estimate_s",
    "bogus",
]
_TOML_VALUES = st.one_of(
    st.integers(-5, 10).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["true", "inf", "-inf", '"NEXTN"', '"ngram"', '"a/b"', "[]", "{}"]),
    st.text(max_size=12).map(json.dumps),
)
_TOML_DOCS = st.one_of(
    st.text(max_size=200),
    st.dictionaries(st.sampled_from(_FIELDS), _TOML_VALUES, max_size=8).map(
        lambda d: "".join(f"{k} = {v}\n" for k, v in d.items())
    ),
    st.lists(
        st.tuples(st.sampled_from(["--x", "--tp-size", "-y", "--ok-flag"]), _TOML_VALUES),
        max_size=3,
    ).map(
        lambda items: MINIMAL + "".join(f'[[args]]\nflag = "{f}"\nwhy = {w}\n' for f, w in items)
    ),
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TOML_DOCS)
def test_fuzz_any_text_gives_profile_or_one_line_profile_error(tmp_path: Path, text: str) -> None:
    """Any file content yields a valid profile or a one-line ProfileError, nothing else."""
    path = tmp_path / f"{uuid.uuid4().hex}.toml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        profile = load_profile_file(path)
    except ProfileError as exc:
        assert len(str(exc).splitlines()) == 1
        assert str(path) in str(exc)
        return
    assert profile.model_path.strip() and profile.tp_size >= 1


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("0 = 1.0", "depth of 1 or more"),
        ("x = 2.0", "depth of 1 or more"),
        ("1 = 2.5", "outside 1 to 2"),
        ("3 = 0.5", "outside 1 to 4"),
    ],
)
def test_simulated_accept_length_outside_what_a_depth_can_accept_is_refused(
    tmp_path: Path, table: str, problem: str
) -> None:
    """An accept length names a speculative depth and fits its draft tokens plus one."""
    _, message = load_error(tmp_path, MINIMAL + f"[simulated_accept_length]\n{table}\n")
    assert "simulated_accept_length" in message
    assert problem in message


def test_seed_class_profile_simulates_a_falling_per_step_gain() -> None:
    """The seed-class profile's accept lengths grow with depth, each step adding less."""
    profile = builtin_profiles()["qwen3-next-real-width-fp8-mtp"]
    lengths = [profile.simulated_accept_length_at(depth) for depth in (1, 2, 3)]
    assert all(length is not None for length in lengths)
    one, two, three = (float(length or 0) for length in lengths)
    assert 1 < one < two < three
    assert three - two < two - one


def test_a_shipped_profiles_context_is_the_one_its_simulator_reports() -> None:
    """A shipped profile that states its model's context states the one the simulator that
    emulates it serves: a workload refused for one is refused by the other."""
    stated = {
        name: profile
        for name, profile in builtin_profiles().items()
        if profile.context_length is not None
    }
    assert stated, "no shipped profile states its context"
    for name, profile in stated.items():
        assert profile.context_length == SIM_PROFILES[profile.sim_profile].context_length, name
