"""Live progress of the point being measured: one status line, rewritten in place on a terminal.

Plain code, no pytest: :class:`PointProgress` counts finished requests (it is the load
generator's ``on_request_done`` callback) and renders the line; :class:`StatusLine` draws it
after whatever the terminal line already holds and wipes it again, without moving the cursor,
so the test runner's own output continues exactly where it left off.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from pytest_specperf.results.schema import RequestRecord

# Save the cursor, (text), clear to the end of the line, restore the cursor: the text is drawn
# to the right of the cursor and the cursor itself never moves.
_SAVE_CURSOR = "\x1b7"
_RESTORE_CURSOR = "\x1b8"
_CLEAR_TO_END = "\x1b[K"
# Below this many free columns the line is not drawn at all (it would say nothing useful).
MIN_ROOM = 16


class PointProgress:
    """Counts the finished requests of one point and says where the point stands."""

    def __init__(
        self,
        depth: int,
        concurrency: int,
        total: int,
        *,
        on_change: Callable[[PointProgress], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.depth = depth
        self.concurrency = concurrency
        self.total = total
        self.done = 0
        self.failed = 0
        self.tokens = 0
        self.began = clock()
        self._first_start: float | None = None
        self._on_change = on_change
        self._clock = clock

    def request_done(self, record: RequestRecord) -> None:
        """The load generator's per-request callback."""
        self.done += 1
        if record.ok:
            self.tokens += record.completion_tokens
        else:
            self.failed += 1
        if self._first_start is None or record.start < self._first_start:
            self._first_start = record.start
        if self._on_change is not None:
            self._on_change(self)

    def tok_s(self, now: float) -> float | None:
        """Tokens of finished requests per second since the first measured request started."""
        if self._first_start is None or now <= self._first_start:
            return None
        return self.tokens / (now - self._first_start)

    def line(self, now: float | None = None) -> str:
        now = self._clock() if now is None else now
        # Past its N requests a point keeps sending whole rounds until its minimum time
        # (--specperf-min-point-seconds): those are counted apart, never as "412/320".
        extra = self.done - self.total
        parts = [
            f"{self.done}/{self.total} requests"
            if extra <= 0
            else f"{self.total}/{self.total} requests + {extra} to fill the minimum time"
        ]
        if self.failed:
            parts.append(f"{self.failed} failed")
        rate = self.tok_s(now)
        parts.append("- tok/s" if rate is None else f"{rate:,.0f} tok/s")
        parts.append(f"{max(now - self.began, 0.0):.0f} s")
        return f"steps={self.depth} C={self.concurrency}: " + ", ".join(parts)


class RawWriter(Protocol):
    def __call__(self, text: str) -> None: ...


class StatusLine:
    """Draws one line of status to the right of the cursor and wipes it, cursor unmoved.

    ``room()`` gives the free columns left on the current line; the text is cut to fit, so it
    never wraps (a wrapped line could not be wiped in place).
    """

    def __init__(self, write: RawWriter, room: Callable[[], int]) -> None:
        self._write = write
        self._room = room
        self.shown = False

    def show(self, text: str) -> None:
        room = self._room() - 2  # a space before, and the last column left free
        if room < MIN_ROOM:
            self.clear()
            return
        if len(text) > room:
            text = text[: room - 1] + "~"
        self._write(f"{_SAVE_CURSOR} {text}{_CLEAR_TO_END}{_RESTORE_CURSOR}")
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self._write(_CLEAR_TO_END)
            self.shown = False


class LiveProgress:
    """A suite observer (suite.PointObserver) that keeps one status line up to date.

    ``unhidden()`` returns a context in which writes reach the terminal (the test runner
    captures output while a test runs); redraws are at most every ``min_interval_s``.
    """

    def __init__(
        self,
        status: StatusLine,
        unhidden: Callable[[], AbstractContextManager[object]],
        *,
        min_interval_s: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._status = status
        self._unhidden = unhidden
        self._min_interval_s = min_interval_s
        self._clock = clock
        self._last_drawn = -math.inf

    def point_started(
        self, depth: int, concurrency: int, total: int
    ) -> Callable[[RequestRecord], None]:
        progress = PointProgress(
            depth, concurrency, total, on_change=self._redraw, clock=self._clock
        )
        self._draw(progress)
        return progress.request_done

    def point_finished(self) -> None:
        with self._unhidden():
            self._status.clear()

    def _redraw(self, progress: PointProgress) -> None:
        if progress.done < progress.total and (
            self._clock() - self._last_drawn < self._min_interval_s
        ):
            return
        self._draw(progress)

    def _draw(self, progress: PointProgress) -> None:
        self._last_drawn = self._clock()
        with self._unhidden():
            self._status.show(progress.line(self._last_drawn))


class PointLines:
    """A suite observer for output that is not a terminal (a CI log, a pipe): one line per
    measured sample once it is done, ``steps=3 C=4: 320/320 requests, 5,047 tok/s, 4 s``."""

    def __init__(
        self, say: Callable[[str], None], *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._say = say
        self._clock = clock
        self._current: PointProgress | None = None

    def point_started(
        self, depth: int, concurrency: int, total: int
    ) -> Callable[[RequestRecord], None]:
        self._current = PointProgress(depth, concurrency, total, clock=self._clock)
        return self._current.request_done

    def point_finished(self) -> None:
        if self._current is not None:
            self._say(self._current.line())
            self._current = None
