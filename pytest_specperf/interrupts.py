"""The run's one signal policy: SIGINT or SIGTERM, whenever it arrives, ends the run as interrupted.

Python's default SIGINT raises KeyboardInterrupt wherever the main thread happens to be, and
that is where signals got lost: inside an event loop a KeyboardInterrupt raised in a protocol
callback is taken by uvloop for that connection's error, and asyncio.Runner turns the first
Ctrl-C into a cancellation that any ``suppress(CancelledError)`` on the way swallows (the run
then measured every point and wrote a baseline). Here a signal is first of all *recorded*, and
the record is never cleared: whoever swallows the exception, the run still ends as interrupted
(exit status 2, no baseline) because the front ends read :func:`interrupted`.

What a signal does depends on where the run is:

- running code: the first signal raises :class:`Interrupted` (a KeyboardInterrupt, so pytest
  and ``except KeyboardInterrupt`` treat it as Ctrl-C) in the main thread;
- inside :func:`deferred` (a write that must land whole, stopping a server): it is raised when
  the section ends, so results.json and the in-memory state agree on what was measured;
- while the load generator's event loop runs (:func:`cancelling`): the loop's main task is
  cancelled, and :func:`checkpoint` raises after the loop, even if the coroutine finished;
- once the interrupt is being handled (:func:`ending`) or after the first raise: nothing is
  raised again; a second signal asks teardown to hurry (:func:`hurry_requested`).

Baselines written before a late signal are taken back (:func:`on_interrupt`), up to the
process's exit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)
INTERRUPTED_EXIT_STATUS = 2  # pytest's ExitCode.INTERRUPTED
# The specperf command's, each subcommand's: as a shell reports a program ended by Ctrl-C.
COMMAND_INTERRUPTED_STATUS = 130


class Interrupted(KeyboardInterrupt):
    """A SIGINT or SIGTERM, raised as Ctrl-C: teardown stops the servers and saves the results."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        if signum == signal.SIGTERM:
            message = "SIGTERM received: stopping the servers and saving the results"
        else:
            message = "Ctrl-C / SIGINT received: stopping the servers and saving the results"
        super().__init__(message)

    @property
    def name(self) -> str:
        return signal_name(self.signum)


def signal_name(signum: int) -> str:
    return "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C / SIGINT"


def interrupt_name(exc: BaseException) -> str:
    """How an interruption is named in messages: ``SIGTERM``, ``Ctrl-C / SIGINT``."""
    if isinstance(exc, Interrupted):
        return exc.name
    if isinstance(exc, KeyboardInterrupt):
        return signal_name(signal.SIGINT)
    return type(exc).__name__


