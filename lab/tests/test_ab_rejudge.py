"""lab/studies/ab_rejudge.py judges a recorded A/B's pairs with the gate of the checkout."""

from __future__ import annotations

from pathlib import Path

from tests.support.scripts import run_script

STUDY = Path(__file__).resolve().parents[2] / "lab" / "studies" / "ab_rejudge.py"
RUNS = STUDY.parents[2] / "lab" / "runs"


def test_the_h200_seed_class_ab_with_its_stall_left_out_is_decided() -> None:
    """docs/runs/2026-12-05-bounds-slow10-h200: what the gate says now of that run's pairs."""
    tarball = RUNS / "2026-12-05-bounds-slow10-h200" / "proof.tar.xz"
    done = run_script(STUDY, "--tarball", str(tarball))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "pair 1 base C=16: 1,674, 2,786, 2,955" in done.stdout
    verdict = next(line for line in done.stdout.splitlines() if line.startswith("steps=3 A/B"))
    assert verdict.startswith("steps=3 A/B: no regression of 5% or more after 3 pair(s)")
    assert "1 stalled sample(s) left out (pair 1 base C=16: 1,673.8 tok/s" in verdict


def test_the_seed_class_aa_without_a_stall_reads_as_it_did() -> None:
    """docs/runs/2026-12-05-seed-h200's A/A: nothing left out, green after 3 pairs."""
    tarball = RUNS / "2026-12-05-seed-h200" / "proof.tar.xz"
    done = run_script(STUDY, "--tarball", str(tarball))
    assert done.returncode == 0, done.stderr[-2000:]
    verdict = next(line for line in done.stdout.splitlines() if line.startswith("steps=3 A/B"))
    assert "no regression of 5% or more after 3 pair(s): agg +0.2%" in verdict
    assert "left out" not in verdict


def test_the_seed_class_head_slowed_by_3_ms_is_red_at_the_first_look_without_a_prior() -> None:
    """docs/runs/2026-12-05-ladder-slow10-h200: the A/B read a prior; its pairs alone say red,
    and the A/B stopped inside its first pair (its folders hold no point) is said, not judged."""
    tarball = RUNS / "2026-12-05-ladder-slow10-h200" / "proof.tar.xz"
    done = run_script(STUDY, "--tarball", str(tarball))
    assert done.returncode == 0, done.stderr[-2000:]
    verdict = next(line for line in done.stdout.splitlines() if line.startswith("steps=3 A/B"))
    assert verdict.startswith(
        "steps=3 A/B: REGRESSION (moved by step time) after 3 pair(s): agg -12.9% [-23.8%, -0.4%]"
    )
    assert "proof-ladder/ab/slow10/ab/steps3: no point measured on both sides" in done.stdout


def test_the_placements_aa_pairs_give_their_changes_and_spreads() -> None:
    """docs/runs/2026-12-05-placement-aa-h100: the A/A of each CPU placement on one H100, the
    last cut by the device budget inside its third pair (two pairs judged)."""
    tarball = RUNS / "2026-12-05-placement-aa-h100" / "proof.tar.xz"
    done = run_script(STUDY, "--tarball", str(tarball))
    assert done.returncode == 0, done.stderr[-2000:]
    spreads = [line for line in done.stdout.splitlines() if line.startswith("pair changes:")]
    assert spreads == [
        "pair changes: +4.5%, -21.3%, +19.0%; their spread 21.2% (standard deviation, log scale)",
        "pair changes: -1.0%, -5.2%; their spread 3.0% (standard deviation, log scale)",
        "pair changes: +13.3%, +7.0%, +2.6%; their spread 5.0% (standard deviation, log scale)",
    ]
    assert "steps=3 A/B: not decided yet after 2 pair(s)" in done.stdout


def test_the_interleaved_placements_aa_pairs_give_their_changes_and_spreads() -> None:
    """docs/runs/2026-12-05-placement-interleave-h200: rotate and none on one H200, four pairs
    each, neither A/A decided at that spread."""
    tarball = RUNS / "2026-12-05-placement-interleave-h200" / "proof.tar.xz"
    done = run_script(STUDY, "--tarball", str(tarball))
    assert done.returncode == 0, done.stderr[-2000:]
    spreads = [line for line in done.stdout.splitlines() if line.startswith("pair changes:")]
    tail = " (standard deviation, log scale)"
    assert spreads == [
        "pair changes: +14.0%, -6.9%, -20.8%, +5.7%; their spread 16.0%" + tail,
        "pair changes: +16.8%, -6.3%, +5.8%, +3.8%; their spread 9.0%" + tail,
    ]
    verdicts = [line for line in done.stdout.splitlines() if line.startswith("steps=3 A/B")]
    assert [verdict.split(":")[1].strip() for verdict in verdicts] == [
        "undecided at max pairs after 4 pair(s)",
        "undecided at max pairs after 4 pair(s)",
    ]
