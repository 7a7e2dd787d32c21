"""The text markers ingest writes into a document's text: each written here and read only here.

- ``[Figure N: label]`` stands where kept figure N is (``figures.assemble``); its label comes
  from ``figures.figure_label``: one line, square brackets turned into parentheses.
- ``Page N`` opens each page of a PDF's text (``pdf_reader``); ``passages`` repeats it at the
  head of a long page's later pieces.
- ``Images: K kept, N not kept (reason: n, …)`` is the last line when an image was not kept.
- ``Figure N description: …`` is the paragraph right after figure N's marker once a vision
  model described the figure (``portal.describing``); describing again replaces it.

Text a Word or PDF file's author wrote never reads as a marker: each reader passes it through
``neutralise_markers`` before ingest writes its own markers around it, so a paragraph typed as
``[Figure 1: Network overview]`` or a footer ``Page 2`` stays the author's text everywhere a marker
is read (the viewer, a receipt, redaction, answers, describing).

The text of a Markdown or text upload, or of a browser edit, is the person's own and is stored as
written: a marker typed there is read as one, but such a revision has no figures, so the viewer
shows the marker as its text and a receipt lists no figure for it. Each reading below says how
loosely it reads; on what ingest writes they all agree. However often a figure's marker stands in a
text, the figure stands at the first (the viewer, descriptions), so a page never holds its id twice.

Pure: no Flask, no database; ingest, answers, documents and runs all import it.
"""

from __future__ import annotations

import re

from portal.ingest.limits import IMAGE_REASONS

# Numbers are at most nine digits in every reading: a document is limited to far fewer figures and
# pages, and a number of thousands of digits (typed into a Markdown upload) would make int() raise.
# A label holds no square bracket in any reading (``figures.figure_label`` writes none), so reading one
# stops at the next "[": a line of 36,000 "[Figure 1: " without a "]" was scanned to its end from each of
# them, quadratic (minutes for one upload and for every view of it).
# A figure marker as written: what a receipt lists and what redaction replaces.
_FIGURE_MARKER = re.compile(r"\[Figure (\d{1,9}): ([^\[\]\n]*)\]")
# Where a passage cut must not fall: read more loosely, the space after the colon not needed.
_FIGURE_MARKER_SPAN = re.compile(r"\[Figure [0-9]{1,9}:[^\[\]\n]*\]")
# What an answer does not count as words (any digits, no space needed), in one unit or line of a passage.
_FIGURE_MARKER_IN_UNIT = re.compile(r"\[Figure \d{1,9}:[^\[\]]*\]")
_ONLY_FIGURE_MARKERS = re.compile(rf"^(?:\s*{_FIGURE_MARKER_IN_UNIT.pattern})+\s*$")

# A page line that starts a page: numbered from 1, as ``pdf_reader`` writes it (trailing blanks allowed).
_PAGE_LINE = re.compile(r"Page ([1-9][0-9]{0,8})[ \t]*")
# A line shown or skipped as a page line (the viewer's divider, answers, search snippets): any number.
_PAGE_LINE_SHOWN = re.compile(r"^Page \d+$")

_IMAGES_LINE_START = re.compile(r"^Images: \d+ kept\b")
_IMAGES_LINE = re.compile(r"Images: \d+ kept, \d+ not kept \([^)\n]*\)")


# --- [Figure N: label] ------------------------------------------------------------------------


def figure_marker(number: int, label: str) -> str:
    """``[Figure 3: label]``; ``label`` must come from ``figures.figure_label`` to read back whole."""
    return f"[Figure {number}: {label}]"


def figure_markers(text: str) -> list[tuple[int, str]]:
    """The (number, label) of every figure marker in ``text``, in order."""
    return [(int(number), label) for number, label in _FIGURE_MARKER.findall(text)]


def figure_marker_matches(text: str) -> list[tuple[int, int, int, str]]:
    """The (start, end, number, label) of every figure marker in ``text``, as ``figure_markers`` reads them."""
    return [(m.start(), m.end(), int(m.group(1)), m.group(2)) for m in _FIGURE_MARKER.finditer(text)]


def replace_figure_markers(text: str, replacement: str) -> str:
    """``text`` with every figure marker replaced by ``replacement``."""
    return _FIGURE_MARKER.sub(lambda _match: replacement, text)


def figure_marker_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of everything in ``text`` that reads as a figure marker, which a cut must not split."""
    return [match.span() for match in _FIGURE_MARKER_SPAN.finditer(text)]


def without_figure_markers(unit: str) -> str:
    """A unit of a passage with its figure markers taken out, to see whether words are left."""
    return _FIGURE_MARKER_IN_UNIT.sub("", unit)


def only_figure_markers(line: str) -> bool:
    """Whether a line of a passage holds figure markers and nothing else (white space aside)."""
    return bool(_ONLY_FIGURE_MARKERS.match(line))


def figure_marker_at(text: str, position: int) -> tuple[int, int, str] | None:
    """The (end, number, label) of the figure marker starting at ``text[position]``, as ``figure_markers``
    reads it, or None: the viewer's Markdown parser reads markers in the text as written with it, so
    nothing Markdown makes of the text (an entity, an escape) becomes one."""
    match = _FIGURE_MARKER.match(text, position)
    return (match.end(), int(match.group(1)), match.group(2)) if match else None


# --- Figure N description: … -----------------------------------------------------------------

_DESCRIPTION_LINE = re.compile(r"^Figure ([0-9]{1,9}) description: .*$")


def figure_description(number: int, description: str) -> str:
    """``Figure 3 description: …``; ``description`` is one line (``describing.vision.clean`` makes it so)."""
    return f"Figure {number} description: {description}"


def with_figure_descriptions(text: str, descriptions: dict[int, str]) -> str:
    """``text`` with each described figure's description as the paragraph right after the line that
    holds its (first) marker, replacing the description already there; figures without a marker are skipped."""
    lines = text.split("\n")
    out: list[str] = []
    placed: set[int] = set()  # a figure stands at its first marker, and so does its description
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        numbers = list(dict.fromkeys(n for n, _label in figure_markers(line) if n in descriptions and n not in placed))
        placed.update(numbers)
        if not numbers:
            continue
        # An earlier description of these figures (with its blank line before) is replaced, not kept.
        j = i
        while j < len(lines) and (not lines[j].strip() or _described_figure(lines[j]) in numbers):
            j += 1
        if any(_described_figure(lines[k]) in numbers for k in range(i, j)):
            i = j
            trailing_blank = True
        else:
            trailing_blank = False
        for number in numbers:
            out.extend(["", figure_description(number, descriptions[number])])
        if i < len(lines) and (lines[i].strip() or trailing_blank):
            out.append("")
    return "\n".join(out)


def _described_figure(line: str) -> int | None:
    match = _DESCRIPTION_LINE.match(line)
    return int(match.group(1)) if match else None


# --- Page N -----------------------------------------------------------------------------------


def page_line(number: int) -> str:
    """``Page 3``: the first line of page 3 of a PDF's text."""
    return f"Page {number}"


