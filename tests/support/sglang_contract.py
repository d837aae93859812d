"""The contract with real SGLang, checked against SGLang's own code (no GPU, no server).

Every function imports SGLang lazily, so this module imports without it. Install SGLang for
these checks with ``tools/install-sglang-contract.sh`` (CPU only, import-time packages).

- :func:`parse_launch_argv` runs launch flags through SGLang's own argument parser and
  ``ServerArgs.from_cli_args``, as ``python -m sglang.launch_server`` does, stopping before
  resolution (``ServerArgs.resolve_once``), which loads the model config and needs a GPU.
- :func:`check_launch` holds a profile's launch command at one depth to that parser, and
  checks the parsed values are the ones the profile meant.
- :func:`check_request_bodies` validates the load generator's request bodies with SGLang's
  request types.
- :func:`missing_fields` checks every response field the suite reads occurs in SGLang's
  source.
- :func:`undeclared_metrics` checks every ``/metrics`` name the suite polls is one SGLang
  declares; :func:`prefill_gauge_source` finds how SGLang counts running requests at a
  prefill.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import io
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from pytest_specperf.depth import CONTROL_DEPTH
from pytest_specperf.errors import SpecperfError
from pytest_specperf.measure import fields
from pytest_specperf.measure.workload import Workload, completions_body, generate_body
from pytest_specperf.server import info as server_info
from pytest_specperf.server.launch import SGLANG_MODULE, build_launch
from pytest_specperf.server.profiles import SAME_AS_MODEL, Profile

SGLANG_DISTRIBUTION = "sglang"
# torchvision ops that torchvision registers fake kernels for without checking its C
# extension loaded (torchvision 0.28 / 0.29 `_meta_registrations`).
_TORCHVISION_UNGUARDED_OPS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)


class ContractError(SpecperfError):
    """SGLang rejects something the suite builds, or is not importable."""


def sglang_version() -> str:
    """The installed SGLang's version."""
    try:
        return importlib.metadata.version(SGLANG_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ContractError(
            "sglang is not installed; run tools/install-sglang-contract.sh"
        ) from exc


def _import(module: str) -> Any:
    prepare_sglang_import()
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ContractError(
            f"cannot import {module} ({exc}); run tools/install-sglang-contract.sh"
        ) from exc


def server_args_type() -> Any:
    """SGLang's ``ServerArgs`` class."""
    return _import("sglang.srt.server_args").ServerArgs


def prepare_sglang_import() -> None:
    """Import torchvision first, even when its C extension cannot load; call before SGLang.

    The registry's torchvision wheels are CUDA builds; against a CPU torch their C ops do not
    load, which torchvision tolerates, except that it then registers fake kernels for nms
    and qnms, ops that do not exist, and its import fails. ``import sglang`` imports
    torchvision (through transformers and SGLang's model configs) without running it:
    declare those two schemas, without kernels, so the import completes. A torchvision whose
    C ops load, or no torchvision at all, is left untouched.
    """
    if "torchvision" in sys.modules:
        return
    try:
        importlib.import_module("torchvision")
        return
    except ImportError:
        return  # let SGLang's own import report it
    except RuntimeError as exc:
        if "torchvision::" not in str(exc):
            raise
    for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
        del sys.modules[name]
    torch = importlib.import_module("torch")
    library = torch.library.Library("torchvision", "FRAGMENT")
    for schema in _TORCHVISION_UNGUARDED_OPS:
        with contextlib.suppress(RuntimeError):  # already defined
            library.define(schema)
    _KEEP_ALIVE.append(library)
    importlib.import_module("torchvision")


_KEEP_ALIVE: list[Any] = []


def request_types() -> tuple[Any, Any]:
    """SGLang's ``GenerateReqInput`` and ``CompletionRequest`` classes."""
    io_struct = _import("sglang.srt.managers.io_struct")
    protocol = _import("sglang.srt.entrypoints.openai.protocol")
    return io_struct.GenerateReqInput, protocol.CompletionRequest


class _ParserError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _RaisingParser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise _ParserError(message)


def _offending_flag(message: str, flags: Sequence[str]) -> str:
    """The flag an argparse error message is about, as it appears in ``flags``."""
    if message.startswith("unrecognized arguments:"):
        words = message.split(":", 1)[1].split()
        bad = [w for w in words if w.startswith("-")]
        return " ".join(bad or words)
    if message.startswith("ambiguous option:"):
        return message.split(":", 1)[1].split()[0].split("=", 1)[0]
    if message.startswith("argument "):
        names = message[len("argument ") :].split(":", 1)[0]
        # "--tp-size/--tensor-parallel-size": name the spelling the command used.
        candidates = names.split("/")
        for flag in flags:
            if flag.split("=", 1)[0] in candidates:
                return flag.split("=", 1)[0]
        return candidates[0]
    return ""


def _server_flags(argv: Sequence[str]) -> list[str]:
    """Everything after ``-m sglang.launch_server`` (or the whole list if that is absent)."""
    items = list(argv)
    for i in range(len(items) - 1):
        if items[i] == "-m" and items[i + 1] == SGLANG_MODULE:
            return items[i + 2 :]
    return items


def parse_launch_argv(argv: Sequence[str]) -> dict[str, Any]:
    """Run launch flags through SGLang's own parser; return the server arguments as a dict.

    ``argv`` is a whole launch command (``[python, "-m", "sglang.launch_server", ...]``) or
    just its flags. Mirrors ``sglang.srt.server_args.prepare_server_args`` (parser, then
    ``ServerArgs.from_cli_args``) without its process-wide logging set-up; resolution, which
    needs the model and a GPU, is not run. Raises :class:`ContractError` naming the flag that
    SGLang rejects.
    """
    server_args_cls = server_args_type()
    flags = _server_flags(argv)
    parser = _RaisingParser(prog="sglang serve")
    server_args_cls.add_cli_args(parser)
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            namespace = parser.parse_args(flags)
    except _ParserError as exc:
        flag = _offending_flag(exc.message, flags)
        named = f"flag {flag!r}" if flag else "the command"
        raise ContractError(f"SGLang {sglang_version()} rejects {named}: {exc.message}") from None
    except SystemExit as exc:  # an action that exits on its own (e.g. --help, --version)
        detail = stderr.getvalue().strip().splitlines()
        raise ContractError(
            f"SGLang {sglang_version()}'s parser exited ({exc.code}) on {flags}: "
            f"{detail[-1] if detail else 'no message'}"
        ) from None
    known = parser._option_string_actions
    for arg in flags:
        flag = arg.split("=", 1)[0]
        if flag.startswith("--") and flag not in known:
            matches = sorted(option for option in known if option.startswith(flag))
            raise ContractError(
                f"SGLang {sglang_version()} accepts flag {flag!r} only as an abbreviation of "
                f"{' / '.join(matches) or 'another flag'}: spell the flag out"
            )
    try:
        server_args = server_args_cls.from_cli_args(namespace)
    except Exception as exc:
        raise ContractError(
            f"SGLang {sglang_version()}: ServerArgs.from_cli_args failed: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return {name: getattr(server_args, name, value) for name, value in vars(namespace).items()}


def launch_flag_arities() -> dict[str, int | str]:
    """Every flag of SGLang's launch parser and how many values it takes.

    0 for a switch (``store_true``, ``--x/--no-x``), 1 for one value, else argparse's nargs
    (``"?"``, ``"*"``, ``"+"``). ``-h/--help`` is left out. The simulator holds this table
    (``pytest_specperf/sim/sglang_flags.py``, written by ``tools/gen_sim_sglang_flags.py``)
    to accept every flag SGLang accepts and refuse the others as SGLang does.
    """
    parser = argparse.ArgumentParser(prog="sglang serve")
    server_args_type().add_cli_args(parser)
    arities: dict[str, int | str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        nargs = action.nargs
        arity: int | str = 1 if nargs is None else nargs  # type: ignore[assignment]
        for option in action.option_strings:
            arities[option] = arity
    return dict(sorted(arities.items()))


def _expected_values(
    profile: Profile, steps: int, model_path: str, host: str, port: int
) -> dict[str, Any]:
    expected: dict[str, Any] = {
        "model_path": model_path,
        "tp_size": profile.tp_size,
        "host": host,
        "port": port,
    }
    algorithm = profile.speculative_algorithm
    if algorithm is not None and steps != CONTROL_DEPTH:
        expected["speculative_algorithm"] = algorithm
        if algorithm.upper() == "NGRAM":
            expected["speculative_num_draft_tokens"] = steps + 1
        else:
            topk = profile.speculative_eagle_topk
            expected["speculative_num_steps"] = steps
            expected["speculative_eagle_topk"] = topk
            expected["speculative_num_draft_tokens"] = (
                steps + 1 if topk == 1 else profile.speculative_num_draft_tokens
            )
        if profile.draft_model_path is not None:
            draft = profile.draft_model_path
            expected["speculative_draft_model_path"] = (
                model_path if draft == SAME_AS_MODEL else draft
            )
    else:
        expected["speculative_algorithm"] = None
    for item in profile.args:
        if item.flag == "--kv-cache-dtype" and item.value is not None:
            expected["kv_cache_dtype"] = item.value
    return expected


def _flag_for(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _same(expected: Any, parsed: Any) -> bool:
    if expected is None or parsed is None:
        return expected is parsed
    return str(expected) == str(parsed) if isinstance(expected, str) else bool(expected == parsed)


def check_launch(
    profile: Profile,
    steps: int,
    server_args: Sequence[str] = (),
    *,
    model_path: str | None = None,
    host: str = "127.0.0.1",
    port: int = 30000,
) -> list[str]:
    """Problems with the SGLang launch command of ``profile`` at depth ``steps`` (empty: OK).

    Each problem names the profile (and its file) and the flag or field concerned. User
    ``server_args`` come last and win, so values they override are not held to the profile.
    """
    where = f"profile {profile.name!r}" + (f" ({profile.source})" if profile.source else "")
    model = model_path or profile.model_path
    command = build_launch(
        profile, steps, host=host, port=port, server_args=server_args, model_path=model_path
    )
    try:
        parsed = parse_launch_argv(command.argv)
    except ContractError as exc:
        return [f"{where}: {exc}"]
    problems: list[str] = []
    overridden = {arg.split("=", 1)[0] for arg in server_args if arg.startswith("--")}
    for dest, want in _expected_values(profile, steps, model, host, port).items():
        flag = _flag_for(dest)
        if flag in overridden or (dest == "tp_size" and "--tensor-parallel-size" in overridden):
            continue
        if dest not in parsed:
            problems.append(f"{where}: SGLang {sglang_version()} has no server argument {dest!r}")
            continue
        got = parsed[dest]
        if not _same(want, got):
            problems.append(
                f"{where}: {flag} (steps={steps}): SGLang parses {got!r}, "
                f"the profile means {want!r}"
            )
    topk, draft, n_steps = (
        parsed.get("speculative_eagle_topk"),
        parsed.get("speculative_num_draft_tokens"),
        parsed.get("speculative_num_steps"),
    )
    if topk == 1 and n_steps is not None and draft != n_steps + 1:
        problems.append(
            f"{where}: --speculative-num-draft-tokens (steps={steps}): {draft!r} with "
            f"--speculative-eagle-topk 1; SGLang forces it to steps + 1 = {n_steps + 1}"
        )
    return problems


def check_request_bodies(workload: Workload, model: str = "default") -> list[str]:
    """Problems SGLang's request types find in the bodies the load generator sends."""
    generate_req_input, completion_request = request_types()
    problems: list[str] = []
    for label, max_new in (("measured", None), ("warm-up", workload.warmup_max_new_tokens)):
        body = generate_body(workload, max_new_tokens=max_new)
        request, rejected = _built(
            f"/generate body ({label}): SGLang's GenerateReqInput",
            lambda: _normalized(generate_req_input(**body)),  # noqa: B023 (called at once)
        )
        problems += rejected or _compare_generate(label, body, request)
        completions = completions_body(workload, model, max_new_tokens=max_new)
        parsed, rejected = _built(
            f"/v1/completions body ({label}): SGLang's CompletionRequest",
            lambda: completion_request.model_validate(completions),  # noqa: B023 (called at once)
        )
        problems += rejected or _compare_completions(label, completions, parsed)
    return problems


def _normalized(request: Any) -> Any:
    request.normalize_batch_and_arguments()
    return request


def _built(what: str, build: Callable[[], Any]) -> tuple[Any, list[str]]:
    """What ``build`` returns and no problem, or None and the line saying ``what`` rejected it."""
    try:
        return build(), []
    except Exception as exc:
        return None, [f"{what} rejects it: {type(exc).__name__}: {exc}"]


def _compare_generate(label: str, body: dict[str, Any], request: Any) -> list[str]:
    problems: list[str] = []
    sampling = request.sampling_params
    if isinstance(sampling, list):
        sampling = sampling[0] if sampling else {}
    for key, want in body["sampling_params"].items():
        got = sampling.get(key) if isinstance(sampling, dict) else None
        if got != want:
            problems.append(
                f"/generate body ({label}): sampling_params.{key}: SGLang reads {got!r}, "
                f"the suite sends {want!r}"
            )
    if request.stream is not True:
        problems.append(f"/generate body ({label}): stream: SGLang reads {request.stream!r}")
    return problems


def _compare_completions(label: str, body: dict[str, Any], request: Any) -> list[str]:
    problems: list[str] = []
    for key in ("max_tokens", "temperature", "ignore_eos", "stream", "model", "prompt"):
        got = getattr(request, key, None)
        if got != body[key]:
            problems.append(
                f"/v1/completions body ({label}): {key}: SGLang reads {got!r}, "
                f"the suite sends {body[key]!r}"
            )
    options = getattr(request, "stream_options", None)
    if getattr(options, "include_usage", None) is not True:
        problems.append(
            f"/v1/completions body ({label}): stream_options.include_usage: SGLang reads "
            f"{options!r}"
        )
    return problems


def suite_field_names() -> list[str]:
    """Every SGLang response field name the suite reads: the fields of the structs it reads
    through (``pytest_specperf.server.info``, ``pytest_specperf.measure.fields``)."""
    names: list[str] = []
    for group in (
        server_info.SERVER_INFO_FIELDS,
        server_info.INTERNAL_STATE_FIELDS,
        fields.CHUNK_FIELDS,
        fields.META_INFO_FIELDS,
        fields.CHOICE_FIELDS,
        fields.GENERATE_RESPONSE_FIELDS,
        fields.USAGE_FIELDS,
    ):
        for name in group:
            if name not in names:
                names.append(name)
    return names


def sglang_source_root() -> Path:
    """The installed ``sglang`` package directory (found without importing it)."""
    try:
        files = importlib.metadata.files(SGLANG_DISTRIBUTION)
        dist = importlib.metadata.distribution(SGLANG_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ContractError(
            "sglang is not installed; run tools/install-sglang-contract.sh"
        ) from exc
    for file in files or ():
        if file.parts[:1] == ("sglang",) and file.name == "__init__.py" and len(file.parts) == 2:
            return Path(str(dist.locate_file(file))).parent
    raise ContractError("cannot locate the installed sglang package's source")


def _usage_pattern(names: Sequence[str]) -> re.Pattern[str]:
    """Whole-name uses: ``"name"`` / ``'name'``, ``.name``, ``name=`` / ``name:``."""
    alternatives = "|".join(re.escape(name) for name in sorted(set(names), key=len, reverse=True))
    return re.compile(
        rf"""(["'])(?P<literal>{alternatives})\1"""
        rf"|\.(?P<attribute>{alternatives})\b"
        rf"|(?<![\w.])(?P<binding>{alternatives})\s*(?::|=(?!=))"
    )


def _names_in_source(root: Path, names: Sequence[str]) -> set[str]:
    pattern = _usage_pattern(names)
    found: set[str] = set()
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        if not any(name in text for name in names if name not in found):
            continue
        for match in pattern.finditer(text):
            found.add(match.group("literal") or match.group("attribute") or match.group("binding"))
        if found.issuperset(names):
            break
    return found


def missing_fields(names: Iterable[str] | None = None) -> list[str]:
    """The field names (default: every one the suite reads) absent from SGLang's source.

    A name counts as present when SGLang's ``.py`` files use it whole as a string literal
    (``"spec_verify_ct"``), an attribute (``.spec_verify_ct``), a keyword argument, a field
    or an assignment (``spec_verify_ct=`` / ``spec_verify_ct:``): a name that occurs only
    inside a longer word or string does not count.
    """
    wanted = suite_field_names() if names is None else list(names)
    if not wanted:
        return []
    known = _names_in_source(sglang_source_root(), wanted)
    return [name for name in wanted if name not in known]


def _declared_names(root: Path) -> set[str]:
    """Every ``name="sglang:..."`` a Prometheus metric of SGLang's source is declared with."""
    declared = re.compile(r"""name\s*=\s*["'](sglang:[\w:]+)["']""")
    found: set[str] = set()
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "sglang:" in text:
            found.update(declared.findall(text))
    return found


def undeclared_metrics(names: Iterable[str]) -> list[str]:
    """Those of ``names`` (as ``/metrics`` serves them) no SGLang metric is declared as. A
    counter's served name carries ``_total``, which prometheus_client adds when the declared
    name lacks it."""
    declared = _declared_names(sglang_source_root())
    return [
        name
        for name in names
        if name not in declared and name.removesuffix("_total") not in declared
    ]


def prefill_gauge_source() -> str:
    """The source of SGLang's ``PrefillStats.from_adder`` (the running-request count its
    prefill log and gauge report) and of every call to it, joined."""
    root = sglang_source_root()
    parts: list[str] = []
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "from_adder" not in text:
            continue
        definition = re.search(r"def from_adder\(.*?\n\s*\)\n", text, re.S)
        if definition is not None:
            parts.append(definition.group(0))
        parts += re.findall(r"PrefillStats\.from_adder\([^)]*\)", text, re.S)
    if not parts:
        raise ContractError("SGLang's source has no PrefillStats.from_adder")
    return "\n".join(parts)


class _WordTokenizer:
    """A tokenizer stand-in for SGLang's Mooncake replay: no chat template (SGLang then joins
    the messages itself), one token a word."""

    def apply_chat_template(self, *args: Any, **kwargs: Any) -> str:
        raise ValueError("no chat template")

    def encode(self, text: str) -> list[int]:
        return list(range(len(text.split())))


def _mooncake_module() -> Any:
    """SGLang's ``sglang.benchmark.datasets.mooncake``, without its package's ``__init__``:
    that imports every dataset loader, and MMMU's needs Hugging Face ``datasets``, which the
    Mooncake reader does not use (and the contract install leaves out)."""
    name = "sglang.benchmark.datasets"
    if name not in sys.modules:
        benchmark = _import("sglang.benchmark")
        package = importlib.util.module_from_spec(
            importlib.machinery.ModuleSpec(name, None, is_package=True)
        )
        package.__path__ = [str(Path(benchmark.__file__).parent / "datasets")]
        sys.modules[name] = package
    return _import(f"{name}.mooncake")


def sglang_mooncake_rows(path: Path) -> list[dict[str, Any]]:
    """The trace's rows as SGLang's ``MooncakeDataset.load`` reads them (file order)."""
    mooncake = _mooncake_module()
    dataset = mooncake.MooncakeDataset(
        dataset_path=str(path), mooncake_workload="mooncake", num_requests=1 << 30
    )
    rows: list[dict[str, Any]] = dataset.load()
    return rows


def sglang_mooncake_replay(path: Path) -> list[tuple[float, int]]:
    """(seconds after the first request, output length) of each request as SGLang's
    ``get_mooncake_request_over_time`` yields them, one round each, in its send order.

    Run with a slowdown factor of 0, so nothing sleeps; the send offset is then read from the
    rows SGLang sorted in place (its replay sorts them by timestamp before sending)."""
    import asyncio

    mooncake = _mooncake_module()
    rows = sglang_mooncake_rows(path)

    async def collect() -> list[int]:
        return [
            row.output_len
            async for row in mooncake.get_mooncake_request_over_time(rows, _WordTokenizer(), 0.0, 1)
        ]

    outputs = asyncio.run(collect())
    first = rows[0]["timestamp"] if rows else 0
    return [
        ((row["timestamp"] - first) / 1000.0, out) for row, out in zip(rows, outputs, strict=True)
    ]
