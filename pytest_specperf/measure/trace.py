"""Request traces: read a trace file, and the prompts and send schedule it describes.

Formats (``--specperf-workload=trace:PATH``):

- the Mooncake JSONL (FAST'25 release): one JSON object a line with ``timestamp`` (ms since
  the trace's start), ``input_length``, ``output_length`` and ``hash_ids`` (one id per
  512-token block of the prompt; requests that share a leading run of ids share that
  prefix). Read as SGLang's ``MooncakeDataset.load`` reads it: every non-blank line in file
  order; the replay sorts by timestamp and sends each request at ``(timestamp - first) / 1000``
  seconds, divided by ``--specperf-trace-speed`` (SGLang's ``--mooncake-slowdown-factor`` is
  its inverse). ``tests/contract/test_trace_contract.py`` holds this reader to SGLang's.
- a plain JSONL of the same fields (``hash_ids`` optional), or a CSV with a header naming
  them (``hash_ids`` space-separated).

Prompts are made to the trace's lengths without a tokenizer, as every workload of the suite
(a word is a token on the simulator): each hash id is a block of 512 words that depends on
the id alone, so requests sharing ids share their prefix word for word and a radix cache
reuses it; the last block is cut to ``input_length``; a prompt longer than its blocks (or
with no ids) is filled with words of its own. SGLang's bench_serving does differently: it
ignores ``input_length`` and writes 128 words of "hi" per hash id; this reader keeps the
trace's lengths, which is what the trace measured.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import random
from pathlib import Path
from typing import Any

import msgspec

from pytest_specperf.errors import UsageError

# Tokens per hash id in the Mooncake traces (their README: "block size 512").
MOONCAKE_BLOCK_TOKENS = 512
FIELDS = ("timestamp", "input_length", "output_length")
# The synthetic trace that ships with the package (tools/make_synthetic_trace.py writes it).
SHIPPED_TRACE = "synthetic-mooncake.jsonl"
# The most tokens (prompt and output) one request of a trace may ask for: each prompt is
# built as text in memory and sent as one body, so a line of 50,000,000 is refused when the
# trace is read (before any prompt is built or server booted), not answered by an HTTP 413
# after the boot. Four times the longest context of the shipped profiles (262,144).
MAX_REQUEST_TOKENS = 1_048_576


class TraceRequest(msgspec.Struct, frozen=True):
    """One line of a trace: when (ms), how long in and out, and its prefix blocks."""

    timestamp: float
    input_length: int
    output_length: int
    hash_ids: tuple[int, ...] = ()


class Trace(msgspec.Struct, frozen=True):
    """A trace as read: its requests in file order, and where it came from."""

    name: str
    requests: tuple[TraceRequest, ...]
    digest: str
    # The file's line of each request (in file order), for messages that name it.
    lines: tuple[int, ...] = ()

    def longest_request(self) -> tuple[int, int]:
        """The tokens (input and output) of the trace's longest request and its line (the
        first such line)."""
        lengths = [r.input_length + r.output_length for r in self.requests]
        index = lengths.index(max(lengths))
        line = self.lines[index] if index < len(self.lines) else index + 1
        return lengths[index], line

    def replay_order(self) -> list[int]:
        """Indices in send order: by timestamp, file order among equals (a stable sort, as
        SGLang's ``list.sort``)."""
        return sorted(range(len(self.requests)), key=lambda i: self.requests[i].timestamp)

    def offsets_s(self, speed: float = 1.0) -> list[float]:
        """Seconds after the first request at which each request (in replay order) is sent."""
        order = self.replay_order()
        if not order:
            return []
        first = self.requests[order[0]].timestamp
        return [(self.requests[i].timestamp - first) / 1000.0 / speed for i in order]

    @property
    def duration_s(self) -> float:
        offsets = self.offsets_s()
        return offsets[-1] if offsets else 0.0


def shipped_trace_path() -> Path:
    """The synthetic Mooncake-format trace shipped in ``measure/traces/``."""
    from importlib import resources

    return Path(str(resources.files(__package__).joinpath("traces", SHIPPED_TRACE)))


def resolve_trace_path(raw: str, root: Path | None = None) -> Path:
    """``raw`` as a path (relative to ``root``); ``synthetic`` names the shipped trace."""
    if raw in ("synthetic", SHIPPED_TRACE):
        return shipped_trace_path()
    path = Path(raw).expanduser()
    if not path.is_absolute() and root is not None:
        path = root / path
    return path


@functools.cache
def read_trace(path: Path) -> Trace:
    """The trace at ``path`` (CSV by its ``.csv`` suffix, else JSONL); UsageError, one line,
    naming the file and line, for anything it cannot use."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"trace {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"trace {path}: not UTF-8 text") from None
    rows = _csv_rows(path, text) if path.suffix.lower() == ".csv" else _jsonl_rows(path, text)
    requests = tuple(_request(path, number, row) for number, row in rows)
    if not requests:
        raise UsageError(f"trace {path}: no requests in it")
    return Trace(
        name=path.name,
        requests=requests,
        digest=hashlib.sha256(raw).hexdigest()[:16],
        lines=tuple(number for number, _ in rows),
    )


def _jsonl_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise UsageError(f"trace {path} line {number}: not JSON ({exc})") from None
        if not isinstance(row, dict):
            raise UsageError(f"trace {path} line {number}: not a JSON object")
        rows.append((number, row))
    return rows


def _csv_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text))
    missing = [name for name in FIELDS if name not in (reader.fieldnames or ())]
    if missing:
        raise UsageError(f"trace {path}: its CSV header lacks {', '.join(missing)}")
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, row in enumerate(reader, start=2):
        ids = (row.get("hash_ids") or "").replace(";", " ").replace(",", " ").split()
        rows.append((number, {**row, "hash_ids": ids}))
    return rows


def _request(path: Path, number: int, row: dict[str, Any]) -> TraceRequest:
    where = f"line {number}"
    missing = [name for name in FIELDS if name not in row]
    if missing:
        raise UsageError(f"trace {path} {where}: no {', '.join(missing)}")
    try:
        timestamp = float(row["timestamp"])
        input_length = int(row["input_length"])
        output_length = int(row["output_length"])
        hash_ids = tuple(int(item) for item in row.get("hash_ids") or ())
    except (TypeError, ValueError):
        raise UsageError(
            f"trace {path} {where}: timestamp, input_length, output_length and hash_ids "
            "must be numbers"
        ) from None
    if timestamp < 0 or input_length < 1 or output_length < 1:
        raise UsageError(
            f"trace {path} {where}: timestamp must be >= 0, input_length and output_length >= 1"
        )
    if input_length + output_length > MAX_REQUEST_TOKENS:
        raise UsageError(
            f"trace {path} {where}: input_length {input_length:,} + output_length "
            f"{output_length:,} tokens is more than the {MAX_REQUEST_TOKENS:,} the suite sends "
            "in one request"
        )
    return TraceRequest(timestamp, input_length, output_length, hash_ids)


def _block_words(hash_id: int, size: int) -> list[str]:
    """The words of one hash block: a function of the id alone (so equal ids, equal text).

    Words of the form ``w<n>`` are one token each in the smoke models' word-level tokenizer.
    """
    rng = random.Random(f"mooncake-block:{hash_id}")
    return [f"h{hash_id}"] + [f"w{rng.randrange(1, 1000)}" for _ in range(size - 1)]


def trace_prompt(request: TraceRequest, index: int, block: int = MOONCAKE_BLOCK_TOKENS) -> str:
    """The prompt of ``request`` (the ``index``-th of its trace): ``input_length`` words, its
    hash blocks first."""
    words: list[str] = []
    for hash_id in request.hash_ids:
        if len(words) >= request.input_length:
            break
        words.extend(_block_words(hash_id, block))
    words = words[: request.input_length]
    if len(words) < request.input_length:
        rng = random.Random(f"mooncake-own:{index}")
        own = request.input_length - len(words)
        words.extend([f"u{index}"] + [f"w{rng.randrange(1, 1000)}" for _ in range(own - 1)])
    return " ".join(words)


def trace_prompts(trace: Trace) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Prompts and output lengths in replay order (request i of a point sends entry i)."""
    order = trace.replay_order()
    prompts = tuple(trace_prompt(trace.requests[i], i) for i in order)
    outputs = tuple(trace.requests[i].output_length for i in order)
    return prompts, outputs
