"""Write docs/reference/options.md from the options table (``config/table.py``: ``OPTIONS``).

    python tools/gen_options_reference.py          # rewrite the page
    python tools/gen_options_reference.py --check  # exit 1 when the page is stale

The page is never edited by hand: each option's flag, default, ini key, ``specperf`` name and
help come from its ``OptionSpec`` row; the longer notes below add what the one-line help
leaves out (a note for a flag that is not in the table fails the check).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_specperf.config.table import OPTIONS, OptionSpec  # noqa: E402
from tools.generated_file import write_or_check  # noqa: E402

PAGE = REPO / "docs" / "reference" / "options.md"

NOTES: dict[str, str] = {
    "--spec-steps": (
        "Speculation depth(s) to boot and measure, 0..16: `3` or `0,1,2,3`; each depth boots "
        "one server, once; `0` is the no-speculation control ([the "
        "control](../explanation/speculation.md))."
    ),
    "--specperf-backend": (
        "`sglang` boots `python -m sglang.launch_server`; `sim` boots the embedded simulator "
        "with the same flags."
    ),
    "--specperf-url": (
        "Measure a running server; nothing is booted; the depth is read from its /server_info."
    ),
    "--specperf-concurrency": (
        "Concurrency levels of the closed-loop sweep (N = 4 requests at C=1, else 2C)."
    ),
    "--specperf-profile": ("Deployment profile: a name or a path to a `.toml` file."),
    "--specperf-profile-dir": (
        "Extra directories of profile files: a comma list (`a,b`), repeated, or both."
    ),
    "--specperf-run-profile": (
        "How much to measure: `smoke` (depth 3, C=1,4, 256 tokens, 1 sample), `pr` (the "
        "project's depths, C=1,4,16, 3 samples per point), `nightly` (depths 0,1,2,3, "
        "C=1,4,16,32,64, 5 samples per point); a profile's `repeats` is `--specperf-repeats`;"
        " sets only what no option (command line or ini) sets; shipped in "
        "`pytest_specperf/config/run_profiles.toml`; why these: "
        "[repeats](../explanation/repeats.md)."
    ),
    "--specperf-run-profiles": (
        "A TOML file of the same shape (relative to the rootdir) whose tables change fields "
        "of the shipped run profiles or add new ones."
    ),
    "--specperf-server-arg": (
        "Extra server flag(s), appended last, repeatable: "
        "`--specperf-server-arg=--sim-slowdown=0.2`."
    ),
    "--specperf-baselines": ("Baselines directory."),
    "--specperf-update-baselines": (
        "After a run whose tests all passed, write the baseline of every depth whose points "
        "all succeeded; floors are not gated in that run: the gated tests read RECORDED, with"
        " what they recorded."
    ),
    "--specperf-out": (
        "Artifacts: `results.json` (written after every point), `report.md`, plots, "
        "github-action-benchmark files, `server-steps<N>.log` ([what a run "
        "leaves](results.md))."
    ),
    "--specperf-launch-timeout": (
        "Seconds to wait for `/health_generate` (SGLang's own default); a profile may set its own."
    ),
    "--specperf-sim-speedup": (
        "Simulator only: every simulated time divided by this; part of the sim's hardware key"
        " (`sim-x5`)."
    ),
    "--specperf-hardware": (
        "Not set: from nvidia-smi. Hardware key for baselines, e.g. `4x-rtx-pro-6000-blackwell`."
    ),
    "--specperf-max-new-tokens": ("Output tokens per request."),
    "--specperf-workload": (
        "What the requests are: `greedy-synthetic`, `realistic` or `long-context` "
        "([workloads](workloads.md)); recorded in results and in the baseline key, each "
        "workload has its own baseline file."
    ),
    "--specperf-temperature": (
        "Not set: the workload's. Sampling temperature; overrides the workload's (0 for "
        "greedy-synthetic, 0.7 otherwise)."
    ),
    "--specperf-requests": ("Not set: 4 / 2C. Requests per point."),
    "--specperf-endpoint": (
        "`generate` (SGLang native, per-chunk token counts) or `completions` (OpenAI)."
    ),
    "--specperf-request-timeout": ("Seconds one request may take."),
    "--specperf-stall-timeout": (
        "Seconds a stream may go without data before it counts as stalled."
    ),
    "--specperf-client-procs": (
        "Not set: by load. Client processes that stream each point; by default one per 64 "
        "streams, at most half the cores (1 on a 2-core machine); the points' records are "
        "merged exactly ([the load generator](../explanation/load-generator.md))."
    ),
    "--specperf-min-success": ("Fraction of a point's requests that must succeed."),
    "--specperf-tolerance": (
        "Tolerance written into newly recorded baselines: the fixed rule's floor, and the "
        "least drop that fails while boot-to-boot noise is unknown."
    ),
    "--specperf-slo": (
        "Service-level objectives, `ttft_p99_ms=...,itl_p99_ms=...,e2e_p99_ms=...` (any "
        "subset; optional `attainment=0.99`): goodput per point, the largest concurrency "
        "meeting them per depth, and their floors ([goodput](metrics.md))."
    ),
    "--specperf-refine": (
        "Where the recommended depth changes between two measured concurrencies, measure "
        "their geometric midpoint at every depth after the sweep; keeps every depth's server "
        "up until then (not under xdist)."
    ),
    "--specperf-inject-slowdown": (
        "Seconds of sleep per forward pass set through the server's `/slow_down` before "
        "measuring: a deliberate regression that proves the gate."
    ),
    "--specperf-repeats": (
        "Samples per point: every point is measured R times, interleaved across concurrency "
        "(1,4,16,1,4,16,...); the first point asked for measures the whole sweep; figures are"
        " medians with a 95% interval, every sample is in `results.json` (`samples`)."
    ),
    "--specperf-min-point-seconds": (
        "A point's closed loop keeps sending until its N requests were sent **and** this many"
        " seconds passed (warm-up excluded), ending on a whole round of C; `0` turns it off "
        "([repeats](../explanation/repeats.md))."
    ),
    "--specperf-calibrate": (
        "Record baselines from an A/A run (implies `--specperf-update-baselines`): every "
        "point `--specperf-repeats` times, the measured noise written into the baseline."
    ),
    "--specperf-calibrate-boots": (
        "With `--specperf-calibrate`: boot the server K times per depth (restarting it "
        "between rounds), so the baseline also knows the noise between boots."
    ),
    "--specperf-alpha": (
        "False-positive rate of one depth's verdict (every point and metric together), given "
        "a calibrated baseline."
    ),
    "--specperf-min-effect": (
        "Smallest throughput change the gate is for: caught with 95% probability when the "
        "noise allows; smaller ones never fail."
    ),
    "--specperf-confirm": (
        "Where a borderline verdict is re-measured before it stands: `fresh-boot` (restart "
        "the server; the same boot with `--specperf-url`), `same-boot`, `off`."
    ),
    "--specperf-gpus-per-server": (
        "Give each server its own K GPUs through `CUDA_VISIBLE_DEVICES`: xdist worker gwN "
        "gets GPUs [N*K, (N+1)*K); required for `-n` on the sglang backend; a usage error "
        "when workers x K exceeds the GPUs present."
    ),
    "--specperf-gpus": (
        "Not set: `$SPECPERF_GPUS`, else `$CUDA_VISIBLE_DEVICES`, else `nvidia-smi -L`. The "
        "GPUs there are to hand out: a count (`8`) or ids (`0,1,5`)."
    ),
    "--specperf-self-test": (
        "Last check of each depth: set a known `/slow_down`, check the gate catches it, reset"
        " it, report the result (`test_gate_catches_injected_slowdown`)."
    ),
    "--specperf-lossless-min-prefix": (
        "Losslessness rule: the share of each greedy output that must match the other depth's"
        " before the first differing token; `1` = identical outputs."
    ),
    "--specperf-allow-baseline-downgrade": (
        "Let a recording replace a baseline with one of fewer boots or samples, another "
        "workload or another sweep, losing what it held (otherwise refused in one line naming "
        "what would be lost). Typed on purpose: no command the suite prints carries it "
        "([baseline safety](../how-to/baseline-safety.md))."
    ),
    "--specperf-allow-no-baseline": (
        "Off, but on in the `smoke` run profile. An exploratory run: a depth whose throughput "
        "nothing judged (no baseline, not comparable, every point skipped) does not fail the "
        "run; without it such a run fails with one line and the command that records the "
        "baseline."
    ),
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("%%", "%")


def _default(spec: OptionSpec) -> str:
    if spec.kind == "flag":
        return "off"
    return f"`{spec.default}`" if spec.default is not None else "not set"


def _where(spec: OptionSpec) -> str:
    places = ["pytest"]
    if spec.env:
        places.append(f"env `{spec.env}`")
    if spec.ini:
        places.append(f"ini `{spec.ini_name}`")
    for command in spec.commands:
        name = spec.short or spec.flag
        places.append(f"`specperf {command} {name}`")
    return ", ".join(places)


def _anchor(flag: str) -> str:
    """The id GitHub gives the heading ``## --flag``: lower case, hyphens kept."""
    return flag.lower()


