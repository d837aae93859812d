"""ARCHITECTURE.md's import rules, checked on the package's source (ast, nothing imported).

RULES is the data; ARCHITECTURE.md repeats each rule's ``text`` word for word (a test below
holds the two together), so changing a rule means changing both.
"""

from __future__ import annotations

import ast
import itertools
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.scripts import load_script, run_script

REPO = Path(__file__).resolve().parents[2]
PACKAGE = "pytest_specperf"
PYTEST_MODULES = ("pytest", "_pytest", "xdist", "pluggy")


@dataclass(frozen=True)
class Rule:
    text: str  # the rule as ARCHITECTURE.md states it
    importers: tuple[str, ...]  # modules (or packages) the rule applies to
    forbidden: tuple[str, ...]  # modules (or packages) they must not import
    exempt: tuple[str, ...] = ()  # importers the rule does not apply to
    allowed: tuple[str, ...] = ()  # modules of ``forbidden`` that may be imported after all
    facade_exempt: bool = False  # the package's __init__.py (the public facade) may


def _p(*names: str) -> tuple[str, ...]:
    return tuple(f"{PACKAGE}.{name}" if name else PACKAGE for name in names)


def _never_imports(package: str, *forbidden: str, why: str = "") -> Rule:
    """``package/ never imports a/, b/ or c/`` (then ``: why``), the text made from the lists."""
    names = [f"{name}/" for name in forbidden]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    text = f"{package}/ never imports {listed}" + (f": {why}" if why else ".")
    return Rule(text, importers=_p(package), forbidden=_p(*forbidden))


RULES: tuple[Rule, ...] = (
    Rule(
        "Only plugin/ imports pytest (or xdist, pluggy).",
        importers=_p(""),
        forbidden=PYTEST_MODULES,
        exempt=_p("plugin"),
    ),
    Rule(
        "sim/ imports nothing of the package outside sim/: it is a separate program.",
        importers=_p("sim"),
        forbidden=_p(""),
    ),
    Rule(
        "Nothing imports sim/: the suite starts it as a process, by module name.",
        importers=_p(""),
        forbidden=_p("sim"),
        exempt=_p("sim"),
    ),
    Rule(
        "Nothing imports plugin/ or cli/ but themselves (and the package's facade): they are the "
        "two front ends.",
        importers=_p(""),
        forbidden=_p("plugin", "cli"),
        exempt=_p("plugin", "cli"),
        facade_exempt=True,
    ),
    Rule(
        "plugin/ and cli/ never import each other.",
        importers=_p("plugin", "cli"),
        forbidden=_p("plugin", "cli"),
    ),
    _never_imports(
        "config",
        "gate",
        "run",
        "plugin",
        "cli",
        why="the options are read before anything is run or judged.",
    ),
    _never_imports("server", "measure", "gate", "config", "run"),
    _never_imports("measure", "server", "gate", "config", "run"),
    Rule(
        "gate/ only decides: it never imports config/, run/, plugin/ or cli/ (plugin/gate.py, "
        "the pytest-facing side, imports gate/; A/B boots are run by run/ab/, gate/ab/ only "
        "decides).",
        importers=_p("gate"),
        forbidden=_p("config", "run", "plugin", "cli"),
    ),
    Rule(
        "gate/ measures nothing: of measure/ and server/ it reads only measure/repeats.py "
        "(samples merged into a point), measure/workload.py (the default workload) and "
        "server/hardware.py (the hardware key in a baseline's path).",
        importers=_p("gate"),
        forbidden=_p("measure", "server"),
        allowed=_p("measure.repeats", "measure.workload", "server.hardware"),
    ),
    _never_imports(
        "results",
        "measure",
        "server",
        "gate",
        "config",
        "run",
        why="what the reports compute from results (speedups, tokens per verify step, a client "
        "that fell behind, interval summaries) lives in results/.",
    ),
    Rule(
        "results/schema.py imports nothing of the package but its struct modules "
        "results/open_loop_schema.py and results/testbed_schema.py.",
        importers=_p("results.schema"),
        forbidden=_p(""),
        allowed=_p("results.open_loop_schema", "results.testbed_schema"),
    ),
    Rule(
        "results/open_loop_schema.py, results/testbed_schema.py, errors.py, files.py, depth.py, "
        "server/profiles.py, interrupts.py and version.py import nothing else of the package.",
        importers=_p(
            "results.open_loop_schema",
            "results.testbed_schema",
            "errors",
            "files",
            "depth",
            "server.profiles",
            "interrupts",
            "version",
        ),
        forbidden=_p(""),
    ),
    _never_imports("history", "server", "measure", "gate", "config", "run"),
    Rule(
        "Nothing outside history/ imports it but plugin/ and cli/ (its front ends).",
        importers=_p(""),
        forbidden=_p("history"),
        exempt=_p("history", "plugin", "cli"),
    ),
    _never_imports("run", "plugin", "cli", why="a run is plain code that both front ends drive."),
    Rule(
        "Nothing in the package imports tests/ or lab/: they are not shipped.",
        importers=_p(""),
        forbidden=("tests", "lab"),
    ),
)
# What every part may import: errors.py (one-line exceptions), interrupts.py (the one signal
# policy of a run) and version.py (the package's __version__).
ALWAYS_ALLOWED = _p("errors", "interrupts", "version")


