"""The text markers (``portal/ingest/markers.py``): what is written reads back, and text people typed
is read as it always was, each reading as loosely as its caller needs."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from portal.ingest import markers
from portal.ingest.figures import figure_label

HOSTILE_ALT_TEXTS = [
    "a ] b [c]",
    "line\nbreak\r\nand\ttab",
    '<script>alert("x")</script> & <img src=x onerror=alert(1)>',
    "]]]",
    "Page 3",
    "Images: 1 kept, 1 not kept (type: 1)",
    "",
    "long words " * 40,
]


@pytest.mark.parametrize("alt", HOSTILE_ALT_TEXTS)
def test_a_written_figure_marker_reads_back_whole_in_every_reading(alt):
    label = figure_label(alt)
    marker = markers.figure_marker(7, label)
    text = f"Before {marker} after.\n{marker}\nEnd"

    assert markers.figure_markers(text) == [(7, label), (7, label)]
    assert [text[s:e] for s, e in markers.figure_marker_spans(text)] == [marker, marker]
    assert markers.without_figure_markers(marker) == ""
    assert markers.only_figure_markers(f"  {marker} {marker} ")
    assert markers.replace_figure_markers(text, "[gone]") == "Before [gone] after.\n[gone]\nEnd"
    rendered = html.escape(text, quote=True)  # as the Markdown renderer escapes text
    found = []
    markers.replace_figure_markers_in_html(rendered, lambda number, shown: found.append((number, shown)) or "")
    assert [(number, html.unescape(shown)) for number, shown in found] == [(7, label), (7, label)]


def test_a_label_with_a_closing_bracket_ends_at_the_first_one():
    text = "[Figure 2: a]b] rest"
    assert markers.figure_markers(text) == [(2, "a")]
    assert markers.figure_marker_spans(text) == [(0, 13)]
    assert markers.without_figure_markers(text) == "b] rest"
    assert markers.replace_figure_markers(text, "X") == "Xb] rest"
    assert not markers.only_figure_markers(text)


def test_a_label_ends_before_an_opening_bracket_so_no_reading_scans_past_the_next_marker():
    """No label holds a square bracket (``figure_label`` writes none), so each reading stops at the next
    "[": a line of tens of thousands of unclosed "[Figure 1: " was scanned to its end from every one of
    them, quadratic (minutes to upload it, and again for every view)."""
    text = "[Figure 1: a [Figure 2: b] c"
    assert markers.figure_markers(text) == [(2, "b")]
    assert markers.figure_marker_matches(text) == [(13, 26, 2, "b")]
    assert markers.figure_marker_spans(text) == [(13, 26)]
    assert markers.without_figure_markers(text) == "[Figure 1: a  c"
    assert markers.replace_figure_markers(text, "X") == "[Figure 1: a X c"
    shown = markers.replace_figure_markers_in_html(f"<p>{text}</p>", lambda n, label: f"<{n}|{label}>")
    assert shown == "<p>[Figure 1: a <2|b> c</p>"


def test_a_figure_marker_inside_a_tag_of_rendered_html_is_left_to_the_attribute():
    tagged = '<a href="https://example.test/" title="see [Figure 1: x]">[Figure 1: y]</a>'
    shown = markers.replace_figure_markers_in_html(tagged, lambda n, label: f"<{n}|{label}>")
    assert shown == '<a href="https://example.test/" title="see [Figure 1: x]"><1|y></a>'


def test_a_label_across_a_line_break_is_no_marker_in_text_but_is_one_in_rendered_html():
    text = "[Figure 4: line\nbreak]"
    assert markers.figure_markers(text) == []
    assert markers.figure_marker_spans(text) == []
    assert markers.replace_figure_markers(text, "X") == text
    # a soft line break inside a paragraph stays a newline in the HTML, and the viewer shows the figure
    shown = markers.replace_figure_markers_in_html(f"<p>{text}</p>", lambda n, label: f"<{n}|{label}>")
    assert shown == "<p><4|line\nbreak></p>"


def test_html_in_a_label_is_text_in_the_source_and_a_tag_stops_the_marker_in_html():
    text = "[Figure 1: <b>x</b> & y]"
    assert markers.figure_markers(text) == [(1, "<b>x</b> & y")]
    escaped = markers.replace_figure_markers_in_html(html.escape(text), lambda n, label: f"{n}:{label}")
    assert escaped == "1:&lt;b&gt;x&lt;/b&gt; &amp; y"  # the caller unescapes, then escapes again
    tagged = "<p>[Figure 1: a <em>b</em>]</p>"  # emphasis inside a typed label: rendered, not a figure
    assert markers.replace_figure_markers_in_html(tagged, lambda n, label: "FIGURE") == tagged


def test_the_looser_readings_of_text_people_typed():
    """A receipt and redaction read markers as written; a passage cut and the answerer also read
    ones without the space after the colon; only the answerer's reading takes non-ASCII digits."""
    no_space = "[Figure 3:x]"
    assert markers.figure_markers(no_space) == []
    assert markers.replace_figure_markers(no_space, "X") == no_space
    assert markers.figure_marker_spans(no_space) == [(0, len(no_space))]
    assert markers.without_figure_markers(no_space) == ""
    assert markers.only_figure_markers(no_space)

    arabic = "[Figure ٣: x]"
    assert markers.figure_markers(arabic) == [(3, "x")]
    assert markers.figure_marker_spans(arabic) == []
    assert markers.without_figure_markers(arabic) == ""

    for not_a_marker in ("[Figure : x]", "[figure 1: x]", "[Figure 1 x]", "[Figure 1: x"):
        assert markers.figure_markers(not_a_marker) == []
        assert markers.figure_marker_spans(not_a_marker) == []
        assert markers.without_figure_markers(not_a_marker) == not_a_marker