def render(specs: Iterable[OptionSpec] = OPTIONS) -> str:
    """The whole page, from the table."""
    specs = tuple(specs)
    lines = [
        "# Options",
        "",
        "<!-- Generated by tools/gen_options_reference.py from pytest_specperf/config/table.py;",
        "     do not edit: change the OptionSpec row (or the script's NOTES) and rerun it. -->",
        "",
        "Every option is in the `specperf` group of `pytest --help`. Value options can also be",
        "set in `[tool.pytest.ini_options]` under their ini key (e.g.",
        '`specperf_profile = "my-deployment"`); a command-line value wins over the ini file.',
        "Some are also flags of the `specperf` command (`specperf bench`, `specperf launch-cmd`),",
        'under the name shown. An option with an environment variable (its "Where") reads',
        "it when the command line gives none; it wins over the ini file.",
        "An API key is read from `SPECPERF_API_KEY`: passed to the",
        "server as `--api-key`, sent as a Bearer token, and shown as `***` in every command",
        "line, log and report.",
        "",
        "| option | default | what it does |",
        "| --- | --- | --- |",
    ]
    for spec in specs:
        link = f"[`{spec.flag}`](#{_anchor(spec.flag)})"
        lines.append(f"| {link} | {_default(spec)} | {_cell(spec.help)} |")
    for spec in specs:
        lines += ["", f"## {spec.flag}", "", f"Default: {_default(spec)}. Where: {_where(spec)}."]
        note = NOTES.get(spec.flag) or _cell(spec.help[0].upper() + spec.help[1:]) + "."
        lines += ["", note]
    return "\n".join(lines) + "\n"


def stale_notes(specs: Iterable[OptionSpec] = OPTIONS) -> list[str]:
    """Notes written for a flag the table does not have (renamed or removed options)."""
    flags = {spec.flag for spec in specs}
    return sorted(flag for flag in NOTES if flag not in flags)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    args = parser.parse_args(argv)
    if stale_notes():
        print(f"notes for options that do not exist: {', '.join(stale_notes())}", file=sys.stderr)
        return 1
    return write_or_check(
        PAGE, render(), check=args.check, generator="tools/gen_options_reference.py"
    )


if __name__ == "__main__":
    sys.exit(main())
