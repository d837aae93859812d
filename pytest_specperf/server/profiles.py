"""Deployment profiles: what server to boot, as data.

A profile is a TOML file (see ``server/deployment_profiles/``). Users add their own without
code: pass ``--specperf-profile=path/to/profile.toml`` or put files in a directory named by
``--specperf-profile-dir``. Every field is validated; errors name the file and the field.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated

import msgspec
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from pytest_specperf.errors import ProfileError

BUILTIN_PROFILE_DIR = Path(__file__).parent / "deployment_profiles"
DEFAULT_PROFILE = "qwen3.5-122b-a10b-fp8-tp4-mtp"
SAME_AS_MODEL = "@model"
# The SGLang release the contract tests check launch commands against; version-limited
# profile flags are chosen for it when the runner's SGLang version is unknown.
REFERENCE_SGLANG_VERSION = "0.5.23"

SPECULATIVE_FLAG_PREFIX = "--speculative-"
SPECULATIVE_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")
_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_FLAG_PATTERN = re.compile(r"^--[a-z0-9][a-z0-9-]*$")
# Flags the suite sets itself from the profile's typed fields and the run; a profile that
# repeats them in `args` would fight the builder.
RESERVED_FLAGS = frozenset(
    {
        "--model-path",
        "--tp-size",
        "--tensor-parallel-size",
        "--host",
        "--port",
        "--api-key",
        "--speculative-algorithm",
        "--speculative-num-steps",
        "--speculative-eagle-topk",
        "--speculative-num-draft-tokens",
        "--speculative-draft-model-path",
    }
)

PositiveInt = Annotated[int, msgspec.Meta(ge=1)]


class ServerFlag(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """One extra server flag, with the reason the deployment needs it.

    ``sglang`` (a version specifier such as ``"<0.5.15"``) limits the flag to the SGLang
    releases that know it: SGLang renames flags between releases. ``speculative_only``
    leaves the flag out of the no-speculation control (depth 0); flags named
    ``--speculative-*`` are left out of it anyway.
    """

    flag: str
    why: str
    value: str | None = None
    sglang: str | None = None
    speculative_only: bool = False

    def in_control(self) -> bool:
        return not (self.speculative_only or self.flag.startswith(SPECULATIVE_FLAG_PREFIX))

    def applies_to(self, sglang_version: str) -> bool:
        if self.sglang is None:
            return True
        return SpecifierSet(self.sglang).contains(sglang_version, prereleases=True)


class Profile(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """A deployment: model, parallelism, speculation and every other flag it needs."""

    name: str
    model_path: str
    description: str = ""
    tp_size: PositiveInt = 1
    speculative_algorithm: str | None = None
    speculative_eagle_topk: PositiveInt = 1
    # Only read when topk > 1; with topk = 1 SGLang forces draft tokens = steps + 1.
    speculative_num_draft_tokens: PositiveInt | None = None
    draft_model_path: str | None = None
    # Names a generator that builds the model folder locally (e.g. a tiny dummy-weight model).
    model_factory: str | None = None
    # The model's context in tokens (its max_position_embeddings): a workload or trace line
    # longer than this is refused before anything boots. None: the built model's, if any.
    context_length: PositiveInt | None = None
    args: tuple[ServerFlag, ...] = ()
    env: dict[str, str] = {}
    # Depth (as a string key) -> the accept length SGLang is told to simulate at that depth
    # (SGLANG_SIMULATE_ACC_LEN): dummy weights never agree with their draft, so without it
    # every depth reads accept length 1 and the depth trade-off is not measured.
    simulated_accept_length: dict[str, float] = {}
    sim_profile: str = "qwen3.5-122b-a10b-fp8-4x-rtx-pro-6000"
    launch_timeout_s: float | None = None
    # Seconds one boot takes (start to healthy, and the stop), for the run's time estimate: the
    # run's first boot, and its later ones on the same machine (kernels compiled and cached by
    # the first; None: as long as the first).
    boot_estimate_s: float | None = None
    later_boot_estimate_s: float | None = None
    source: str = ""

    def simulated_accept_length_at(self, steps: int) -> float | None:
        return self.simulated_accept_length.get(str(steps))

    def extra_argv(
        self, sglang_version: str = REFERENCE_SGLANG_VERSION, *, speculative: bool = True
    ) -> list[str]:
        """The profile's own flags; ``speculative=False``: those of the control (depth 0)."""
        argv: list[str] = []
        for item in self.args:
            if not item.applies_to(sglang_version):
                continue
            if not speculative and not item.in_control():
                continue
            argv.append(item.flag)
            if item.value is not None:
                argv.append(item.value)
        return argv


