"""pytest_specperf.measure.progress: the live status line of the point being measured."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from pytest_specperf.measure.progress import LiveProgress, PointLines, PointProgress, StatusLine
from pytest_specperf.results.schema import RequestRecord


class Clock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def ok(start: float, end: float, tokens: int) -> RequestRecord:
    return RequestRecord(ok=True, start=start, end=end, completion_tokens=tokens)


def test_line_names_the_point_requests_done_rate_and_elapsed() -> None:
    """steps, C, done/total, tok/s over the measured window, seconds since the point began."""
    clock = Clock(100.0)
    progress = PointProgress(3, 16, 32, clock=clock)
    progress.request_done(ok(start=101.0, end=103.0, tokens=1000))
    progress.request_done(ok(start=101.0, end=104.0, tokens=1000))
    assert progress.line(now=105.0) == "steps=3 C=16: 2/32 requests, 500 tok/s, 5 s"


def test_requests_past_the_planned_ones_are_counted_apart_never_over_the_plan() -> None:
    """A point that keeps sending until its minimum time: no "5/4 requests"."""
    progress = PointProgress(3, 1, 4, clock=Clock(0.0))
    for start in range(6):
        progress.request_done(ok(start=float(start), end=start + 1.0, tokens=100))
    assert progress.line(now=6.0) == (
        "steps=3 C=1: 4/4 requests + 2 to fill the minimum time, 100 tok/s, 6 s"
    )


def test_line_before_any_request_finished_has_no_rate() -> None:
    progress = PointProgress(1, 4, 8, clock=Clock(0.0))
    assert progress.line(now=2.0) == "steps=1 C=4: 0/8 requests, - tok/s, 2 s"


def test_failed_requests_are_counted_and_bring_no_tokens() -> None:
    progress = PointProgress(2, 1, 4, clock=Clock(0.0))
    progress.request_done(RequestRecord(ok=False, error="HTTP 500", start=0.0, end=1.0))
    progress.request_done(ok(start=1.0, end=2.0, tokens=300))
    assert progress.line(now=3.0) == "steps=2 C=1: 2/4 requests, 1 failed, 100 tok/s, 3 s"


class Terminal:
    """What was written, and how many columns the line has left."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.written: list[str] = []

    def write(self, text: str) -> None:
        self.written.append(text)


def test_status_is_drawn_beside_the_cursor_and_wiped_without_moving_it() -> None:
    """Save cursor, the text, clear to end of line, restore cursor; clearing wipes to the end."""
    term = Terminal(room=80)
    status = StatusLine(term.write, lambda: term.room)
    status.show("steps=3 C=1: 1/4 requests")
    status.clear()
    assert term.written == ["\x1b7 steps=3 C=1: 1/4 requests\x1b[K\x1b8", "\x1b[K"]


def test_status_is_cut_to_the_room_left_on_the_line() -> None:
    term = Terminal(room=22)
    StatusLine(term.write, lambda: term.room).show("steps=3 C=16: 12/32 requests, 900 tok/s")
    shown = term.written[0].removeprefix("\x1b7 ").removesuffix("\x1b[K\x1b8")
    assert shown == "steps=3 C=16: 12/32~" and len(shown) == 22 - 2


def test_status_is_not_drawn_on_a_line_with_almost_no_room() -> None:
    term = Terminal(room=10)
    status = StatusLine(term.write, lambda: term.room)
    status.show("steps=3 C=1: 1/4 requests")
    status.clear()
    assert term.written == []


@contextlib.contextmanager
def nothing_hidden() -> Iterator[None]:
    yield


def test_live_progress_redraws_at_most_every_interval_but_always_the_last_request() -> None:
    clock = Clock(0.0)
    term = Terminal(room=100)
    live = LiveProgress(
        StatusLine(term.write, lambda: term.room), nothing_hidden, min_interval_s=1.0, clock=clock
    )
    on_done = live.point_started(3, 4, 3)  # drawn at once: 0/3
    clock.now = 0.5
    on_done(ok(0.0, 0.5, 10))  # too soon: not drawn
    clock.now = 0.6
    on_done(ok(0.0, 0.6, 10))  # too soon: not drawn
    clock.now = 0.7
    on_done(ok(0.0, 0.7, 10))  # the last one: drawn
    live.point_finished()
    drawn = [text for text in term.written if "requests" in text]
    assert ["0/3 requests" in drawn[0], "3/3 requests" in drawn[1]] == [True, True]
    assert len(drawn) == 2 and term.written[-1] == "\x1b[K"


def test_point_lines_say_one_line_per_sample_once_it_is_done() -> None:
    """Where no status line can be drawn (a CI log), each sample reads as one line."""
    clock = Clock(10.0)
    said: list[str] = []
    lines = PointLines(said.append, clock=clock)
    done = lines.point_started(3, 4, 2)
    done(ok(start=10.0, end=11.0, tokens=100))
    assert said == []
    done(ok(start=10.0, end=12.0, tokens=100))
    clock.now = 12.0
    lines.point_finished()
    assert said == ["steps=3 C=4: 2/2 requests, 100 tok/s, 2 s"]
