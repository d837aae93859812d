"""lab/gpu/bisect_repo.py: a repository whose commits slow SGLang's scheduler from one commit on.

SGLang is not needed: a fake ``sglang.srt.managers.scheduler`` with the real per-batch method
(``Scheduler.run_batch(self, batch, pp_proxy_tensors=None)``) sits behind a commit's tree on
PYTHONPATH, and its scheduler runs in a process started the way SGLang starts its own
(multiprocessing's spawn method), so what a GPU run relies on is checked here: the tree's
sitecustomize reaches a spawned scheduler, wraps the method there and says so once.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.data import REPO
from tests.support.scripts import load_script

SLOW_FROM = 3
# Long enough to tell from a loaded machine's scheduling hiccups; the GPU run's is 6 ms.
SLEEP_S = 0.05
BATCHES = 4

FAKE_SCHEDULER = '''\
import time


class Scheduler:
    def run_batch(self, batch, pp_proxy_tensors=None):
        """Run a batch."""
        return batch


def run_scheduler_process(results):
    """As SGLang's scheduler process: the module imported anew in a spawned interpreter."""
    scheduler = Scheduler()
    started = time.perf_counter()
    for batch in range(BATCHES):
        assert scheduler.run_batch(batch) == batch
    results.put(
        {
            "seconds": time.perf_counter() - started,
            "wrapped": hasattr(Scheduler.run_batch, "__wrapped__"),
            "doc": Scheduler.run_batch.__doc__,
        }
    )
