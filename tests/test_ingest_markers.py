"""The text markers (``portal/ingest/markers.py``): what is written reads back, and text people typed
is read as it always was, each reading as loosely as its caller needs."""

from __future__ import annotations

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
    at = text.index(marker)
    assert markers.figure_marker_at(text, at) == (at + len(marker), 7, label)
    assert markers.figure_marker_at(text, at + 1) is None


def test_a_label_with_a_closing_bracket_ends_at_the_first_one():
    text = "[Figure 2: a]b] rest"
    assert markers.figure_markers(text) == [(2, "a")]
    assert markers.figure_marker_spans(text) == [(0, 13)]
    assert markers.without_figure_markers(text) == "b] rest"
    assert markers.replace_figure_markers(text, "X") == "Xb] rest"
    assert markers.figure_marker_at(text, 0) == (13, 2, "a")
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
    assert markers.figure_marker_at(text, 0) is None
    assert markers.figure_marker_at(text, 13) == (26, 2, "b")


def test_a_label_across_a_line_break_is_no_marker():
    text = "[Figure 4: line\nbreak]"
    assert markers.figure_markers(text) == []
    assert markers.figure_marker_spans(text) == []
    assert markers.replace_figure_markers(text, "X") == text
    assert markers.figure_marker_at(text, 0) is None


def test_html_in_a_label_is_text():
    text = "[Figure 1: <b>x</b> & y]"
    assert markers.figure_markers(text) == [(1, "<b>x</b> & y")]
    assert markers.figure_marker_at(text, 0) == (len(text), 1, "<b>x</b> & y")


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


# --- author text shaped like a marker ---------------------------------------------------------

AUTHOR_TEXT = {
    "figure": "See [Figure 1: Network overview] and [Figure 2:x] and [Figure ٣: y].",
    "page": "Page 2",
    "indented page": "  Page 12  ",
    "images": "Images: 3 kept, 1 not kept (type: 1)",
    "indented images": "Intro line here.\n\n  Images: 2 kept, 1 not kept (type: 1)\n",
    "description": "Figure 1 description: written by the author",
}


def _read_as_a_marker(text: str) -> list:
    """Everything any reading here takes for a marker in ``text``."""
    lines = text.splitlines()
    found = [
        *markers.figure_markers(text),
        *markers.figure_marker_spans(text),
        *(line for line in lines if markers.page_number(line) is not None or markers.is_page_line(line.strip())),
        *(line for line in lines if markers.is_images_line(line.strip()) or markers.only_figure_markers(line)),
        *(line for line in lines if markers.without_figure_markers(line) != line),
    ]
    figure = markers.figure_marker(1, "x")
    if not markers.with_figure_descriptions(f"{figure}\n\n{text}", {1: "new"}).endswith(text):
        found.append("a description of figure 1")
    if markers.without_images_line(text) != text:
        found.append("the Images line at the end")
    return found


@pytest.mark.parametrize("shape", AUTHOR_TEXT)
def test_author_text_shaped_like_a_marker_reads_as_none_once_neutralised(shape):
    text = AUTHOR_TEXT[shape]
    assert _read_as_a_marker(text)
    neutral = markers.neutralise_markers(text)
    assert _read_as_a_marker(neutral) == []
    assert neutral.replace("\u2060", "") == text  # only an invisible word joiner was added

    assert markers.neutralise_markers(neutral) == neutral
    assert all(markers.figure_marker_at(neutral, position) is None for position in range(len(neutral)))


@pytest.mark.usefixtures("java")
@pytest.mark.parametrize("shape", AUTHOR_TEXT)
def test_author_text_kept_from_reading_as_a_marker_still_searches_as_written(shape):
    """The word joiner stands before the number, where the tokenizer drops it: "Page 2" in a PDF's footer
    is still found by "page", not indexed as a term "page\u2060"."""
    from portal.search import analyze

    text = AUTHOR_TEXT[shape]
    assert analyze(markers.neutralise_markers(text)) == analyze(text)


def test_text_naming_an_images_line_inside_a_sentence_is_no_marker_and_stays_as_written():
    text = "The summary said Images: 1 kept, 0 not kept (type: 0)"
    assert _read_as_a_marker(text) == []
    assert markers.neutralise_markers(text) == text


def test_what_ingest_writes_after_neutralising_the_authors_text_reads_back_alone():
    author = "\n\n".join(AUTHOR_TEXT.values())
    page = markers.page_line(1)
    figure = markers.figure_marker(1, figure_label("Router photo"))
    text = f"{page}\n\n{markers.neutralise_markers(author)}\n\n{figure}"
    assert markers.figure_markers(text) == [(1, "Router photo")]
    assert [line for line in text.splitlines() if markers.is_page_line(line.strip())] == [page]
    described = markers.with_figure_descriptions(text, {1: "A router."})
    assert described.endswith(f"{figure}\n\nFigure 1 description: A router.")


def test_text_without_marker_shapes_is_left_as_it_is():
    text = "Page 2 of 7\n[Figure] 1: x\n[figure 1: x]\nFigure 1: a caption\nImages: none kept\nSee page 2."
    assert markers.neutralise_markers(text) == text


def test_a_description_follows_only_the_first_marker_of_its_figure():
    """Where a figure's marker is typed twice (text people wrote), the figure stands at the first, and so does
    its description."""
    marker = markers.figure_marker(1, "Router")
    text = f"{marker}\n\nBody.\n\n{marker} again"
    described = markers.with_figure_descriptions(text, {1: "A router."})
    assert described == f"{marker}\n\nFigure 1 description: A router.\n\nBody.\n\n{marker} again"
    assert markers.with_figure_descriptions(described, {1: "A switch."}) == described.replace("router.", "switch.")
