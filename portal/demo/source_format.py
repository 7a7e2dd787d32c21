"""The Markdown-ish source format of the demo's Word and PDF documents (``sources/*.md``), and its parser.

One block per line or group of lines:

``# Title`` · ``## Heading`` · ``### Heading`` · ``- bullet`` · ``1. step`` ·
``| table | rows |`` (the second row is the separator) ·
``![alt text](figure:name)`` (a figure drawn by ``figures.FIGURES[name]``) ·
``<<<pagebreak>>>`` (PDF only) · anything else is a paragraph; ``**bold**`` is
honoured inside paragraphs and list items.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class Heading:
    level: int  # 0 = document title, 1 = "##", 2 = "###"
    text: str


@dataclass
class Paragraph:
    text: str


@dataclass
class ListBlock:
    ordered: bool
    items: list[str] = field(default_factory=list)


@dataclass
class Table:
    rows: list[list[str]]  # the first row is the header


@dataclass
class Figure:
    alt: str
    name: str


@dataclass
class PageBreak:
    pass


Block = Heading | Paragraph | ListBlock | Table | Figure | PageBreak

_FIGURE_RE = re.compile(r"^!\[(?P<alt>[^\]]+)\]\(figure:(?P<name>[a-z0-9-]+)\)$")
_ORDERED_RE = re.compile(r"^\d+\.\s+(?P<text>.+)$")


def parse_source(text: str) -> list[Block]:
    """Split a source text into blocks; blank lines end paragraphs, lists and tables."""
    blocks: list[Block] = []
    paragraph: list[str] = []

    def flush_paragraph() -> None:
        if paragraph:
            blocks.append(Paragraph(" ".join(paragraph)))
            paragraph.clear()

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            flush_paragraph()
            continue
        if line == "<<<pagebreak>>>":
            flush_paragraph()
            blocks.append(PageBreak())
            continue
        heading = re.match(r"^(#{1,3})\s+(.+)$", line)
        if heading:
            flush_paragraph()
            blocks.append(Heading(len(heading.group(1)) - 1, heading.group(2)))
            continue
        figure = _FIGURE_RE.match(line)
        if figure:
            flush_paragraph()
            blocks.append(Figure(figure.group("alt"), figure.group("name")))
            continue
        if line.startswith("|"):
            flush_paragraph()
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            if all(re.fullmatch(r":?-{3,}:?", cell) for cell in cells):
                continue  # the header separator row
            if blocks and isinstance(blocks[-1], Table):
                blocks[-1].rows.append(cells)
            else:
                blocks.append(Table([cells]))
            continue
        ordered = _ORDERED_RE.match(line)
        if line.startswith("- ") or ordered:
            flush_paragraph()
            is_ordered = ordered is not None
            item = ordered.group("text") if ordered else line[2:]
            last = blocks[-1] if blocks else None
            if isinstance(last, ListBlock) and last.ordered == is_ordered:
                last.items.append(item)
            else:
                blocks.append(ListBlock(is_ordered, [item]))
            continue
        paragraph.append(line)
    flush_paragraph()
    return blocks


def split_bold(text: str) -> list[tuple[str, bool]]:
    """``"a **b** c"`` -> ``[("a ", False), ("b", True), (" c", False)]``."""
    parts = re.split(r"(\*\*[^*]+\*\*)", text)
    return [
        (part[2:-2], True) if part.startswith("**") and part.endswith("**") else (part, False) for part in parts if part
    ]


def plain(text: str) -> str:
    return "".join(part for part, _ in split_bold(text))