def within(module: str, prefixes: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_sources() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((REPO / PACKAGE).rglob("*.py"))}


def imports_of(
    module: str, source: str, known: Iterable[str], *, is_package: bool = False
) -> set[str]:
    """Every module ``module`` imports, absolute; ``from pkg import sub`` counts as pkg.sub."""
    modules = set(known)
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    return found


def violations(imports: Mapping[str, set[str]]) -> list[str]:
    """``importer -> imported`` lines that break a rule, with the rule's text."""
    found: list[str] = []
    for importer, imported in sorted(imports.items()):
        for target in sorted(imported):
            for rule in RULES:
                if not within(importer, rule.importers) or within(importer, rule.exempt):
                    continue
                if rule.facade_exempt and importer == PACKAGE:
                    continue
                if rule.forbidden != PYTEST_MODULES and target in ALWAYS_ALLOWED:
                    continue
                if within(target, rule.allowed):
                    continue
                if within(target, rule.forbidden) and not _own_part(importer, target, rule):
                    found.append(f"{importer} imports {target}: {rule.text}")
    return found


def _own_part(importer: str, target: str, rule: Rule) -> bool:
    """A part's modules may import each other (sim/ from sim/, server/ from server/ ...)."""
    for part in rule.importers:
        if part != PACKAGE and within(importer, (part,)) and within(target, (part,)):
            return True
    return False


def package_imports() -> dict[str, set[str]]:
    sources = package_sources()
    return {
        module: imports_of(
            module,
            path.read_text(encoding="utf-8"),
            sources,
            is_package=path.name == "__init__.py",
        )
        for module, path in sources.items()
    }


def test_the_package_keeps_every_import_rule() -> None:
    """No module imports what ARCHITECTURE.md says its part must not."""
    assert violations(package_imports()) == []


