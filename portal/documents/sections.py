"""A document's sections: the outline the viewer shows, and one section read on its own.

A Markdown or Word document's sections are its top-level headings as the viewer renders them
(``ingest.markdown_blocks``, the parser the passage splitter reads headings with), each named
by the same heading path its passages record (``Setup > Network``); a section runs from its
heading to the next heading of the same or a higher level, so it holds its subsections. A
PDF's sections are its pages (``Page 3``, read by ``ingest.passages.pdf_pages``). Plain text
and images have none.

Finding a section by name (``?section=``): the name is compared part by part (split at
``>``), ignoring case and runs of blanks. A full path wins; otherwise the sections whose
path ends with the name (``Network`` for ``Setup > Network``). More than one match is
ambiguous and reported with the candidates; none lists every section. A section is shown
up to ``MAX_SECTION_CHARS``, cut at a line break, and says so.

Pure: no Flask, no database.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from portal.ingest.markdown_blocks import heading_title, markdown_blocks
from portal.ingest.markers import page_line
from portal.ingest.passages import MARKDOWN_KINDS, PDF_KINDS, pdf_pages

MAX_SECTION_CHARS = 40_000
"""At most this many characters of one section are shown; the rest is in the whole document."""


@dataclass(frozen=True)
class Section:
    """One entry of the outline: a heading (``level`` 1–6) or a PDF page (``level`` 1)."""

    number: int  # 1, 2, … in document order: its anchor is ``section-<number>``
    path: str  # the heading path as passages record it, or ``Page N``
    title: str  # the heading's own title, or ``Page N``
    level: int
    line_start: int  # its heading or page line, 0-based
    line_end: int  # one past its last line
    shared: bool = False  # another section has the same path: it can be jumped to, not named

    @property
    def anchor(self) -> str:
        return f"section-{self.number}"


@dataclass(frozen=True)
class SectionText:
    """A section's text as shown: cut at ``MAX_SECTION_CHARS`` (at a line break) when longer."""

    section: Section
    text: str
    total_chars: int

    @property
    def cut(self) -> bool:
        return len(self.text) < self.total_chars


@dataclass(frozen=True)
class Lookup:
    """What a name found: one section, or why not (``unknown``, ``ambiguous`` with its candidates)."""

    name: str
    found: SectionText | None = None
    problem: str | None = None  # "unknown" | "ambiguous"
    candidates: list[Section] = field(default_factory=list)


def outline(text: str, kind: str) -> list[Section]:
    """The sections of a revision's text, in document order (empty for kinds without sections)."""
    lines = text.splitlines()
    mode = kind.lower().lstrip(".")
    if mode in PDF_KINDS:
        starts = [(page_line(number), page_line(number), 1, line) for number, line in pdf_pages(lines)]
    elif mode in MARKDOWN_KINDS:
        starts = [
            (" > ".join(block.heading_path), heading_title(block.text), block.level, block.line_start)
            for block in markdown_blocks(text)
            if block.kind == "heading" and not block.depth and heading_title(block.text)
        ]
    else:
        return []
    ends = [len(lines)] * len(starts)
    open_sections: list[int] = []  # positions whose end is not known yet, levels rising
    for position, (_, _, level, first) in enumerate(starts):
        while open_sections and starts[open_sections[-1]][2] >= level:
            ends[open_sections.pop()] = first
        open_sections.append(position)
    paths = Counter(path for path, _, _, _ in starts)
    return [
        Section(position + 1, path, title, level, first, ends[position], shared=paths[path] > 1)
        for position, (path, title, level, first) in enumerate(starts)
    ]


def _key(name: str) -> tuple[str, ...]:
    return tuple(" ".join(part.split()).casefold() for part in name.split(">") if part.strip())


def find_section(text: str, kind: str, name: str, sections: list[Section] | None = None) -> Lookup:
    """The section ``name`` names in the text (whose ``outline`` the caller may pass), or why there is none."""
    sections = outline(text, kind) if sections is None else sections
    wanted = _key(name)
    if not wanted:
        return Lookup(name, problem="unknown", candidates=sections)
    matches = [s for s in sections if _key(s.path) == wanted]
    if not matches:
        matches = [s for s in sections if _key(s.path)[-len(wanted) :] == wanted]
    if not matches:
        return Lookup(name, problem="unknown", candidates=sections)
    if len(matches) > 1:
        return Lookup(name, problem="ambiguous", candidates=matches)
    return Lookup(name, found=section_text(text, matches[0]))


def section_text(text: str, section: Section) -> SectionText:
    """The section's lines, at most ``MAX_SECTION_CHARS`` of them, cut after a whole line."""
    whole = "\n".join(text.splitlines()[section.line_start : section.line_end])
    if len(whole) <= MAX_SECTION_CHARS:
        return SectionText(section, whole, len(whole))
    cut = whole.rfind("\n", 0, MAX_SECTION_CHARS + 1)
    return SectionText(section, whole[: cut if cut > 0 else MAX_SECTION_CHARS], len(whole))
