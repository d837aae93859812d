"""What the simulator studies share: the sweep's command-line knobs, and a summary printed as
it grows and written to a file at the end."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_sweep_options(parser: argparse.ArgumentParser, *, tokens: int) -> None:
    """--speedup, --concurrency, --tokens and --repeats of a study's simulated sweep."""
    parser.add_argument("--speedup", type=float, default=10.0, help="the simulator's speedup")
    parser.add_argument("--concurrency", default="1,4", help="the sweep's concurrency levels")
    parser.add_argument("--tokens", type=int, default=tokens, help="max new tokens per request")
    parser.add_argument("--repeats", type=int, default=3, help="samples per point")


class Summary:
    """A study's summary: each line printed as it comes, all of them written to ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: list[str] = []

    def add(self, *lines: str) -> None:
        for line in lines:
            print(line, flush=True)
        self.lines.extend(lines)

    def write(self) -> None:
        self.path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")