def _validate(profile: Profile, source: str) -> Profile:
    def bad(field: str, problem: str) -> ProfileError:
        return ProfileError(f"profile {profile.name!r} ({source}): {field}: {problem}")

    if not _NAME_PATTERN.fullmatch(profile.name):
        raise bad("name", "use letters, digits, '.', '_' and '-' only (it names a directory)")
    if not profile.model_path.strip():
        raise bad("model_path", "must not be empty")
    algorithm = profile.speculative_algorithm
    if algorithm is not None and algorithm.upper() not in SPECULATIVE_ALGORITHMS:
        raise bad(
            "speculative_algorithm",
            f"{algorithm!r} is not one of {', '.join(SPECULATIVE_ALGORITHMS)}",
        )
    if profile.speculative_eagle_topk > 1 and profile.speculative_num_draft_tokens is None:
        raise bad("speculative_num_draft_tokens", "required when speculative_eagle_topk > 1")
    for item in profile.args:
        if not _FLAG_PATTERN.fullmatch(item.flag):
            raise bad("args", f"{item.flag!r} is not a long option like '--kv-cache-dtype'")
        if item.flag in RESERVED_FLAGS:
            raise bad("args", f"{item.flag} is set by the suite from the profile's fields")
        if not item.why.strip():
            raise bad("args", f"{item.flag}: say why the deployment needs it (field 'why')")
        if item.sglang is not None:
            try:
                SpecifierSet(item.sglang)
            except InvalidSpecifier:
                raise bad(
                    "args", f"{item.flag}: sglang = {item.sglang!r} is not a version specifier"
                ) from None
    for key in profile.env:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise bad("env", f"{key!r} is not an environment variable name")
    for depth_key, length in profile.simulated_accept_length.items():
        if not depth_key.isdigit() or int(depth_key) < 1:
            raise bad("simulated_accept_length", f"{depth_key!r} is not a depth of 1 or more")
        if not (math.isfinite(length) and 1.0 <= length <= int(depth_key) + 1):
            raise bad(
                "simulated_accept_length",
                f"depth {depth_key}: {length} is outside 1 to {int(depth_key) + 1} "
                "(one verified token plus at most one per draft step)",
            )
    timeout = profile.launch_timeout_s
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise bad("launch_timeout_s", "must be a positive number of seconds")
    for field in ("boot_estimate_s", "later_boot_estimate_s"):
        boot = getattr(profile, field)
        if boot is not None and not (math.isfinite(boot) and boot >= 0):
            raise bad(field, "must be a number of seconds >= 0")
    return msgspec.structs.replace(profile, source=source)


def load_profile_file(path: Path) -> Profile:
    """Read and validate one profile file."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProfileError(f"cannot read profile {path}: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ProfileError(f"profile {path} is not valid TOML: {exc}") from exc
    try:
        profile = msgspec.convert(raw, Profile, strict=True)
    except msgspec.ValidationError as exc:
        raise ProfileError(f"profile {path}: {exc}") from exc
    return _validate(profile, str(path))


def _profile_files(extra_dirs: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for directory in (*extra_dirs, BUILTIN_PROFILE_DIR):
        if directory.is_dir():
            files.extend(sorted(directory.glob("*.toml")))
    return files


def available_profiles(extra_dirs: Sequence[Path] = ()) -> dict[str, Profile]:
    """All profiles by name; a user directory's profile shadows a built-in of the same name."""
    found: dict[str, Profile] = {}
    for path in _profile_files(extra_dirs):
        profile = load_profile_file(path)
        found.setdefault(profile.name, profile)
    return found


def builtin_profiles() -> dict[str, Profile]:
    return available_profiles(())


def resolve_profile(name_or_path: str, extra_dirs: Sequence[Path] = ()) -> Profile:
    """A profile by name (user dirs first, then built-ins) or by path to a .toml file."""
    candidate = Path(name_or_path)
    if name_or_path.endswith(".toml") or candidate.is_file():
        if not candidate.is_file():
            raise ProfileError(f"profile file {name_or_path} does not exist")
        return load_profile_file(candidate)
    profiles = available_profiles(extra_dirs)
    if name_or_path not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        raise ProfileError(f"unknown profile {name_or_path!r}; known profiles: {known}")
    return profiles[name_or_path]
