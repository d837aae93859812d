"""Paths of the repository and its recorded real-SGLang samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SGLANG_SAMPLES = REPO / "tests" / "data" / "sglang-0.5.12-h200"


def load_json(name: str) -> Any:
    """A recorded JSON answer of the real server."""
    return json.loads((SGLANG_SAMPLES / name).read_text())


def load_stream(name: str) -> list[str]:
    """The `data:` payloads of a recorded stream."""
    return [
        json.loads(line)["line"][6:] for line in (SGLANG_SAMPLES / name).read_text().splitlines()
    ]


def sse_payloads(body: str) -> list[str]:
    """`data:` payloads of an SSE body, in order."""
    return [block[6:] for block in body.split("\n\n") if block.startswith("data: ")]