@pytest.mark.parametrize(
    ("importer", "target"),
    [
        ("pytest_specperf.sim.app", "pytest_specperf.plugin"),
        ("pytest_specperf.measure.loadgen", "pytest"),
        ("pytest_specperf.run.depth_session", "pytest"),
        ("pytest_specperf.measure.loadgen", "pytest_specperf.server.process"),
        ("pytest_specperf.server.process", "pytest_specperf.measure.fields"),
        ("pytest_specperf.gate.floors", "pytest_specperf.run.depth_session"),
        ("pytest_specperf.gate.floors", "pytest_specperf.run.advice"),
        ("pytest_specperf.gate.ab.verdict", "pytest_specperf.run.ab.pairs"),
        ("pytest_specperf.gate.baselines", "pytest_specperf.measure.point"),
        ("pytest_specperf.gate.baselines", "pytest_specperf.server.process"),
        ("pytest_specperf.config.table", "pytest_specperf.gate.baselines"),
        ("pytest_specperf.results.report", "pytest_specperf.measure.client_monitor"),
        ("pytest_specperf.results.schema", "pytest_specperf.measure.workload"),
        ("pytest_specperf.results.schema", "pytest_specperf.results.stats"),
        ("pytest_specperf.results.testbed_schema", "pytest_specperf.results.schema"),
        ("pytest_specperf.run.depth_session", "pytest_specperf.sim.model"),
        ("pytest_specperf.run.depth_session", "pytest_specperf.cli.command"),
        ("pytest_specperf.run.sampling", "pytest_specperf.plugin.session"),
        ("pytest_specperf.run.ending", "pytest_specperf.history.recorder"),
        ("pytest_specperf.cli.bench", "pytest_specperf.plugin.gate"),
        ("pytest_specperf.measure.loadgen", "tests.support.points"),
        ("pytest_specperf.sim.model", "lab.studies._probe"),
    ],
)
def test_a_forbidden_import_is_reported(importer: str, target: str) -> None:
    """The checker itself: each of these imports breaks a rule and is named."""
    lines = violations({importer: {target}})
    assert lines and all(line.startswith(f"{importer} imports {target}: ") for line in lines)


def test_imports_resolve_relative_and_submodule_forms() -> None:
    """``from . import x`` and ``from pkg import sub`` name the module they load."""
    known = {"pytest_specperf.sim", "pytest_specperf.sim.app", "pytest_specperf.sim.model"}
    source = "from . import model\nfrom .app import make\nfrom pytest_specperf.sim import app\n"
    assert imports_of("pytest_specperf.sim.args", source, known) == {
        "pytest_specperf.sim.model",
        "pytest_specperf.sim.app",
    }


def test_every_rule_names_modules_that_exist() -> None:
    """A rule about a part that was renamed away would pass while checking nothing."""
    modules = set(package_sources())
    for rule in RULES:
        for prefix in (*rule.importers, *rule.exempt):
            assert any(within(m, (prefix,)) for m in modules), (rule.text, prefix)


def test_architecture_md_states_every_rule() -> None:
    """The doc and this test carry the same rules, word for word."""
    doc = " ".join((REPO / "ARCHITECTURE.md").read_text(encoding="utf-8").split())
    missing = [rule.text for rule in RULES if rule.text not in doc]
    assert missing == []


