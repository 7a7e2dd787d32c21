"""The one rule for CSV cells a spreadsheet would run as formulas (``portal/csv_export.py``), and that every CSV
export writes through it. The feedback export's own test is in tests/test_feedback.py."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from portal.csv_export import csv_text, spreadsheet_cell

PORTAL = Path(__file__).resolve().parents[1] / "portal"


@pytest.mark.parametrize(
    "value",
    [
        "=1+1",
        "+1",
        "-1",
        "@SUM(A1)",
        "\t1",
        "\r1",
        '  =HYPERLINK("http://evil.test")',
        "\n=1",
        "\u00a0=1",  # no-break space
        "\u3000=1",  # ideographic space
        "\u200b=1",  # zero-width space
        "\u200e\u200f=1",  # left-to-right and right-to-left marks
        "\u2066=1",  # an isolate
        "\ufeff=1",  # byte-order mark
        "\u00ad=1",  # soft hyphen
        "\u3164=1",  # Hangul filler, a letter shown as nothing
        "\x1b=1",  # escape
        "\uff1d1+1",  # full-width equals sign
    ],
)
def test_a_formula_behind_anything_a_spreadsheet_trims_or_does_not_show_is_prefixed(value):
    assert spreadsheet_cell(value) == "'" + value


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("Missing the SM12 check.", "Missing the SM12 check."),
        ("  indented note", "  indented note"),
        ("\u200bplain", "\u200bplain"),
        ("a=b", "a=b"),
        ("1-2", "1-2"),
        ("   ", "   "),
        ("", ""),
        (None, ""),
        (42, "42"),
        (-1, "'-1"),
    ],
)
def test_other_cells_are_written_as_they_are(value, cell):
    assert spreadsheet_cell(value) == cell


def test_csv_text_passes_every_cell_and_the_header_through_the_rule():
    text = csv_text(("=name", "note"), [(1, " =1+1"), (2, "fine")])
    assert text.endswith("\r\n")
    assert list(csv.reader(io.StringIO(text))) == [["'=name", "note"], ["1", "' =1+1"], ["2", "fine"]]


def test_only_the_one_rule_writes_csv():
    """An export that wrote its own CSV would skip the rule: only ``portal/csv_export.py`` imports ``csv``."""
    writers = sorted(
        str(path.relative_to(PORTAL.parent))
        for path in PORTAL.rglob("*.py")
        if re.search(r"^\s*(?:import csv\b|from csv import)", path.read_text(encoding="utf-8"), re.MULTILINE)
    )
    assert writers == ["portal/csv_export.py"]
