"""Losslessness: speculative decoding must not change greedy outputs.

A fixed prompt set is sent at temperature 0 to every depth's server, one request at a time,
and each depth's output ids are compared with every other depth's (the control, depth 0,
included). The suite boots one server per depth, possibly in several xdist workers, so each
depth stores its outputs in results.json and compares them, under the results lock, with the
outputs stored before it: every pair is compared exactly once, by the later of the two.

The rule: a prompt passes when the common prefix of the two outputs covers at least
``min_prefix`` of the reference output (1.0, the default, means identical). Real kernels can
differ numerically between the verify and the decode path, so a deployment may state a lower
minimum; the comparison always reports the match rate and each prompt's first divergence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from pytest_specperf.errors import SpecperfError
from pytest_specperf.results.schema import DepthRun, OutputComparison, RunResults

GREEDY_MAX_NEW_TOKENS = 128
EXACT = 1.0
# Written for this project: varied enough that a corrupted draft path shows in some output.
GREEDY_PROMPTS: dict[str, str] = {
    "python-retry": "Write a Python function that retries an HTTP call three times with "
    "exponential backoff and explain each line.",
    "sql-window": "Explain how a SQL window function computes a running total per customer, "
    "with an example query.",
    "agent-plan": "You are a coding agent. List the shell commands you would run to find why "
    "a unit test fails only on the CI machine.",
    "chat-travel": "Suggest a two day walking route through an old harbour town for someone "
    "who likes bookshops and bakeries.",
    "json-config": "Produce a JSON object describing a web service with three endpoints, "
    "their methods and rate limits.",
    "math-proof": "Prove that the sum of the first n odd numbers equals n squared, step by step.",
}


class GreedyOutputError(SpecperfError):
    """The server did not return the output ids of a greedy request."""


def greedy_body(prompt: str, max_new_tokens: int) -> dict[str, Any]:
    """A non-streaming /generate request whose answer carries its output ids."""
    return {
        "text": prompt,
        "sampling_params": {
            "temperature": 0.0,
            "max_new_tokens": max_new_tokens,
            "ignore_eos": True,
        },
        "stream": False,
    }


def fetch_greedy_outputs(
    base_url: str,
    *,
    api_key: str | None = None,
    max_new_tokens: int = GREEDY_MAX_NEW_TOKENS,
    prompts: Mapping[str, str] = GREEDY_PROMPTS,
    timeout_s: float = 600.0,
) -> dict[str, list[int]]:
    """Each prompt's greedy output ids, one request at a time (the batch never varies)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    outputs: dict[str, list[int]] = {}
    with httpx.Client(
        base_url=base_url, headers=headers, timeout=timeout_s, trust_env=False
    ) as client:
        for name, prompt in prompts.items():
            try:
                response = client.post("/generate", json=greedy_body(prompt, max_new_tokens))
                response.raise_for_status()
                ids = response.json().get("output_ids")
            except (httpx.HTTPError, ValueError) as exc:
                raise GreedyOutputError(
                    f"greedy request {name!r} to {base_url}/generate failed: {exc}"
                ) from exc
            if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
                raise GreedyOutputError(
                    f"greedy request {name!r}: {base_url}/generate returned no output_ids list"
                )
            outputs[name] = ids
    return outputs


def common_prefix(first: Sequence[int], second: Sequence[int]) -> int:
    length = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        length += 1
    return length


def compare_outputs(
    depth: int,
    outputs: Mapping[str, Sequence[int]],
    reference_depth: int,
    reference: Mapping[str, Sequence[int]],
) -> OutputComparison:
    """``outputs`` of ``depth`` against ``reference``, over the prompts both answered."""
    names = [name for name in reference if name in outputs]
    comparison = OutputComparison(
        depth=depth, reference_depth=reference_depth, prompts=len(names), identical=0
    )
    for name in names:
        mine, theirs = outputs[name], reference[name]
        prefix = common_prefix(mine, theirs)
        comparison.prefix_match[name] = prefix / len(theirs) if theirs else 1.0
        if list(mine) == list(theirs):
            comparison.identical += 1
        else:
            comparison.first_divergence[name] = prefix
    return comparison


def record_and_compare(
    results: RunResults, run: DepthRun, outputs: dict[str, list[int]]
) -> list[OutputComparison]:
    """Store ``run``'s outputs; compare them with every depth that stored outputs before.

    Call it inside ``ResultsStore.update`` so that storing and reading are one locked step.
    """
    run.greedy_outputs = outputs
    found: list[OutputComparison] = []
    for other in sorted(results.runs, key=lambda r: r.depth):
        if other.depth == run.depth or not other.greedy_outputs:
            continue
        pair = {run.depth, other.depth}
        if any({c.depth, c.reference_depth} == pair for c in results.lossless):
            continue
        # The lower depth (the control when present) is the reference.
        low, high = sorted((other, run), key=lambda r: r.depth)
        comparison = compare_outputs(high.depth, high.greedy_outputs, low.depth, low.greedy_outputs)
        results.lossless.append(comparison)
        found.append(comparison)
    return found


def violations(comparisons: Sequence[OutputComparison], min_prefix: float = EXACT) -> list[str]:
    """One line per prompt that breaks the rule, naming the depths and the first difference."""
    lines: list[str] = []
    for item in comparisons:
        for name, index in item.first_divergence.items():
            prefix = item.prefix_match.get(name, 0.0)
            if min_prefix >= EXACT or prefix < min_prefix:
                rule = (
                    "identical outputs"
                    if min_prefix >= EXACT
                    else f"a common prefix of >= {min_prefix:.0%}"
                )
                lines.append(
                    f"steps={item.depth} vs steps={item.reference_depth}: prompt {name!r} "
                    f"differs from token {index} on (common prefix {prefix:.0%} of the "
                    f"reference; required: {rule}); {item.identical}/{item.prompts} prompts "
                    "identical"
                )
    return lines
