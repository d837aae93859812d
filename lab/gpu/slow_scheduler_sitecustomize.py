"""The ``sitecustomize.py`` that lab/gpu/bisect_repo.py writes into its repository's commits.

With a commit's tree first on a server's PYTHONPATH, Python runs this file as every process
starts (site.py), SGLang's scheduler process too (a spawned interpreter: bisect_repo.py's
docstring cites the lines). It imports nothing of SGLang itself, since every Python process
that sees the path runs it: an import hook waits for ``sglang.srt.managers.scheduler`` and,
once the module has run, wraps ``Scheduler.run_batch`` so that it sleeps ``BATCH_SLEEP_S``
before every batch and says so once on stderr (the server log) when it first does. With
``SIMULATOR_FLAGS``, the specperf simulator's command line gets them instead (the dry run).
Either way it then runs the ``sitecustomize`` it shadows, the next one on sys.path (a Python
distribution may ship its own), so layering the tree changes nothing else.

bisect_repo.py replaces the two assignments below with a commit's values; as written here
the file slows nothing.
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import os
import sys
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

BATCH_SLEEP_S = 0.0
SIMULATOR_FLAGS: list[str] = []

SCHEDULER_MODULE = "sglang.srt.managers.scheduler"
# Marks the hook in sys.meta_path: a second copy of this file further down the path (another
# commit's tree) finds it there and installs none, so a batch never sleeps twice.
HOOK_MARK = "slows_sglang_scheduler_batches"


def slowed_run_batch(run_batch: Callable[..., Any], sleep_s: float) -> Callable[..., Any]:
    """``run_batch`` after a sleep of ``sleep_s``; the first call says so on stderr."""
    said = False

    @functools.wraps(run_batch)
    def run_batch_after_sleep(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal said
        if not said:
            said = True
            print(
                f"[bisect-repo sitecustomize] Scheduler.run_batch sleeps {sleep_s * 1000:g} ms "
                f"before every batch (pid {os.getpid()}, {__file__})",
                file=sys.stderr,
                flush=True,
            )
        time.sleep(sleep_s)
        return run_batch(self, *args, **kwargs)

    return run_batch_after_sleep


def slow_scheduler(module: ModuleType, sleep_s: float) -> None:
    scheduler = getattr(module, "Scheduler", None)
    run_batch = getattr(scheduler, "run_batch", None)
    if scheduler is None or run_batch is None:
        print(
            f"[bisect-repo sitecustomize] {module.__name__} has no Scheduler.run_batch: "
            "nothing slowed",
            file=sys.stderr,
            flush=True,
        )
        return
    scheduler.run_batch = slowed_run_batch(run_batch, sleep_s)


class SchedulerImportHook:
    """A meta path finder that lets the other finders find the scheduler's module, then
    wraps its loader's ``exec_module`` so that the module is slowed as soon as it has run."""

    slows_sglang_scheduler_batches = True

    def __init__(self, sleep_s: float) -> None:
        self.sleep_s = sleep_s

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != SCHEDULER_MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None:
            return spec
        execute = loader.exec_module

        def exec_then_slow(module: ModuleType) -> None:
            execute(module)
            slow_scheduler(module, self.sleep_s)

        loader.exec_module = exec_then_slow  # type: ignore[method-assign]
        return spec


def install_hook(sleep_s: float) -> None:
    if any(getattr(finder, HOOK_MARK, False) for finder in sys.meta_path):
        return
    sys.meta_path.insert(0, SchedulerImportHook(sleep_s))


def run_shadowed_sitecustomize() -> None:
    """The first ``sitecustomize`` on sys.path after this file's folder, run as site.py would
    have run it (once, not registered in sys.modules, where this module is)."""
    here = os.path.dirname(os.path.realpath(__file__))
    folders = [os.path.realpath(entry or os.getcwd()) for entry in sys.path]
    later = sys.path[folders.index(here) + 1 :] if here in folders else list(sys.path)
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", later)
    if spec is None or spec.loader is None:
        return
    if os.path.realpath(spec.origin or "") == os.path.realpath(__file__):
        return
    shadowed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shadowed)


if BATCH_SLEEP_S > 0:
    install_hook(BATCH_SLEEP_S)
# Of a step's processes only the server's command line carries --model-path (the simulator's,
# in the dry run).
if SIMULATOR_FLAGS and "--model-path" in sys.argv:
    sys.argv.extend(SIMULATOR_FLAGS)
run_shadowed_sitecustomize()
