"""history/plots.py: the trend plot's file name of a series."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_specperf.history.plots import plot_name
from pytest_specperf.history.series import Series, SeriesKey

_NAMES = st.text(min_size=1, max_size=12)
_KEYS = st.builds(
    SeriesKey,
    profile=_NAMES,
    hardware=_NAMES,
    workload=_NAMES,
    depth=st.integers(0, 8),
    concurrency=st.integers(0, 64),
    metric=_NAMES,
    load=st.one_of(st.just(""), _NAMES),
)


@given(_KEYS, _KEYS)
def test_two_series_never_share_a_plot_file(first: SeriesKey, second: SeriesKey) -> None:
    """Series differing in any part of their key (profile and hardware too, names that differ
    only in characters a file name cannot hold, or only in case) get different file names,
    even on a case-insensitive filesystem."""
    if first != second:
        assert plot_name(Series(first)).lower() != plot_name(Series(second)).lower()


@given(_KEYS)
def test_a_plot_file_name_is_one_safe_path_segment(key: SeriesKey) -> None:
    """The name is a .png in the plot folder itself, never a path elsewhere, never too long."""
    name = plot_name(Series(key))
    assert name.endswith(".png") and "/" not in name and "\\" not in name
    assert name not in (".", "..") and not name.startswith(".")
    assert len(name.encode()) <= 255


def test_a_plot_file_name_reads_every_part_of_its_series() -> None:
    """Profile, hardware, workload, depth, point and metric can be read in the name."""
    key = SeriesKey("smoke-tiny", "sim-x10", "greedy-synthetic", 3, 16, "agg_tok_s")
    assert plot_name(Series(key)).startswith(
        "trend-smoke-tiny-sim-x10-greedy-synthetic-steps3-c16-agg_tok_s-"
    )
