"""What ships: the sdist and the wheel carry the package, never the lab (studies, GPU scripts,
raw outputs of measured runs) nor docs/runs/ (the write-ups of those runs)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from tests.support.data import REPO

NOT_SHIPPED = ("lab/", "docs/runs/")


def _not_shipped(member: str) -> bool:
    """A file or folder under one of NOT_SHIPPED (a folder's own entry has no trailing /)."""
    return (member.rstrip("/") + "/").startswith(NOT_SHIPPED)


def _working_tree(into: Path) -> Path:
    """A copy of the checkout's files as they stand (tracked, and new ones git does not ignore)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, into / name)
    return into


def test_the_sdist_and_the_wheel_carry_neither_the_lab_nor_the_measured_runs(
    tmp_path: Path,
) -> None:
    tree = _working_tree(tmp_path / "tree")
    # What a build with a VCS file finder (setuptools-scm) leaves behind: a manifest naming
    # every tracked file, which setuptools reads back into the next sdist unless told not to.
    stale = [
        path.relative_to(tree).as_posix()
        for folder in NOT_SHIPPED
        for path in sorted((tree / folder).rglob("*"))[:20]
        if path.is_file()
    ]
    assert stale
    (tree / "pytest_specperf.egg-info").mkdir()
    (tree / "pytest_specperf.egg-info" / "SOURCES.txt").write_text("\n".join(stale) + "\n")
    out = tmp_path / "dist"
    # The sdist, then the wheel built from it (no isolation: this venv's setuptools, no index).
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(tree)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    with tarfile.open(sdist) as archive:
        # Each member is under pytest_specperf-<version>/.
        in_sdist = [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = archive.namelist()
    assert "pytest_specperf/__init__.py" in in_sdist
    assert "pytest_specperf/__init__.py" in in_wheel
    assert [name for name in in_sdist if _not_shipped(name)] == []
    assert [name for name in in_wheel if _not_shipped(name)] == []