'''

# The parent starts the scheduler as SGLang's engine does (spawn), after importing the module
# itself as engine.py does; it reports what the spawned scheduler measured.
LAUNCHER = """\
import json
import multiprocessing as mp

from sglang.srt.managers.scheduler import run_scheduler_process

if __name__ == "__main__":
    mp.set_start_method("spawn", force=True)
    results = mp.Queue()
    process = mp.Process(target=run_scheduler_process, args=(results,))
    process.start()
    found = results.get(timeout=60)
    process.join(timeout=60)
    print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def bisect_repo() -> ModuleType:
    return load_script(REPO / "lab" / "gpu" / "bisect_repo.py")


@pytest.fixture(scope="module")
def built(
    bisect_repo: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[str]]:
    repo = tmp_path_factory.mktemp("layered") / "repo"
    commits = bisect_repo.build_repository(
        repo, commits=5, slow_from=SLOW_FROM, batch_sleep_s=SLEEP_S
    )
    return repo, [commit.sha for commit in commits]


@pytest.fixture(scope="module")
def fake_sglang(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fake-sglang")
    package = root / "sglang" / "srt" / "managers"
    package.mkdir(parents=True)
    for folder in (root / "sglang", root / "sglang" / "srt", package):
        (folder / "__init__.py").write_text("", encoding="utf-8")
    (package / "scheduler.py").write_text(
        f"BATCHES = {BATCHES}\n" + FAKE_SCHEDULER, encoding="utf-8"
    )
    (root / "launch.py").write_text(LAUNCHER, encoding="utf-8")
    return root


def tree_of(repo: Path, sha: str, at: Path) -> Path:
    """The commit's files, checked out into ``at`` (as specperf bisect's worktrees hold them)."""
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "--quiet", "--detach", str(at), sha],
        check=True,
    )
    return at


def run_python(
    *args: str, path: list[Path], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in path)}
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=True,
    )


def test_from_the_slow_commit_on_a_spawned_scheduler_sleeps_before_every_batch_and_says_so_once(
    built: tuple[Path, list[str]], fake_sglang: Path, tmp_path: Path
) -> None:
    repo, shas = built
    slow = tree_of(repo, shas[SLOW_FROM], tmp_path / "slow")
    done = run_python(str(fake_sglang / "launch.py"), path=[slow, fake_sglang])
    found = json.loads(done.stdout)
    assert found["wrapped"] and found["doc"] == "Run a batch."
    assert found["seconds"] >= BATCHES * SLEEP_S
    said = [line for line in done.stderr.splitlines() if "[bisect-repo sitecustomize]" in line]
    assert len(said) == 1, done.stderr
    assert f"Scheduler.run_batch sleeps {SLEEP_S * 1000:g} ms before every batch" in said[0]


def test_before_the_slow_commit_the_hook_is_off_and_the_scheduler_is_left_alone(
    built: tuple[Path, list[str]], fake_sglang: Path, tmp_path: Path
) -> None:
    """Commit 1 brings the sitecustomize with no sleep: nothing wraps run_batch (whether it
    slept is not asked of the clock: the method is the module's own)."""
    repo, shas = built
    for index in (0, 1, SLOW_FROM - 1):
        tree = tree_of(repo, shas[index], tmp_path / f"c{index}")
        assert (tree / "sitecustomize.py").exists() == (index >= 1)
        done = run_python(str(fake_sglang / "launch.py"), path=[tree, fake_sglang])
        assert json.loads(done.stdout)["wrapped"] is False
        assert "[bisect-repo sitecustomize]" not in done.stderr


def test_the_sitecustomize_it_shadows_still_runs_and_a_second_copy_does_not_sleep_twice(
    built: tuple[Path, list[str]], fake_sglang: Path, tmp_path: Path
) -> None:
    """A tree put before another commit's tree and a distribution's own sitecustomize: the
    first copy installs the hook, the second chains on without one, the distribution's runs
    once; the scheduler's method is wrapped once."""
    repo, shas = built
    first = tree_of(repo, shas[SLOW_FROM], tmp_path / "first")
    second = tree_of(repo, shas[-1], tmp_path / "second")
    distribution = tmp_path / "distribution"
    distribution.mkdir()
    (distribution / "sitecustomize.py").write_text(
        "import sys\nsys.distribution_sitecustomize_runs = "
        "getattr(sys, 'distribution_sitecustomize_runs', 0) + 1\n",
        encoding="utf-8",
    )
    probe = (
        "import json, sys\n"
        "from sglang.srt.managers.scheduler import Scheduler\n"
        "hooks = [f for f in sys.meta_path if getattr(f, 'slows_sglang_scheduler_batches', 0)]\n"
        "wraps, method = 0, Scheduler.run_batch\n"
        "while hasattr(method, '__wrapped__'):\n"
        "    wraps, method = wraps + 1, method.__wrapped__\n"
        "print(json.dumps({'hooks': len(hooks), 'wraps': wraps,\n"
        "    'distribution': getattr(sys, 'distribution_sitecustomize_runs', 0),\n"
        "    'sitecustomize': sys.modules['sitecustomize'].__file__}))\n"
    )
    done = run_python("-c", probe, path=[first, second, distribution, fake_sglang])
    found = json.loads(done.stdout)
    assert found == {
        "hooks": 1,
        "wraps": 1,
        "distribution": 1,
        "sitecustomize": str(first / "sitecustomize.py"),
    }


def test_the_same_options_give_the_same_hashes_so_a_rerun_on_another_machine_resumes(
    bisect_repo: ModuleType, built: tuple[Path, list[str]], tmp_path: Path
) -> None:
    _, shas = built
    again = bisect_repo.build_repository(
        tmp_path / "again", commits=5, slow_from=SLOW_FROM, batch_sleep_s=SLEEP_S
    )
    assert [commit.sha for commit in again] == shas
    other = bisect_repo.build_repository(
        tmp_path / "other", commits=5, slow_from=SLOW_FROM, batch_sleep_s=0.002
    )
    assert [commit.sha for commit in other][:SLOW_FROM] == shas[:SLOW_FROM]
    assert other[SLOW_FROM].sha != shas[SLOW_FROM]


def test_in_simulator_mode_the_slow_commits_add_the_flags_to_the_servers_command_line(
    bisect_repo: ModuleType, tmp_path: Path
) -> None:
    commits = bisect_repo.build_repository(
        tmp_path / "sim", commits=3, slow_from=2, simulator_flags=["--sim-slowdown=0.15"]
    )
    probe = "import sys; print(sys.argv[1:])"
    for index, added in ((1, ""), (2, ", '--sim-slowdown=0.15'")):
        tree = tree_of(tmp_path / "sim", commits[index].sha, tmp_path / f"sim-c{index}")
        served = run_python("-c", probe, "--model-path", "m", path=[tree]).stdout.strip()
        assert served == f"['--model-path', 'm'{added}]"
        # Any other process on the path is left alone.
        assert (
            run_python("-c", probe, "--port", "1", path=[tree]).stdout.strip() == "['--port', '1']"
        )


def run_batch_parameters(scheduler_source: Path) -> list[str] | None:
    """The parameters of ``Scheduler.run_batch`` in SGLang's scheduler.py, read from the source
    (importing it needs torch and a GPU build); None when the class has no such method."""
    tree = ast.parse(scheduler_source.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Scheduler":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "run_batch":
                    return [arg.arg for arg in item.args.args]
    return None


def test_the_installed_sglangs_scheduler_has_the_per_batch_method_the_hook_wraps() -> None:
    spec = importlib.util.find_spec("sglang")
    if spec is None or not spec.submodule_search_locations:
        # CI installs SGLang and sets this: there a missing SGLang fails, as in the contract tests.
        if os.environ.get("SPECPERF_REQUIRE_SGLANG") == "1":
            pytest.fail("SGLang is not installed and SPECPERF_REQUIRE_SGLANG=1")
        pytest.skip("SGLang is not installed (tools/install-sglang-contract.sh installs it)")
    package = Path(next(iter(spec.submodule_search_locations)))
    source = package / "srt" / "managers" / "scheduler.py"
    assert run_batch_parameters(source) == ["self", "batch", "pp_proxy_tensors"]
