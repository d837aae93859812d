"""Writes pytest_specperf/measure/prompts/realistic.jsonl: the `realistic` workload's prompts.

Every prompt was written for this project. The long ones embed a context (a module, a service
log, a conversation) generated here from fixed templates and a fixed seed, so the file is the
same every time this script runs. Run it after editing a prompt:

    python tools/make_realistic_prompts.py

The order interleaves kinds and lengths: a point of a few requests still sends a mix.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "pytest_specperf/measure/prompts/realistic.jsonl"

CODING = [
    "Write a Python function that merges overlapping time intervals given as (start, end) "
    "tuples and returns them sorted.",
    "Explain what this shell line does and whether it is safe to run in CI: "
    "find . -name '*.pyc' -print0 | xargs -0 rm -f",
    "Refactor this function so it no longer mutates its argument, and add type hints:\n\n"
    "def normalize(rows):\n    for r in rows:\n        r['name'] = r['name'].strip().lower()\n"
    "        if not r.get('tags'):\n            r['tags'] = []\n    return rows\n",
    "I have a Rust struct holding a Vec<String> and I want to return an iterator over "
    "&str from a method without allocating. Show the signature and body, and explain the "
    "lifetime elision that makes it compile.",
    "Write a SQL query that returns, for every customer, their three most recent orders "
    "with the order total, using a window function. Tables: customers(id, name), "
    "orders(id, customer_id, created_at, total_cents).",
    "Why does this asyncio code hang on the second call, and how do I fix it?\n\n"
    "import asyncio\nlock = asyncio.Lock()\n\nasync def fetch(n):\n    async with lock:\n"
    "        if n > 0:\n            return await fetch(n - 1)\n        return 0\n\n"
    "asyncio.run(fetch(2))\n",
    "Write a small TypeScript React hook, useDebouncedValue(value, delayMs), with a test "
    "written for vitest and testing-library.",
    "Review this Go handler for bugs and races; list each problem with the line and a fix.\n\n"
    "var hits = map[string]int{}\n\nfunc handler(w http.ResponseWriter, r *http.Request) {\n"
    '    key := r.URL.Query().Get("k")\n    hits[key]++\n    go func() {\n'
    '        log.Printf("%s=%d", key, hits[key])\n    }()\n'
    '    fmt.Fprintf(w, "%d", hits[key])\n}\n',
    "Convert this bash loop into a Makefile rule with proper dependencies so that only "
    'changed markdown files are rebuilt: for f in docs/*.md; do pandoc "$f" -o '
    '"build/$(basename "$f" .md).html"; done',
    "Write a pytest fixture that starts a temporary HTTP server on a free port serving a "
    "directory, yields its base URL, and always shuts it down, even when the test fails.",
    "Implement an LRU cache class in Python with get and put in O(1), without using "
    "functools or OrderedDict, and explain the invariants of your linked list.",
    "My Dockerfile rebuilds all Python dependencies whenever any source file changes. "
    "Rewrite it so the dependency layer is cached:\n\nFROM python:3.12-slim\nWORKDIR /app\n"
    'COPY . .\nRUN pip install -r requirements.txt\nCMD ["python", "-m", "service"]\n',
    "Write a regular expression that matches ISO 8601 dates with an optional time and "
    "timezone offset, then list five strings it must accept and five it must reject.",
]

AGENTIC = [
    "You are a coding agent with the tools read_file(path), write_file(path, text), "
    "run(cmd). The task: the test suite fails with ImportError: cannot import name "
    "'parse_config' from 'app.settings'. Plan your first three tool calls and say what "
    "you expect each to show.",
    "You are an agent that can call search_issues(query) and get_issue(number). A user "
    "reports that uploads over 2 GB fail with a 413 after the last release. Decide which "
    "searches to run, in what order, and what evidence would confirm a regression.",
    "Tool result from run('pytest -x tests/test_billing.py'):\n\nFAILED "
    "tests/test_billing.py::test_proration - AssertionError: assert 1666 == 1667\n"
    "1 failed, 41 passed in 3.20s\n\nYou may call read_file and write_file next. What do "
    "you look at first, and what is the most likely cause of an off-by-one cent?",
    "You are operating a deployment assistant. Available actions: scale(service, "
    "replicas), rollback(service, version), page(team). Error rate on checkout went from "
    "0.1% to 4% five minutes after version 2.14.0 rolled out. Choose an action, justify "
    "it in two sentences, and state what you will check afterwards.",
    "Act as a repository maintenance agent. You may call list_dir, read_file and "
    "open_pull_request. Goal: update every GitHub Actions workflow that still uses "
    "actions/checkout@v3 to v4. Write the sequence of calls and the pull request "
    "description.",
    "You are an agent with a python(code) tool. A CSV at data/sales.csv has columns "
    "date, region, units, price. Produce the code you would run to find the region whose "
    "revenue grew the most between the first and last month, and describe how you would "
    "check the answer.",
    "Previous step output: grep -rn 'TODO(security)' src/ returned 14 matches across "
    "auth/, payments/ and admin/. Next, decide which three to look at first and what "
    "tool calls you will make; answer as a numbered plan.",
    "You are a triage agent. Classify the following user message into one of: bug, "
    "feature request, question, spam; extract the product area; and draft a one line "
    "reply. Message: 'since yesterday the export button on the reports page just spins "
    "forever for any range longer than a week, shorter ranges are fine'.",
    "You can call http_get(url) and summarize(text). Draft the calls needed to compare "
    "the changelogs of two releases of a library you are upgrading, and the checklist you "
    "will fill before approving the upgrade.",
    "You are an agent editing a monorepo. The build tool reports: error: package "
    "'ui-kit' depends on 'tokens@^3' but workspace has 'tokens@2.8.1'. List the files you "
    "will read, the change you expect to make, and the commands that verify it.",
]

CHAT = [
    "What is the difference between latency and throughput, in one paragraph a product "
    "manager would follow?",
    "Give me three names for a small bakery that specializes in sourdough and rye.",
    "Summarize the trade-offs of working four ten-hour days instead of five eight-hour "
    "days, for a team that supports customers in two time zones.",
    "Explain to a twelve year old why the sky looks blue during the day and red at sunset.",
    "I have a 25 minute train ride every morning. Suggest a plan to learn basic Spanish "
    "in three months using only that time.",
    "Write a polite email declining a meeting invitation because of a scheduling "
    "conflict, and propose two alternative times next week.",
    "What should I check before buying a used bicycle from a stranger?",
    "Compare renting and buying a home for someone who expects to move cities within "
    "four years; list the costs people usually forget.",
    "Write a short, upbeat toast for a colleague who is retiring after 30 years in the "
    "same library.",
    "How do I politely tell a friend that I cannot lend them money again?",
    "Translate into plain English: 'The aforementioned party shall indemnify and hold "
    "harmless the counterparty against all claims arising hereunder.'",
    "Plan a three day itinerary for a first visit to a mid-sized European city with a "
    "focus on walking, local food and one museum a day.",
    "Why do some people find it easier to wake up early in summer than in winter?",
    "Hi!",
]

_WORDS = [
    "account",
    "order",
    "invoice",
    "cache",
    "session",
    "token",
    "window",
    "batch",
    "queue",
    "worker",
    "shard",
    "replica",
    "ledger",
    "report",
    "export",
    "upload",
    "profile",
    "tenant",
    "region",
    "metric",
    "budget",
    "schedule",
]
_VERBS = ["load", "save", "merge", "split", "rank", "route", "retry", "flush", "render", "price"]


def _module(rng: random.Random, functions: int) -> str:
    """A plausible Python module: classes and functions with docstrings and bodies."""
    parts = ['"""Service helpers (generated context for the realistic workload)."""', ""]
    parts.append("from __future__ import annotations\n\nimport dataclasses\nimport logging\n")
    parts.append("log = logging.getLogger(__name__)\n")
    for index in range(functions):
        noun = rng.choice(_WORDS)
        other = rng.choice(_WORDS)
        verb = rng.choice(_VERBS)
        if index % 5 == 0:
            parts.append(
                f"@dataclasses.dataclass\nclass {noun.title()}{other.title()}{index}:\n"
                f'    """A {noun} as the {other} service stores it."""\n\n'
                f"    id: int\n    {noun}_name: str\n    {other}_count: int = 0\n"
            )
        parts.append(
            f"def {verb}_{noun}_{index}(items: list[dict[str, int]], limit: int = "
            f"{rng.randint(2, 90)}) -> list[dict[str, int]]:\n"
            f'    """{verb.title()} each {noun} and keep at most `limit` by {other}."""\n'
            f"    kept = [item for item in items if item.get('{other}', 0) >= "
            f"{rng.randint(0, 9)}]\n"
            f"    kept.sort(key=lambda item: item.get('{noun}', 0), reverse="
            f"{rng.choice(['True', 'False'])})\n"
            f"    if len(kept) > limit:\n        log.info('{verb} {noun}: dropped %d', "
            f"len(kept) - limit)\n    return kept[:limit]\n"
        )
    return "\n".join(parts)


def _log(rng: random.Random, lines: int) -> str:
    levels = ["INFO"] * 8 + ["WARN", "ERROR"]
    out = []
    for index in range(lines):
        level = rng.choice(levels)
        noun = rng.choice(_WORDS)
        ms = rng.randint(2, 900) if level != "ERROR" else rng.randint(900, 30000)
        out.append(
            f"2026-11-{10 + index // 600:02d}T{(index // 60) % 24:02d}:{index % 60:02d}:"
            f"{rng.randint(0, 59):02d}Z {level} api-{rng.randint(1, 6)} "
            f"{rng.choice(_VERBS)}_{noun} tenant={rng.randint(100, 140)} took={ms}ms"
            + (
                f" error=upstream {rng.choice(['timeout', 'reset', '503'])}"
                if level == "ERROR"
                else ""
            )
        )
    return "\n".join(out)


def _conversation(rng: random.Random, turns: int) -> str:
    topics = [
        "the nightly job finished late again",
        "the new dashboard shows different totals than the export",
        "a customer asked for their data to be deleted",
        "the staging database ran out of disk",
        "we want to move the cron jobs to the queue",
        "latency doubled after the cache change",
    ]
    out = []
    for index in range(turns):
        who = "user" if index % 2 == 0 else "assistant"
        topic = rng.choice(topics)
        if who == "user":
            out.append(f"user: one more thing, {topic}. What would you check first?")
        else:
            out.append(
                f"assistant: For that I would start with the {rng.choice(_WORDS)} "
                f"{rng.choice(_VERBS)} step, compare it with last week's run, and look at "
                f"the {rng.choice(_WORDS)} metrics around the time it started."
            )
    return "\n".join(out)


def long_prompts() -> list[dict[str, str]]:
    rng = random.Random(20261201)
    return [
        {
            "kind": "coding",
            "text": "Here is a module from our service:\n\n"
            + _module(rng, 36)
            + "\n\nFind the functions whose sort direction looks inconsistent with their "
            "docstring, and propose one shared helper that removes the duplication.",
        },
        {
            "kind": "agentic",
            "text": "You are an on-call agent. Tool result from fetch_logs(service='api', "
            "last='2h'):\n\n"
            + _log(rng, 220)
            + "\n\nWhich tenant and operation explain most errors? Say which tool you "
            "would call next and why.",
        },
        {
            "kind": "chat",
            "text": "This is our team chat from the last few days:\n\n"
            + _conversation(rng, 60)
            + "\n\nWrite a short summary for someone who was away, with open questions.",
        },
        {
            "kind": "coding",
            "text": "Review this code for a pull request and list the three changes you "
            "would ask for, most important first:\n\n" + _module(rng, 90),
        },
        {
            "kind": "agentic",
            "text": "You are an agent with read_file, run and write_file. The previous "
            "tool call returned this log of a failed batch run:\n\n"
            + _log(rng, 480)
            + "\n\nPlan the next five tool calls to find the root cause.",
        },
    ]


def build() -> list[dict[str, str]]:
    pools = {
        "coding": [{"kind": "coding", "text": t} for t in CODING],
        "agentic": [{"kind": "agentic", "text": t} for t in AGENTIC],
        "chat": [{"kind": "chat", "text": t} for t in CHAT],
    }
    longs = long_prompts()
    ordered: list[dict[str, str]] = []
    # Interleave kinds; a long prompt every ninth place.
    while any(pools.values()) or longs:
        for kind in ("agentic", "coding", "chat"):
            if pools[kind]:
                ordered.append(pools[kind].pop(0))
            if len(ordered) % 9 == 4 and longs:
                ordered.append(longs.pop(0))
        if not any(pools.values()):
            ordered.extend(longs)
            longs = []
    return [{"id": f"r{index:02d}", **item} for index, item in enumerate(ordered)]


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as handle:
        for item in build():
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
