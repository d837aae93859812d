"""What ``specperf bisect`` writes to ``bisect.json``: the outcome, the culprit and every step.

Changes are fractions (-0.08: the later commit 8% slower), each with the A/B's repeated
interval over its pairs; the pooled change's split into acceptance and step time is the A/B's
own record (``AbChange``). gate/bisect.py decides, run/bisect/ measures, results/bisect_report.py
renders; this module only holds the shapes.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from pytest_specperf.results.schema import AbChange

BISECT_SCHEMA_VERSION = 1

StepKind = Literal["range", "candidate", "culprit"]
# range: changed | no-change; candidate: like-good | like-bad | between-larger-before |
# between-larger-after (gate/bisect.py); culprit: confirmed | not-confirmed; any step: undecided
# (its most pairs spent), failed, interrupted, skipped (--budget-s left no room for it).
StepVerdict = Literal[
    "changed",
    "no-change",
    "like-good",
    "like-bad",
    "between-larger-before",
    "between-larger-after",
    "confirmed",
    "not-confirmed",
    "undecided",
    "failed",
    # A candidate whose build or server failed: neither good nor bad, the search goes around it.
    "skipped",
    "interrupted",
]


class BisectCommit(msgspec.Struct, kw_only=True, frozen=True):
    """One commit of the range, as ``git log`` names it."""

    sha: str
    subject: str = ""
    author: str = ""
    date: str = ""

    @property
    def short(self) -> str:
        return self.sha[:12]


class BisectStep(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One step: an A/B of ``commit`` (head) against ``against`` (base)."""

    number: int
    kind: StepKind
    commit: str
    against: str
    # The commit's place in the range: 0 is good, the last is bad.
    index: int
    verdict: StepVerdict
    pairs: int
    # Pairs an earlier, interrupted bisection had measured (not measured again).
    resumed_pairs: int = 0
    change: AbChange | None = None
    interval_level: float | None = None
    server_seconds: float = 0.0
    message: str = ""


class BisectResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """bisect.json."""

    schema_version: int = BISECT_SCHEMA_VERSION
    outcome: Literal["culprit", "no-change", "undecided"]
    # The full hash of the commit named (None: none was).
    culprit: str | None = None
    good: str
    bad: str
    # The bisection's name in the pair log (its range, sides and suite options): a rerun with
    # the same arguments has the same one, and goes on beside its steps' boots in --out.
    name: str = ""
    # The range, good first: every commit a step could have measured.
    commits: list[BisectCommit] = []
    # bad against good (step 1), and the culprit against its parent.
    range_change: AbChange | None = None
    culprit_change: AbChange | None = None
    # The culprit's own change over the range's (log scale ratio), and what it leaves.
    explained_share: float | None = None
    remaining: str | None = None
    # Where the search stopped when no commit was named: the commits still in question.
    narrowed_to: list[str] = []
    steps: list[BisectStep] = []
    server_seconds: float = 0.0
    # The estimate said before the first step, and the budget it was held to.
    estimate: str = ""
    budget_s: float | None = None
    why: str = ""
    interrupted: str | None = None