def page_number(line: str) -> int | None:
    """The number of the page a line (without its line break) starts, or None when it is not a page line:
    strict, as ``pdf_reader`` writes it (trailing blanks allowed)."""
    match = _PAGE_LINE.fullmatch(line)
    return int(match.group(1)) if match else None


def starts_page(line: str, number: int) -> bool:
    """Whether a line (without its line break) is the page line of page ``number``, as ``page_number``
    reads it; compared as text, so a body line of thousands of digits is never made a number."""
    return line.rstrip(" \t") == page_line(number)


def is_page_line(line: str) -> bool:
    """Whether a line (stripped) reads as a page line, to show it as one or leave it out of prose."""
    return bool(_PAGE_LINE_SHOWN.match(line))


def is_page_shaped(line: str) -> bool:
    """Whether a line (stripped) reads as a page line once the word joiner ``neutralise_markers`` puts into
    an author's own "Page 2" is taken out: a PDF's footer stays the author's text, but no answer quotes it."""
    return is_page_line(line.replace(_WORD_JOINER, ""))


# --- Images: K kept, N not kept (…) ---------------------------------------------------------


def images_line(kept: int, not_kept: dict[str, int]) -> str:
    """``Images: 2 kept, 1 not kept (type: 1)``, reasons in the order of the spec."""
    total = sum(not_kept.values())
    reasons = ", ".join(f"{r}: {not_kept[r]}" for r in IMAGE_REASONS if not_kept.get(r))
    return f"Images: {kept} kept, {total} not kept ({reasons})"


def is_images_line(line: str) -> bool:
    """Whether a line (stripped) reads as the Images line, which is not prose."""
    return bool(_IMAGES_LINE_START.match(line))


def is_the_images_line(line: str) -> bool:
    """Whether ``line`` is the whole Images line ingest writes (one an author typed was neutralised)."""
    return _IMAGES_LINE.fullmatch(line) is not None


def without_images_line(text: str) -> str:
    """``text`` without the Images line that ends it (and the blank lines before it), if it has one. Its last
    line is read alone: a search for the line through the text tried every position of a run of blank
    lines (quadratic: a Markdown file of 390,000 line breaks and a credential took minutes to redact)."""
    before, _, last = text.rstrip().rpartition("\n")
    return before.rstrip("\n") if is_the_images_line(last) else text


# --- Author text shaped like a marker ---------------------------------------------------------

# Put just before the number of author text that one of the readings above would take for a marker
# ("[Figure \u20601: …]", "Page \u20602", "Images: \u20603 kept …", "Figure \u20601 description: …"):
# U+2060 WORD JOINER has no width and no look, so the text reads and copies as written, yet no reading
# matches it any more. Before the number, after a space, Lucene's tokenizer drops it (Unicode word
# breaking attaches a format character to the space before it), so the text also searches as written;
# glued to a word ("Page\u2060") it would become part of that word's term.
_WORD_JOINER = "\u2060"
_FIGURE_SHAPED = re.compile(r"(?<=\[Figure )(?=\d)")  # as loose as the loosest reading: any digits, then anything
_NUMBER_AFTER = {  # a line (stripped) that reads as a marker -> where its number starts
    "page": re.compile(r"(?<=^Page )(?=\d)"),
    "images": re.compile(r"(?<=^Images: )(?=\d)"),
    "description": re.compile(r"(?<=^Figure )(?=[0-9])"),
}


def neutralise_markers(author_text: str) -> str:
    """Text read out of a Word or PDF file, with everything in it shaped like a marker (figure, page,
    Images line, description) kept from reading as one by a word joiner before its number. Every
    reader that writes markers passes its author's text through here before writing them; applied
    again it changes nothing."""
    text = _FIGURE_SHAPED.sub(_WORD_JOINER, author_text)
    return "".join(_line_neutralised(line) for line in text.splitlines(keepends=True))


def _line_neutralised(line: str) -> str:
    stripped = line.strip()  # the readers of paragraphs (answers, excerpts) strip a line's indent first
    if is_page_line(stripped):  # ``page_number`` reads a subset of these lines
        kind = "page"
    elif is_images_line(stripped):
        kind = "images"
    elif _DESCRIPTION_LINE.match(stripped):
        kind = "description"
    else:
        return line
    indent = line[: len(line) - len(line.lstrip())]
    return indent + _NUMBER_AFTER[kind].sub(_WORD_JOINER, line[len(indent) :], count=1)
