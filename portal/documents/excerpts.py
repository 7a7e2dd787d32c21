"""A passage shown outside the viewer, as plain text: the one way every page shows a passage excerpt.

An answer's sources (chat and run record), the cited passage box over a document, and the results
of the Library, pack and regression-case searches all show a passage through
``templates/_excerpt.html``, which calls ``passage_excerpt``. The passage's Markdown is read with
the viewer's parser (``ingest.markdown_blocks``) and its syntax taken out (``answers.units.plain``):
a heading is a line of its own, a list item a line after its bullet, a table row reads
``Header: value; Header: value`` as the answerer reads it, a code block keeps its lines. The other
lines stay the passage's own lines (a passage is addressed by its lines, and a PDF's text is lines).

Plain text rather than rendered Markdown: a passage is a slice of its document (a table without
its header, a list without its start) and a result shows only its first characters, which rendered
Markdown shows broken; and the template escapes every line, so a document's HTML, links and htmx
attributes are text, never markup.

Pure: no Flask, no database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from portal.answers.units import KEYWORDS_LINE, TABLE_RULE, plain, row_text, table_cells
from portal.ingest.markdown_blocks import heading_title, markdown_blocks
from portal.ingest.markers import is_images_line, is_page_line

# (at most this many lines, at most this many characters, brief) for each form an excerpt takes.
# A brief excerpt (a search result) leaves out headings, ``Page N``, ``Images:`` and ``Keywords:``
# lines: the result names its section and page itself.
FORMS = {
    "whole": (None, None, False),  # the cited passage box, a long passage opened
    "preview": (6, 600, False),  # a long passage on a sources page until opened
    "snippet": (None, 320, True),  # a search result
}
ELLIPSIS = " …"
_LIST_MARKERS = re.compile(r"^[ \t>]*(?:(?:[-*+]|\d{1,9}[.)])(?:[ \t]+[ \t>]*|$))+")
_LIST_MARKER = re.compile(r"[-*+]|\d{1,9}[.)]")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of an excerpt: plain text, escaped where it is shown."""

    kind: str  # "heading" | "text" | "item" | "row" | "code" | "marker" (a Page N or Images line)
    text: str
    bullet: str = ""  # a list item's first line: "•", or its number as written ("3.")
    gap: bool = False  # it starts a block after another one (not the next row or item of the same kind)


@dataclass(frozen=True, slots=True)
class Excerpt:
    lines: tuple[Line, ...]
    cut: bool  # lines or characters were left out; the last line shown ends with " …"


def passage_excerpt(text: str, form: str = "whole") -> Excerpt:
    """``text`` (a passage) as the plain lines a page shows, in one of the ``FORMS``."""
    return _excerpt(text, *FORMS[form])


# A results page or a sources page shows the same passages again and again; a passage never changes.
@lru_cache(maxsize=2048)
def _excerpt(text: str, max_lines: int | None, max_chars: int | None, brief: bool) -> Excerpt:
    lines = _plain_lines(text, brief)
    cut = max_lines is not None and len(lines) > max_lines
    lines = lines[:max_lines] if cut else lines
    if max_chars is not None:
        kept, used = [], 0
        for line in lines:
            room = max_chars - used
            if len(line.text) > room:
                cut = True
                shortened = line.text[:room]
                shortened = (shortened.rsplit(None, 1)[0] if " " in shortened.strip() else shortened).rstrip()
                if shortened:
                    kept.append(Line(line.kind, shortened, line.bullet, line.gap))
                break
            kept.append(line)
            used += len(line.text)
        lines = kept
    if cut and lines:
        last = lines[-1]
        lines = [*lines[:-1], Line(last.kind, last.text + ELLIPSIS, last.bullet, last.gap)]
    return Excerpt(tuple(lines), cut)


def _plain_lines(text: str, brief: bool) -> list[Line]:
    source = text.splitlines()
    blocks = markdown_blocks(text)
    lines: list[Line] = []
    previous_kind = ""
    for position, block in enumerate(blocks):
        following = blocks[position + 1] if position + 1 < len(blocks) else None
        kind, drafts = _block_lines(block, following, source, brief)
        for number, (line_kind, line_text, bullet) in enumerate(drafts):
            # A gap before a block, but none between the rows of a table or the items of a list.
            gap = number == 0 and bool(lines) and not (kind in ("row", "item") and kind == previous_kind)
            lines.append(Line(line_kind, line_text, bullet, gap))
        if drafts:
            previous_kind = kind
    return lines


def _block_lines(block, following, source: list[str], brief: bool) -> tuple[str, list[tuple[str, str, str]]]:
    """A block's kind and its lines as (kind, text, bullet)."""
    if block.kind == "heading":
        title = "" if brief else plain(heading_title(block.text))
        return "heading", [("heading", title, "")] if title else []
    if block.kind == "code":
        return "code", [("code", line, "") for line in block.text.rstrip("\n").split("\n")]
    if block.kind == "table_header":  # shown with each row, unless no row follows
        rows = following is not None and following.kind == "table_row"
        return "row", [] if rows else [("row", row_text([plain(cell) for cell in block.cells], None), "")]
    if block.kind == "table_row":
        header = [plain(cell) for cell in block.header]
        return "row", [("row", row_text([plain(cell) for cell in block.cells], header), "")]
    if block.kind == "paragraph":
        return _paragraph_lines(block, source, brief)
    return "rule", []


def _paragraph_lines(block, source: list[str], brief: bool) -> tuple[str, list[tuple[str, str, str]]]:
    """A paragraph's lines. A paragraph of ``|`` lines is the rows of a table whose header row is in
    an earlier passage; a list item's lines are the item's, its first after its bullet."""
    paragraph = [line.strip() for line in block.text.split("\n")]
    if all(line.startswith("|") for line in paragraph):
        cells = [table_cells(line) for line in paragraph if not TABLE_RULE.match(line)]
        return "row", [("row", row_text([plain(cell) for cell in row], None), "") for row in cells]
    kind = "item" if block.lists else "text"
    drafts = []
    for number, line in enumerate(paragraph):
        if is_page_line(line) or is_images_line(line):
            if not brief:
                drafts.append(("marker", line, ""))
        elif not (brief and KEYWORDS_LINE.match(line)) and (shown := plain(line)):
            bullet = _bullet(source, block.line_start, block.numbered) if number == 0 and block.item_lead else ""
            drafts.append((kind, shown, bullet))
    return kind, drafts


def _bullet(source: list[str], line_number: int, numbered: bool) -> str:
    """A list item's bullet: its number as written in an ordered list, "•" in another."""
    line = source[line_number] if line_number < len(source) else ""
    markers = _LIST_MARKERS.match(line)
    found = _LIST_MARKER.findall(markers.group()) if markers else []
    return found[-1] if numbered and found and found[-1][0].isdigit() else "•"
