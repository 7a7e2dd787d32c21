"""Split a revision's text into passages for search and citation (SPEC 6).

A passage is about ``target`` characters and never more than 1.5 × ``target``.
Cuts are chosen in this order of preference: a paragraph break (blank line), a
line break, a sentence end (``.``, ``?``, ``!`` followed by white space, or a
CJK full stop), white space, and only then a hard cut. A cut never falls inside
a figure marker ``[Figure N: label]`` nor between a character and the combining
mark or emoji joiner that follows it.

Offsets are Python ``str`` indexes into the revision text; line numbers are
1-based and count lines exactly as ``text.splitlines()`` does. Leading and
trailing white space (blank lines included) is never part of a passage, except
that a passage starting at the beginning of a line keeps that line's
indentation.

Markdown (``md``, ``markdown``, ``docx`` — Word is read into Markdown):

- The top-level headings the viewer renders (``markdown_blocks``: ATX ``#`` …
  ``######`` and setext, never a ``#`` line in a code block) give each passage
  its ``heading_path`` (``Setup > Network > Proxy``).
- A heading starts a new passage once the current one holds anything besides
  headings, so a passage never crosses into another section and its heading
  path is true for all of it. Small sections are *not* merged: a short section
  is a short passage, rather than a passage whose heading path is wrong for
  half its text.
- A passage that opens with headings records the path those headings
  establish (``# Setup`` / ``## Network`` / body → ``Setup > Network``).
- A passage that starts on a row of a table cut in two gets the table's
  header row and delimiter row prepended to its ``text`` (positions stay those
  of the slice, as for PDF pages below): without them its rows are cells
  without names, "Z_FI_PAYMENT_RUN_F110 | ZTW_FI_F110_TRIGGER / TF01 | Monday
  and Thursday 06:00", and neither the search nor the answer knows which cell
  is the program and which the start. A header longer than a quarter of the
  target is not repeated (it would crowd out the rows).

PDF (``pdf``): the text is pages, each opening with a line ``Page N``, numbered
from the first such line on (``Page 1``, then exactly ``Page 2``, …; a body
line that happens to read ``Page 7`` on page 3 is not a page break). A passage
never spans two pages and always starts with its page line. The first passage
of a page is an exact slice starting at the page line; when a long page is
split, every further piece gets ``"Page N\\n"`` prepended to its ``text`` while
``char_start``/``char_end``/``line_start``/``line_end`` give the position of
the slice without that repeated line. A page holding nothing but its page line
gives no passage. Text before the first page line (not produced by the
ingester) is split as plain text with ``page=None``.

Every other kind is plain text: no headings, one flow of paragraphs.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

from portal.ingest.markdown_blocks import LINE_BREAKS, markdown_blocks
from portal.ingest.markers import figure_marker_spans, page_line, page_number, starts_page

MARKDOWN_KINDS = frozenset({"md", "markdown", "docx"})
PDF_KINDS = frozenset({"pdf"})
MIN_TARGET = 40

_SENTENCE_END = re.compile(r"[.?!][\"'”’)\]]*\s+|[。！？][”’」』）]*\s*")
_WHITESPACE = re.compile(r"\s+")
_NON_SPACE = re.compile(r"\S")
_ZWJ = "\u200d"
_REGIONAL_INDICATOR = re.compile("[\U0001f1e6-\U0001f1ff]")
_REGIONAL_INDICATORS_BEFORE = re.compile("[\U0001f1e6-\U0001f1ff]+\\Z")
_NEAR = 64  # look this close to the ideal cut first: a match there is the nearest one


@dataclass(frozen=True, slots=True)
class PassageSpan:
    """One passage and where it sits in the revision text.

    ``text == document[char_start:char_end]``, except for PDF pieces after the
    first of a page, whose ``text`` is ``"Page N\\n"`` + that slice, and Markdown
    pieces that start inside a table, whose ``text`` is its header and delimiter
    rows + that slice.
    """

    ordinal: int
    text: str
    char_start: int
    char_end: int
    line_start: int
    line_end: int
    heading_path: str
    page: int | None


def split_passages(text: str, kind: str, target: int = 1000) -> list[PassageSpan]:
    """Cut ``text`` (a revision's full text, newlines normalised) into passages."""
    if target < MIN_TARGET:
        raise ValueError(f"passage target must be at least {MIN_TARGET} characters, not {target}")
    if not text or text.isspace():
        return []
    mode = kind.lower().lstrip(".")
    doc = _Document(text, target)
    if mode in PDF_KINDS:
        pieces = _pdf_pieces(doc)
    elif mode in MARKDOWN_KINDS:
        pieces = _markdown_pieces(doc)
    else:
        pieces = [(s, e, "", "", None) for s, e in doc.split_range(0, len(text))]
    return [
        PassageSpan(
            ordinal=ordinal,
            text=prefix + text[start:end],
            char_start=start,
            char_end=end,
            line_start=doc.line_of(start) + 1,
            line_end=doc.line_of(end - 1) + 1,
            heading_path=heading_path,
            page=page,
        )
        for ordinal, (start, end, prefix, heading_path, page) in enumerate(pieces)
    ]


class _Document:
    """The text with the line and figure tables the cutter needs, built once."""

    def __init__(self, text: str, target: int):
        self.text = text
        self.target = target
        self.cap = target * 3 // 2
        lines = text.splitlines(keepends=True)
        self.line_starts = [0, *accumulate(map(len, lines))][:-1]
        self.contents = [line.rstrip(LINE_BREAKS) for line in lines]
        self.blank = [not content.strip() for content in self.contents]
        self.line_cuts = self.line_starts[1:]
        self.paragraph_cuts = [
            self.line_starts[i] for i in range(1, len(lines)) if self.blank[i - 1] and not self.blank[i]
        ]
        figures = figure_marker_spans(text)
        self.figure_starts = [s for s, _ in figures]
        self.figure_ends = [e for _, e in figures]

    def line_of(self, pos: int) -> int:
        """0-based index of the line holding character ``pos``."""
        return bisect_right(self.line_starts, pos) - 1

    def figure_around(self, pos: int) -> tuple[int, int] | None:
        """The figure marker that a cut at ``pos`` would split, if any."""
        k = bisect_left(self.figure_starts, pos) - 1
        if k >= 0 and pos < self.figure_ends[k]:
            return self.figure_starts[k], self.figure_ends[k]
        return None

    def trim(self, start: int, end: int) -> tuple[int, int] | None:
        """``[start, end)`` without surrounding white space; None when nothing is left."""
        first = _NON_SPACE.search(self.text, start, end)
        if first is None:
            return None
        s = first.start()
        line_begin = self.line_starts[self.line_of(s)]
        if start <= line_begin:
            s = line_begin
        e = end
        while self.text[e - 1].isspace():
            e -= 1
        return s, e

    def split_range(
        self, start: int, end: int, prefix_len: int = 0, floor: int = 0, prefix_at: Callable[[int], str] | None = None
    ) -> list[tuple[int, int]]:
        """Cut ``[start, end)`` into trimmed pieces of at most ``cap`` characters.

        ``prefix_len`` is the length of the text prepended to every piece but the
        first; ``prefix_at(s)`` the text prepended to a piece starting at ``s`` (a
        table's header); ``floor`` is a position the first cut must lie beyond.
        """
        pieces: list[tuple[int, int]] = []
        whole = self.trim(start, end)
        if whole is None:
            return pieces
        pos, end = start, whole[1]
        while (trimmed := self.trim(pos, end)) is not None:
            s, e = trimmed
            overhead = (prefix_len if pieces else 0) + (len(prefix_at(s)) if prefix_at else 0)
            if e - s + overhead <= self.cap:
                pieces.append((s, e))
                break
            cut = self._find_cut(s, self.target - overhead, self.cap - overhead, max(floor, s) if not pieces else s)
            piece = self.trim(s, cut)
            if piece is not None:
                pieces.append(piece)
            pos = cut
        return pieces

    def _find_cut(self, start: int, target: int, cap: int, floor: int) -> int:
        lo, ideal, hi = max(start + target // 2, floor + 1), start + target, start + cap
        for candidates in (self.paragraph_cuts, self.line_cuts):
            cut = self._closest_listed(candidates, lo, hi, ideal)
            if cut is not None:
                return cut
        for pattern in (_SENTENCE_END, _WHITESPACE):
            cut = self._closest_matched(pattern, lo, hi, ideal)
            if cut is not None:
                return cut
        cut = self._last_matched(_WHITESPACE, floor + 1, lo)
        return cut if cut is not None else self._hard_cut(hi, floor)

    def _closest_listed(self, candidates: list[int], lo: int, hi: int, ideal: int) -> int | None:
        """The listed position in ``[lo, hi]`` nearest ``ideal`` (ties go left)."""
        i = bisect_left(candidates, ideal)
        left = i - 1 if i > 0 and candidates[i - 1] >= lo else None
        right = i if i < len(candidates) and candidates[i] <= hi else None
        if left is None:
            return candidates[right] if right is not None else None
        if right is None or ideal - candidates[left] <= candidates[right] - ideal:
            return candidates[left]
        return candidates[right]

    def _closest_matched(self, pattern: re.Pattern, lo: int, hi: int, ideal: int) -> int | None:
        """The match end in ``[lo, hi]`` nearest ``ideal``, never inside a figure marker."""
        near_lo, near_hi = max(lo, ideal - _NEAR), min(hi, ideal + _NEAR)
        if (near_lo, near_hi) != (lo, hi):
            best = self._closest_matched(pattern, near_lo, near_hi, ideal)
            if best is not None:
                return best
        best = None
        for match in pattern.finditer(self.text, max(0, lo - 8), hi):
            cut = match.end()
            if cut < lo or (self.figure_starts and self.figure_around(cut)):
                continue
            if best is None or abs(cut - ideal) < abs(best - ideal):
                best = cut
            elif cut > ideal:
                break
        return best

    def _last_matched(self, pattern: re.Pattern, lo: int, hi: int) -> int | None:
        """The last match end in ``[lo, hi)`` outside figure markers."""
        last = None
        for match in pattern.finditer(self.text, lo, hi):
            if match.end() < hi and not (self.figure_starts and self.figure_around(match.end())):
                last = match.end()
        return last

    def _hard_cut(self, cut: int, floor: int) -> int:
        figure = self.figure_around(cut)
        if figure is not None:
            return figure[0] if figure[0] > floor else figure[1]
        while cut > floor + 1 and _joins_previous(self.text, cut):
            cut -= 1
        if _REGIONAL_INDICATOR.match(self.text, cut):  # a flag is a pair of them: never cut a pair
            run = _REGIONAL_INDICATORS_BEFORE.search(self.text, floor, cut)
            if run and len(run.group()) % 2 and cut - 1 > floor:
                cut -= 1
        return cut


def _joins_previous(text: str, pos: int) -> bool:
    """True when ``text[pos]`` belongs to the same visible character as ``text[pos - 1]``."""
    char = text[pos]
    return (
        unicodedata.category(char) in ("Mn", "Mc", "Me")
        or char == _ZWJ
        or text[pos - 1] == _ZWJ
        or 0x1F3FB <= ord(char) <= 0x1F3FF  # emoji skin-tone modifiers
    )


def _markdown_pieces(doc: _Document) -> list[tuple[int, int, str, str, None]]:
    section_starts, heading_lines, heading_paths, table_headers = _markdown_structure(doc)
    is_heading = set(heading_lines)

    def header_at(s: int) -> str:
        """The header of the table whose body row starts at ``s``, repeated before a piece starting there."""
        line = doc.line_of(s)
        return table_headers.get(line, "") if doc.line_starts[line] == s else ""

    bounds = [doc.line_starts[i] for i in section_starts] + [len(doc.text)]
    pieces = []
    for start, end in zip(bounds, bounds[1:]):
        for s, e in doc.split_range(start, end, prefix_at=header_at if table_headers else None):
            line = doc.line_of(s)
            last = doc.line_of(e - 1)
            while line <= last and (line in is_heading or doc.blank[line]):
                line += 1
            k = bisect_left(heading_lines, line)
            pieces.append((s, e, header_at(s), heading_paths[k - 1] if k else "", None))
    return pieces


def _markdown_structure(doc: _Document) -> tuple[list[int], list[int], list[str], dict[int, str]]:
    """Section start lines, heading lines, the heading path in force after each heading line, and the
    header (header row and delimiter row, each with its line break) of the table each body row line
    belongs to.

    The headings are the top-level ones the viewer renders (``markdown_blocks``); a heading
    inside a block quote or list item is part of that block and starts no section. Only top-level
    tables have their header repeated: a table in a list or quote has its container's marks on
    every line.
    """
    section_starts = [0]
    heading_lines: list[int] = []
    heading_paths: list[str] = []
    table_headers: dict[int, str] = {}
    header = ""
    after_heading = 0  # the line after the last heading
    for block in markdown_blocks(doc.text):
        if block.depth:
            continue
        if block.kind == "table_header":
            line = block.line_start  # the delimiter row is the next line, always
            header = f"{doc.contents[line]}\n{doc.contents[line + 1]}\n"
            if len(header) > doc.target // 4:
                header = ""
        elif block.kind == "table_row" and header:
            table_headers.update(dict.fromkeys(range(block.line_start, block.line_end), header))
        if block.kind != "heading":
            continue
        if not all(doc.blank[after_heading : block.line_start]):
            section_starts.append(block.line_start)
        path = " > ".join(block.heading_path)
        for line in range(block.line_start, block.line_end):  # a setext heading's underline belongs to it too
            heading_lines.append(line)
            heading_paths.append(path)
        after_heading = block.line_end
    return section_starts, heading_lines, heading_paths, table_headers


def pdf_pages(lines: list[str]) -> list[tuple[int, int]]:
    """(page number, index of its page line) of each page of a PDF's text, ``lines`` without breaks.

    The first page line found starts the count; after it only the next number starts a page,
    so a body line reading ``Page 7`` on page 2 stays text. The viewer's outline reads pages here too.
    """
    pages: list[tuple[int, int]] = []
    for i, content in enumerate(lines):
        if not pages:
            number = page_number(content)
            if number is not None:
                pages.append((number, i))
        elif starts_page(content, pages[-1][0] + 1):
            pages.append((pages[-1][0] + 1, i))
    return pages


def _pdf_pieces(doc: _Document) -> list[tuple[int, int, str, str, int | None]]:
    pages = pdf_pages(doc.contents)  # (page number, line index of its page line)
    text_end = len(doc.text)
    if not pages:
        return [(s, e, "", "", None) for s, e in doc.split_range(0, text_end)]
    pieces: list[tuple[int, int, str, str, int | None]] = [
        (s, e, "", "", None) for s, e in doc.split_range(0, doc.line_starts[pages[0][1]])
    ]
    bounds = [doc.line_starts[line] for _, line in pages] + [text_end]
    for (number, line), start, end in zip(pages, bounds, bounds[1:]):
        body = _NON_SPACE.search(doc.text, start + len(doc.contents[line]), end)
        if body is None:
            continue
        prefix = page_line(number) + "\n"
        for index, (s, e) in enumerate(doc.split_range(start, end, len(prefix), floor=body.start())):
            pieces.append((s, e, prefix if index else "", "", number))
    return pieces