class SignalPolicy:
    """The state behind the module's functions (one per process; tests make their own)."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self.raised = False
        self.ending_now = False
        self.finished = False
        self._deferring = 0
        self._deferred_pending = False
        self._cancel: tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]] | None = None
        self._previous: dict[int, Any] = {}
        self._undos: list[Callable[[], None]] = []
        self._atexit_registered = False
        self.exit_status: int | None = None
        self._exiting = False

    # -- installing ----------------------------------------------------------------------
    @property
    def installed(self) -> bool:
        return bool(self._previous)

    def install(self) -> bool:
        """Take SIGINT and SIGTERM over in the main thread; True if this call did.

        False when already installed (a pytest run inside a pytest run: the outer one owns
        the policy), off the main thread, or where someone else's handlers are in place (a
        worker that ignores SIGINT): only Python's defaults are replaced.
        """
        if self.installed:
            return False
        if threading.current_thread() is not threading.main_thread():
            return False
        for signum in SIGNALS:
            current = signal.getsignal(signum)
            if current in (signal.SIG_DFL, signal.default_int_handler):
                self._previous[signum] = current
                signal.signal(signum, self._on_signal)
        if self.installed and not self._atexit_registered:
            atexit.register(self._at_exit)
            self._atexit_registered = True
        return self.installed

    def uninstall(self) -> None:
        for signum, previous in self._previous.items():
            if signal.getsignal(signum) == self._on_signal:
                signal.signal(signum, previous)
        self._previous.clear()

    # -- what a signal does --------------------------------------------------------------
    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        if self.finished:
            # The run has printed and written everything: a signal now still ends it as
            # interrupted (no baseline kept, exit status 2), at once.
            self._exit_interrupted()
            return
        if self._cancel is not None and not self.raised:
            loop, task = self._cancel
            self.raised = True  # taken on: the cancellation ends the loop, checkpoint raises
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(task.cancel)
            return
        if self._deferring:
            self._deferred_pending = True
            return
        if self.raised or self.ending_now:
            return
        self.raised = True
        raise Interrupted(signum)

    def interrupted(self) -> Interrupted | None:
        """The first signal of the run as its exception, or None; once set, never cleared."""
        return Interrupted(self.received[0]) if self.received else None

    def hurry_requested(self) -> bool:
        """A second signal came: teardown should not wait out its grace periods."""
        return len(self.received) >= 2

    def checkpoint(self) -> None:
        """Raise the run's interrupt if a signal came and the run goes on regardless."""
        if self.received and not self.ending_now and not self._deferring:
            self.raised = True
            raise Interrupted(self.received[0])

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Run a section whole: a signal inside it is raised once the section is done."""
        self._deferring += 1
        try:
            yield
        finally:
            self._deferring -= 1
        if self._deferring == 0 and self._deferred_pending:
            self._deferred_pending = False
            if not self.raised and not self.ending_now:
                self.raised = True
                raise Interrupted(self.received[0])

    @contextlib.contextmanager
    def cancelling(self, task: asyncio.Task[Any]) -> Iterator[None]:
        """While the event loop runs ``task``, a signal cancels it instead of raising."""
        loop = task.get_loop()
        outer = self._cancel
        self._cancel = (loop, task)
        try:
            if self.received and not self.ending_now:
                task.cancel()  # it came before the loop started
            yield
        finally:
            self._cancel = outer

    def ending(self) -> None:
        """The interrupt (or the run's end) is being handled: signals now only hurry it."""
        self.ending_now = True

    # -- what an interrupted run must not keep ---------------------------------------------
    def on_interrupt(self, action: Callable[[], None]) -> None:
        """Call ``action`` if the run turns out interrupted by a late signal (take back a
        baseline written before it, mark results.json); :meth:`conclude` or the signal runs it."""
        self._undos.append(action)

    def conclude(self, exit_status: int | None = None) -> bool:
        """The run is over: take back what an interrupted run must not keep; interrupted?

        From here on a signal ends the process at once with exit status 2 (after taking back
        what it must not keep). ``exit_status``: what the process will exit with otherwise;
        a run that wrote something to take back (a baseline) then ends the process itself at
        exit, with the signals blocked, so that no signal can come between its last check and
        the end (one that came during Python's own shutdown was otherwise lost: the baseline
        stayed and the process died of the signal).
        """
        self.ending_now = True
        interrupted = bool(self.received)
        if interrupted:
            self._run_undos()
        self.exit_status = exit_status
        self.finished = True
        return interrupted

    def _run_undos(self) -> None:
        undos, self._undos = self._undos, []
        for undo in reversed(undos):
            try:
                undo()
            except Exception as exc:  # one that fails must not stop the others
                with contextlib.suppress(Exception):
                    print(f"specperf: after the interrupt: {exc!r}", file=sys.stderr)

    def _exit_interrupted(self) -> None:
        # Another signal now would run this again from inside the undos, find none left and
        # exit at once: results.json stayed unmarked after a double SIGTERM (a soak moment).
        # Blocking the signals is not enough: one that arrived just before the block has its
        # Python handler run afterwards, inside the undos (a CI run lost the results.json
        # mark that way), so a nested call leaves the ending to the first.
        if self._exiting:
            return
        self._exiting = True
        with contextlib.suppress(ValueError):  # not the main thread: signals arrive there
            signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
        self._run_undos()
        self._flush()
        os._exit(INTERRUPTED_EXIT_STATUS)

    @staticmethod
    def _flush() -> None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()

    def _at_exit(self) -> None:
        """The process's last check: the signals are blocked, then a pending or received one
        ends it as interrupted; a run with something to take back ends here either way."""
        if not self.installed or threading.current_thread() is not threading.main_thread():
            return
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
        ends_here = self.finished and bool(self._undos) and self.exit_status is not None
        if ends_here:
            # Output first: a flush can take a while on a loaded machine, and a signal that
            # came meanwhile (blocked, so pending) was lost at the exit after it.
            self._flush()
        pending = signal.sigpending() & set(SIGNALS)
        if pending:
            self.received.extend(sorted(pending))
        if self.received:
            self._exit_interrupted()  # takes back, flushes, exits 2
        if ends_here and self.exit_status is not None:
            os._exit(self.exit_status)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


POLICY = SignalPolicy()


def install() -> bool:
    return POLICY.install()


def uninstall() -> None:
    POLICY.uninstall()


def installed() -> bool:
    return POLICY.installed


def interrupted() -> Interrupted | None:
    return POLICY.interrupted()


def hurry_requested() -> bool:
    return POLICY.hurry_requested()


def checkpoint() -> None:
    POLICY.checkpoint()


def deferred() -> contextlib.AbstractContextManager[None]:
    return POLICY.deferred()


def cancelling(task: asyncio.Task[Any]) -> contextlib.AbstractContextManager[None]:
    return POLICY.cancelling(task)


def ending() -> None:
    POLICY.ending()


def on_interrupt(undo: Callable[[], None]) -> None:
    POLICY.on_interrupt(undo)


def conclude(exit_status: int | None = None) -> bool:
    return POLICY.conclude(exit_status)