@pytest.mark.parametrize("number", [1, 2, 9, 10, 123])
def test_a_written_page_line_reads_back(number):
    line = markers.page_line(number)
    assert line == f"Page {number}"
    assert markers.page_number(line) == number
    assert markers.page_number(line + " \t") == number
    assert markers.starts_page(line + "  ", number)
    assert not markers.starts_page(line, number + 1)
    assert markers.is_page_line(line)


@pytest.mark.parametrize("line", ["Page 0", "Page 03", " Page 3", "Page 3x", "page 3", "Page ٣", "Page", "Page 3\n"])
def test_a_page_line_that_starts_a_page_is_written_as_the_pdf_reader_writes_it(line):
    assert markers.page_number(line) is None
    assert not markers.starts_page(line, 3)


def test_a_line_shown_as_a_page_line_may_carry_any_number_but_no_trailing_blanks():
    for line in ("Page 0", "Page 007", "Page ٣"):
        assert markers.is_page_line(line)
    for line in ("Page 3 ", " Page 3", "page 3", "Page 3x", "Page", "Pages 3"):
        assert not markers.is_page_line(line)


def test_a_page_line_of_thousands_of_digits_is_compared_not_converted():
    assert not markers.starts_page("Page " + "9" * 5000, 2)


def test_the_images_line_reads_back_and_is_taken_off_only_at_the_end():
    line = markers.images_line(2, {"decode": 1, "type": 2})
    assert line == "Images: 2 kept, 3 not kept (type: 2, decode: 1)"
    assert markers.is_images_line(line)
    assert markers.without_images_line(f"Body\n\n{line}") == "Body"
    assert markers.without_images_line(f"Body\n\n{line}\n \n") == "Body"
    assert markers.without_images_line(line) == ""
    middle = f"A\n{line}\nB"
    assert markers.without_images_line(middle) == middle
    assert markers.without_images_line("A" + "\n" * 400_000 + "B") == "A" + "\n" * 400_000 + "B"


def test_an_upload_result_says_the_images_line_or_how_many_were_kept():
    assert markers.images_summary(2, {"type": 1}) == markers.images_line(2, {"type": 1})
    assert markers.images_summary(2, {}) == "Images: 2 kept"
    assert markers.images_summary(0, {}) == ""


def test_what_else_reads_as_the_images_line():
    assert markers.is_images_line("Images: 3 kept")
    assert markers.is_images_line("Images: 3 kept, and more")
    for line in ("Images: 3 kepts", "images: 3 kept", " Images: 3 kept", "Images: x kept"):
        assert not markers.is_images_line(line)
    typed = "Body\n\nImages: 1 kept, 1 not kept (a)b)"  # a ")" inside the reasons: not the line ingest writes
    assert markers.without_images_line(typed) == typed


_WRITTEN_OR_READ_ELSEWHERE = re.compile(
    r"\[Figure \{|\bPage \{|\bImages: \{"  # a marker written by an f-string
    r"""|Figure (\\d|\[0-9\]|\()|Page (\\d|\[0-9\]|\[1-9\]|\()|Images: \\d"""  # a marker read by a pattern
)


def test_no_module_but_markers_writes_or_reads_a_marker():
    portal = Path(markers.__file__).parents[1]
    elsewhere = [
        f"{path.relative_to(portal)}:{n}: {line.strip()}"
        for path in sorted(portal.rglob("*.py"))
        if path != Path(markers.__file__)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if _WRITTEN_OR_READ_ELSEWHERE.search(line)
    ]
    assert elsewhere == []