def import_cycles(imports: Mapping[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other in a loop (Tarjan's strongly connected
    components of two or more), imports inside functions included."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in imports.get(module, ()):
            if target not in imports:
                continue
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return cycles


def test_no_modules_import_each_other_in_a_loop() -> None:
    """No import loop in the package (measure/loadgen.py and measure/procs.py were one)."""
    graph = {m: {t for t in ts if t != m} for m, ts in package_imports().items()}
    for package in [m for m in graph if m.count(".") <= 1]:
        graph[package] = {t for t in graph[package] if not t.startswith(package + ".")}
    assert import_cycles(graph) == []


def test_a_loop_is_found() -> None:
    """The loop finder itself, on a loop of three and a module outside it."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]


# -- One A/B pair, from --specperf-base-python to the verdict (issue 51) ----------------------
# A straight way down: each module imports the next, none is entered twice.
AB_WALK = _p(
    "plugin",  # pytest_addoption, pytest_configure
    "plugin.configure",  # the option's row as a pytest option; Settings.base; the SpecperfRun
    "plugin.session",  # SpecperfRun.start_depth: in A/B mode, the depth's comparison
    "run.ab.comparison",  # run, and recorded into results.json after every pair
    "run.ab.pairs",  # pairs of boots (run/ab/boots.py), ABBA, until decided; AbRun
    "gate.ab.verdict",  # the look after each pair: the verdict
)
MAX_WALK_MODULES = 10


def source_path(module: str) -> str:
    """A module's file as ARCHITECTURE.md names it: ``plugin/__init__.py``, ``run/ab/pairs.py``."""
    return str(package_sources()[module].relative_to(REPO / PACKAGE))


def broken_steps(walk: tuple[str, ...], imports: Mapping[str, set[str]]) -> list[str]:
    """Each step of ``walk`` whose module does not import the next one."""
    return [f"{a} -> {b}" for a, b in itertools.pairwise(walk) if b not in imports.get(a, set())]


def test_an_ab_pair_walks_straight_down_from_the_option_to_the_verdict() -> None:
    assert len(AB_WALK) <= MAX_WALK_MODULES
    assert len(set(AB_WALK)) == len(AB_WALK)
    assert broken_steps(AB_WALK, package_imports()) == []


def test_a_step_that_climbs_back_up_breaks_the_walk() -> None:
    """The walk checker itself: a module that does not import the next one is named."""
    imports = {"a": {"b"}, "b": {"a"}, "c": {"b"}}
    assert broken_steps(("a", "b", "c"), imports) == ["b -> c"]


def test_architecture_md_gives_the_same_walk() -> None:
    doc = " ".join((REPO / "ARCHITECTURE.md").read_text(encoding="utf-8").split())
    assert " -> ".join(f"`{source_path(m)}`" for m in AB_WALK) in doc


# -- Sizes: the top and the hook modules are rules; the other sizes are figures --------------
# A module or a class is as large as its role needs (issue 51): the largest are reported
# (pytest -s, and the test's JUnit properties), so that growth is seen, never failed on.
MAX_TOP_LEVEL_MODULES = 6  # at the package's top, __init__.py included
MAX_HOOK_MODULE_LINES = 400  # the plugin's hook-defining modules together stay under it
HOOK_MODULES = _p("plugin", "plugin.session")  # ARCHITECTURE.md: only these define hooks
SIZES = REPO / "tools" / "package_sizes.py"  # prints the largest modules and classes


def line_count(source: str) -> int:
    return len(source.splitlines())


def defines_hooks(source: str) -> bool:
    """Whether a module defines a pytest hook: a function or method named ``pytest_*``."""
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("pytest_")
        for node in ast.walk(ast.parse(source))
    )


def _sources() -> dict[str, str]:
    return {module: path.read_text(encoding="utf-8") for module, path in package_sources().items()}


def _sizes() -> ModuleType:
    return load_script(SIZES)


def test_the_size_report_names_the_largest_module_and_class_with_their_figures() -> None:
    """``python tools/package_sizes.py`` runs and lists the largest module with its length, the
    class with the most methods with its count and the modules at the package's top."""
    sizes = _sizes()
    modules = sizes.sources()
    lines = {module: sizes.line_count(source) for module, source in modules.items()}
    methods = {
        f"{module} {name}": count
        for module, source in modules.items()
        for name, count in sizes.method_counts(source).items()
    }
    at_top = sizes.top_level_modules(package_sources().values(), REPO / PACKAGE)
    done = run_script(SIZES, "--top", "3")
    assert done.returncode == 0, done.stderr
    for name, count in (sizes.largest(lines, 1)[0], sizes.largest(methods, 1)[0]):
        assert f"{count:5d}  {name}" in done.stdout
    assert f"at the top ({len(at_top)}): {', '.join(at_top)}" in done.stdout


def test_the_size_report_lists_the_largest_first() -> None:
    """The report itself: modules by length, classes by methods, the top's modules named."""
    sources = {
        "long.py": "x = 1\n" * 601,
        "part/short.py": "class A:\n    def a(self): ...\n    def b(self): ...\n",
    }
    said = _sizes().report(sources, top=2).splitlines()
    assert said[:5] == [
        "2 modules, 604 lines",
        "at the top (1): long.py",
        "largest modules (lines):",
        "    601  long.py",
        "      3  part/short.py",
    ]
    assert said[5:] == ["classes with the most methods:", "      2  part/short.py A"]


def test_a_module_of_a_part_is_not_counted_at_the_top() -> None:
    """The counter itself: seven modules at the top are seven; one in a part is not counted."""
    root = Path("/p")
    paths = [root / f"m{i}.py" for i in range(7)] + [root / "part" / "m.py", root / "README.md"]
    assert len(_sizes().top_level_modules(paths, root)) == 7 > MAX_TOP_LEVEL_MODULES


def test_the_plugins_hooks_are_in_two_modules_under_400_lines_in_all() -> None:
    """Hooks thin: plugin/__init__.py and session.py's SpecperfRun hand the work to the
    plugin's other modules, which define no hook."""
    sources = _sources()
    plugin = {m: s for m, s in sources.items() if within(m, _p("plugin"))}
    hooked = sorted(m for m, source in plugin.items() if defines_hooks(source))
    assert hooked == sorted(HOOK_MODULES)
    assert sum(line_count(sources[m]) for m in hooked) < MAX_HOOK_MODULE_LINES


def test_a_hook_is_found_as_a_function_or_a_method() -> None:
    method = (
        "class Run:\n"
        "    @pytest.hookimpl(wrapper=True)\n"
        "    def pytest_report_header(self):\n"
        "        return (yield)\n"
    )
    assert defines_hooks("def pytest_configure(config):\n    pass\n")
    assert defines_hooks(method)
    assert not defines_hooks("def header_lines(run):\n    return []\n")


def test_a_class_of_21_methods_is_counted_so() -> None:
    """The counter itself: a property and a method under ``if`` count, a function inside a
    method does not, a nested class is counted on its own."""
    methods = "".join(f"    def m{i}(self):\n        pass\n" for i in range(18))
    source = (
        "class Crowded:\n"
        f"{methods}"
        "    @property\n"
        "    def p(self):\n"
        "        def helper():\n"
        "            pass\n"
        "        return helper\n"
        "    if TYPE_CHECKING:\n"
        "        def declared(self): ...\n"
        "    async def a(self):\n"
        "        pass\n"
        "    class Inner:\n"
        "        def one(self):\n"
        "            pass\n"
    )
    assert _sizes().method_counts(source) == {"Crowded": 21, "Inner": 1}


# -- what loading the plugin costs every pytest run -------------------------------------------

# pytest loads the plugin (an entry point) in every run of an environment that has it, the
# user's own unit tests included: these libraries are imported by the functions that need
# them, not at load (scipy.stats and ruptures were 1.1 of the 1.6 s `specperf` took to start).
LOADED_ON_USE = ("scipy", "ruptures")


def _imported_by(module: str) -> set[str]:
    code = f"import sys, {module}; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return {name.split(".")[0] for name in done.stdout.split()}


@pytest.mark.parametrize("module", ["pytest_specperf.plugin", "pytest_specperf.cli"])
def test_loading_the_plugin_or_the_command_imports_no_heavy_library(module: str) -> None:
    assert _imported_by(module).isdisjoint(LOADED_ON_USE)


def test_a_heavy_import_at_load_is_seen() -> None:
    assert not _imported_by("scipy.stats").isdisjoint(LOADED_ON_USE)


# -- ARCHITECTURE.md's map names only what exists ---------------------------------------------
_NAMED = re.compile(r"`([\w./]+(?:\.py|/))`")


def named_paths(paragraph: str) -> list[str]:
    return _NAMED.findall(paragraph)


def missing_parts(text: str, package: Path, repo: Path) -> list[str]:
    """Each file or folder a paragraph names that is not there: a path as written (from the
    package or the repository), or a bare module name in a folder the paragraph names (or
    whose whole path it gave)."""
    missing = []
    for paragraph in text.split("\n\n"):
        named = named_paths(paragraph)
        folders = [package / n for n in named if n.endswith("/")]
        for name in named:
            if (package / name).exists() or (repo / name).exists():
                continue
            bare = "/" not in name.rstrip("/")
            if bare and any((f / name).exists() for f in folders):
                continue
            if bare and any(n.endswith("/" + name) for n in named):
                continue  # the paragraph gave its whole path before
            missing.append(name)
    return missing


def test_architecture_md_names_only_files_and_folders_that_exist() -> None:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert missing_parts(text, REPO / PACKAGE, REPO) == []


def test_a_name_the_map_gives_that_is_not_there_is_found(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "run").mkdir(parents=True)
    (tmp_path / "pkg" / "run" / "a.py").write_text("")
    text = "**`run/`**: `a.py` and `b.py`, `run/a.py`, `gone/`"
    assert missing_parts(text, tmp_path / "pkg", tmp_path) == ["b.py", "gone/"]
