"""results.report_table: one table, rendered as terminal text and as markdown."""

from __future__ import annotations

from pytest_specperf.results.report_table import Table

TABLE = Table(
    "steps=3",
    ["C", "Agg tok/s"],
    [["1", "96.0"], ["4", "340.5"]],
    ["C=4: a note"],
    caption="steps=3 profile=p hardware=h",
)


def test_text_shows_the_caption_in_the_titles_place() -> None:
    assert TABLE.text().splitlines()[:3] == [
        "steps=3 profile=p hardware=h",
        "C | Agg tok/s",
        "-" * 13,
    ]


def test_markdown_heads_the_caption_with_the_title() -> None:
    blocks = TABLE.markdown(level=3).split("\n\n")
    assert blocks[:2] == ["### steps=3", "steps=3 profile=p hardware=h"]


def test_both_renderings_hold_the_same_rows_and_notes() -> None:
    text, markdown = TABLE.text(), TABLE.markdown()
    for row in TABLE.rows:
        assert " | ".join(row) in text and f"| {' | '.join(row)} |" in markdown
    assert "\nC=4: a note" in text and "\n- C=4: a note" in markdown


def test_a_table_without_rows_says_what_it_says_instead() -> None:
    empty = Table("steps=1", ["C"], [], empty="(no point measured)")
    assert empty.text().splitlines()[-1] == "(no point measured)"
    assert empty.markdown().endswith("(no point measured)") and "| C |" not in empty.markdown()
