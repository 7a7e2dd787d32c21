"""Build the demo's Word and PDF documents from the Markdown-ish sources in ``sources/``.

The seed ingests real binary files so that the Word and PDF readers, figure
extraction and the viewer are exercised on the demo itself. The files are
generated, never checked in: ``build_docx(path)`` and ``build_pdf(path)`` write
byte-identical output on every run (fixed metadata, fixed zip timestamps,
deterministic PNG figures drawn with Pillow).

Source format, one block per line or group of lines:

``# Title`` · ``## Heading`` · ``### Heading`` · ``- bullet`` · ``1. step`` ·
``| table | rows |`` (the second row is the separator) ·
``![alt text](figure:name)`` (a figure drawn by ``FIGURES[name]``) ·
``<<<pagebreak>>>`` (PDF only) · anything else is a paragraph; ``**bold**`` is
honoured inside paragraphs and list items.
"""

from __future__ import annotations

import copy
import io
import re
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from PIL import Image, ImageDraw, ImageFont

SOURCES_DIR = Path(__file__).resolve().parent / "sources"
STYLE_GUIDE_SOURCE = SOURCES_DIR / "ops-writing-style-guide.md"
WORKED_EXAMPLES_SOURCE = SOURCES_DIR / "worked-examples-interface-incident-triage.md"

# Every generated file carries this moment as its creation and modification time.
FIXED_TIME = datetime(2026, 1, 5, 9, 0, 0, tzinfo=timezone.utc)
FIXED_ZIP_TIME = (2026, 1, 5, 9, 0, 0)
AUTHOR = "Cairn demo content"

# ---------------------------------------------------------------------------
# Parsing the Markdown-ish source
# ---------------------------------------------------------------------------


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


def _split_bold(text: str) -> list[tuple[str, bool]]:
    """``"a **b** c"`` -> ``[("a ", False), ("b", True), (" c", False)]``."""
    parts = re.split(r"(\*\*[^*]+\*\*)", text)
    return [
        (part[2:-2], True) if part.startswith("**") and part.endswith("**") else (part, False)
        for part in parts
        if part
    ]


def _plain(text: str) -> str:
    return "".join(part for part, _ in _split_bold(text))


# ---------------------------------------------------------------------------
# Figures: simple diagrams drawn with Pillow
# ---------------------------------------------------------------------------

INK = (34, 45, 60)
MUTED = (90, 102, 120)
BLUE = (214, 228, 245)
GREEN = (218, 238, 220)
AMBER = (250, 232, 200)
GREY = (236, 238, 242)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _box(draw: ImageDraw.ImageDraw, xy: tuple[int, int, int, int], text: str, fill, size: int = 20) -> None:
    draw.rounded_rectangle(xy, radius=12, fill=fill, outline=INK, width=3)
    x0, y0, x1, y1 = xy
    draw.multiline_text(
        ((x0 + x1) / 2, (y0 + y1) / 2), text, font=_font(size), fill=INK, anchor="mm", align="center", spacing=6
    )


def _arrow(draw: ImageDraw.ImageDraw, start: tuple[int, int], end: tuple[int, int], label: str = "") -> None:
    draw.line([start, end], fill=INK, width=3)
    (x0, y0), (x1, y1) = start, end
    length = max(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5, 1)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    head = 14
    left = (x1 - head * ux + head * 0.5 * uy, y1 - head * uy - head * 0.5 * ux)
    right = (x1 - head * ux - head * 0.5 * uy, y1 - head * uy + head * 0.5 * ux)
    draw.polygon([end, left, right], fill=INK)
    if label:
        position = ((x0 + x1) / 2, (y0 + y1) / 2)
        left_, top_, right_, bottom_ = draw.textbbox(position, label, font=_font(17), anchor="mm")
        draw.rectangle((left_ - 6, top_ - 4, right_ + 6, bottom_ + 4), fill="white")
        draw.text(position, label, font=_font(17), fill=MUTED, anchor="mm")


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()


def draw_document_anatomy() -> bytes:
    """Figure of the style guide: the five parts of an operations document."""
    image = Image.new("RGB", (900, 600), "white")
    draw = ImageDraw.Draw(image)
    draw.text((450, 34), "Anatomy of an operations document", font=_font(26), fill=INK, anchor="mm")
    parts = [
        ("# Title line\nsubject and identifier", BLUE, "find"),
        ("Header table\nids, dates, systems, roles", GREY, "filter"),
        ("Summary\nreadable on its own", GREEN, "decide"),
        ("## Sections\npredictable headings", GREY, "read"),
        ("Keywords: exact search terms", AMBER, "search"),
    ]
    top, height, gap = 70, 80, 25
    for index, (text, fill, purpose) in enumerate(parts):
        y0 = top + index * (height + gap)
        _box(draw, (80, y0, 560, y0 + height), text, fill)
        draw.text((610, y0 + height / 2), f"reader can {purpose}", font=_font(20), fill=MUTED, anchor="lm")
        _arrow(draw, (600, y0 + height / 2), (572, y0 + height / 2))
        if index:
            _arrow(draw, (320, y0 - gap), (320, y0 - 2))
    return _png(image)


def draw_message_path() -> bytes:
    """Figure 1 of the worked examples: the layers an outbound message passes."""
    image = Image.new("RGB", (1200, 400), "white")
    draw = ImageDraw.Draw(image)
    draw.text((600, 34), "Path of an outbound message and where to check it", font=_font(26), fill=INK, anchor="mm")
    steps = [
        ("Sending\napplication", "output status", BLUE),
        ("IDoc layer\nWE02 / BD87", "status 30 or 03?", GREY),
        ("tRFC layer\nSM58 / SM59", "error text?", AMBER),
        ("Middleware\nmessage monitor", "channel error?", GREY),
        ("Partner", "received?", GREEN),
    ]
    width, gap, y0, y1 = 200, 40, 110, 250
    for index, (text, question, fill) in enumerate(steps):
        x0 = 30 + index * (width + gap)
        _box(draw, (x0, y0, x0 + width, y1), text, fill, size=21)
        draw.text((x0 + width / 2, y1 + 40), question, font=_font(19), fill=MUTED, anchor="mm")
        if index:
            _arrow(draw, (x0 - gap + 2, (y0 + y1) // 2), (x0 - 2, (y0 + y1) // 2))
    draw.text((600, 360), "Triage follows the same order: start where the message was created.", font=_font(19),
              fill=INK, anchor="mm")
    return _png(image)


def draw_backlog_chart() -> bytes:
    """Figure 2 of the worked examples: inbound IDocs by status before and after processing."""
    image = Image.new("RGB", (1000, 560), "white")
    draw = ImageDraw.Draw(image)
    draw.text((500, 34), "Inbound confirmation IDocs by status", font=_font(26), fill=INK, anchor="mm")
    origin_x, origin_y, top_y = 120, 470, 90
    draw.line([(origin_x, top_y), (origin_x, origin_y)], fill=INK, width=3)
    draw.line([(origin_x, origin_y), (960, origin_y)], fill=INK, width=3)
    maximum = 10_000
    for tick in range(0, maximum + 1, 2_000):
        y = origin_y - (origin_y - top_y) * tick / maximum
        draw.line([(origin_x - 8, y), (origin_x, y)], fill=INK, width=2)
        draw.text((origin_x - 14, y), f"{tick:,}", font=_font(16), fill=MUTED, anchor="rm")
    groups = [("status 64\nready", 9_000, 0), ("status 53\nposted", 0, 8_760), ("status 51\nerror", 0, 240)]
    for index, (label, before, after) in enumerate(groups):
        x = origin_x + 60 + index * 270
        for offset, value, fill in ((0, before, GREY), (95, after, GREEN)):
            height = (origin_y - top_y) * value / maximum
            draw.rectangle([x + offset, origin_y - height, x + offset + 80, origin_y], fill=fill, outline=INK, width=2)
            draw.text((x + offset + 40, origin_y - height - 14), f"{value:,}", font=_font(16), fill=INK, anchor="mm")
        draw.multiline_text((x + 88, origin_y + 38), label, font=_font(18), fill=INK, anchor="mm", align="center")
    draw.rectangle([720, 90, 745, 110], fill=GREY, outline=INK)
    draw.text((755, 100), "before", font=_font(18), fill=INK, anchor="lm")
    draw.rectangle([830, 90, 855, 110], fill=GREEN, outline=INK)
    draw.text((865, 100), "after", font=_font(18), fill=INK, anchor="lm")
    return _png(image)


def draw_triage_flow() -> bytes:
    """Figure 3 of the worked examples: decision flow when a partner received nothing."""
    image = Image.new("RGB", (1200, 720), "white")
    draw = ImageDraw.Draw(image)
    draw.text((600, 30), "A partner received nothing: where to look", font=_font(26), fill=INK, anchor="mm")
    _box(draw, (450, 60, 750, 120), "Partner received nothing", AMBER)
    _box(draw, (470, 170, 730, 230), "IDoc status?", GREY)
    _arrow(draw, (600, 120), (600, 168))
    _box(draw, (40, 300, 340, 380), "Sending job and variant\nrb-idoc-backlog", BLUE, size=19)
    _box(draw, (450, 300, 750, 380), "Port, partner profile\nrb-idoc-backlog", BLUE, size=19)
    _box(draw, (860, 300, 1160, 380), "SM58: error text?", GREY)
    _arrow(draw, (520, 230), (190, 298), "30")
    _arrow(draw, (600, 230), (600, 298), "02 / 29")
    _arrow(draw, (680, 230), (1010, 298), "03")
    _box(draw, (40, 500, 360, 580), "SMGW registration\nrb-rfc-destination-failures", BLUE, size=19)
    _box(draw, (440, 500, 760, 580), "Certificates, trusted CAs\nrb-certificate-expiry", BLUE, size=19)
    _box(draw, (840, 500, 1160, 580), "Middleware channel log\nmessage monitor", BLUE, size=19)
    _arrow(draw, (930, 380), (200, 498), "not registered")
    _arrow(draw, (1010, 380), (600, 498), "SSL / PKIX")
    _arrow(draw, (1090, 380), (1000, 498), "empty")
    draw.text((600, 650), "Resend only after the cause is fixed, in order, and count what arrived.", font=_font(19),
              fill=INK, anchor="mm")
    return _png(image)


FIGURES: dict[str, Callable[[], bytes]] = {
    "document-anatomy": draw_document_anatomy,
    "message-path": draw_message_path,
    "backlog-chart": draw_backlog_chart,
    "triage-flow": draw_triage_flow,
}

# ---------------------------------------------------------------------------
# Word
# ---------------------------------------------------------------------------


def build_docx(path: str | Path) -> Path:
    """Write the style guide as a Word file: headings, lists, tables, one figure with alt text."""
    from docx import Document
    from docx.shared import Inches, Pt

    path = Path(path)
    blocks = parse_source(STYLE_GUIDE_SOURCE.read_text(encoding="utf-8"))
    document = Document()
    document.styles["Normal"].font.size = Pt(11)

    for block in blocks:
        if isinstance(block, Heading):
            document.add_heading(block.text, level=block.level)
        elif isinstance(block, Paragraph):
            _add_runs(document.add_paragraph(), block.text)
        elif isinstance(block, ListBlock):
            style = "List Number" if block.ordered else "List Bullet"
            num_id = _new_numbering(document) if block.ordered else None
            for item in block.items:
                paragraph = document.add_paragraph(style=style)
                if num_id is not None:
                    _set_numbering(paragraph, num_id)
                _add_runs(paragraph, item)
        elif isinstance(block, Table):
            table = document.add_table(rows=0, cols=len(block.rows[0]))
            table.style = "Table Grid"
            for row_index, row in enumerate(block.rows):
                cells = table.add_row().cells
                for cell, text in zip(cells, row):
                    run = cell.paragraphs[0].add_run(_plain(text))
                    run.bold = row_index == 0
        elif isinstance(block, Figure):
            document.add_picture(io.BytesIO(FIGURES[block.name]()), width=Inches(6))
            doc_pr = document.inline_shapes[-1]._inline.docPr
            doc_pr.set("descr", block.alt)
            doc_pr.set("title", block.alt.split(":")[0])
        # Page breaks are a PDF concern; the Word file flows.

    core = document.core_properties
    core.title = _plain(next(b.text for b in blocks if isinstance(b, Heading)))
    core.author = AUTHOR
    core.last_modified_by = AUTHOR
    core.subject = "Generic house style for operations documents"
    core.keywords = "style guide, operations documents"
    core.created = FIXED_TIME.replace(tzinfo=None)
    core.modified = FIXED_TIME.replace(tzinfo=None)
    core.last_printed = FIXED_TIME.replace(tzinfo=None)
    core.revision = 1

    buffer = io.BytesIO()
    document.save(buffer)
    path.write_bytes(_normalise_zip(buffer.getvalue()))
    return path


def _add_runs(paragraph, text: str) -> None:
    for part, bold in _split_bold(text):
        paragraph.add_run(part).bold = bold


def _new_numbering(document) -> int:
    """A fresh numbering instance for "List Number", so each ordered list starts at 1."""
    from docx.oxml.ns import qn

    numbering = document.part.numbering_part.element
    style = document.styles["List Number"].element
    base_num_id = int(style.pPr.numPr.numId.val)
    base = next(num for num in numbering.findall(qn("w:num")) if int(num.get(qn("w:numId"))) == base_num_id)
    abstract_id = base.find(qn("w:abstractNumId")).get(qn("w:val"))
    new_id = max(int(num.get(qn("w:numId"))) for num in numbering.findall(qn("w:num"))) + 1
    num = copy.deepcopy(base)
    for child in list(num):
        num.remove(child)
    num.set(qn("w:numId"), str(new_id))
    abstract = num.makeelement(qn("w:abstractNumId"), {qn("w:val"): abstract_id})
    override = num.makeelement(qn("w:lvlOverride"), {qn("w:ilvl"): "0"})
    override.append(num.makeelement(qn("w:startOverride"), {qn("w:val"): "1"}))
    num.append(abstract)
    num.append(override)
    numbering.append(num)
    return new_id


def _set_numbering(paragraph, num_id: int) -> None:
    from docx.oxml.ns import qn

    p_pr = paragraph._p.get_or_add_pPr()
    num_pr = p_pr.makeelement(qn("w:numPr"), {})
    ilvl = num_pr.makeelement(qn("w:ilvl"), {qn("w:val"): "0"})
    num = num_pr.makeelement(qn("w:numId"), {qn("w:val"): str(num_id)})
    num_pr.append(ilvl)
    num_pr.append(num)
    p_pr.append(num_pr)


def _normalise_zip(data: bytes) -> bytes:
    """Rewrite a zip package with fixed timestamps so the bytes do not depend on the clock."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            entry = zipfile.ZipInfo(info.filename, date_time=FIXED_ZIP_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            target.writestr(entry, source.read(info.filename))
    return out.getvalue()


# ---------------------------------------------------------------------------
# PDF
# ---------------------------------------------------------------------------


def build_pdf(path: str | Path) -> Path:
    """Write the worked examples as a several-page PDF with text on every page and three figures."""
    from fpdf import FPDF
    from fpdf.enums import XPos, YPos

    path = Path(path)
    blocks = parse_source(WORKED_EXAMPLES_SOURCE.read_text(encoding="utf-8"))
    title = _plain(next(b.text for b in blocks if isinstance(b, Heading)))

    pdf = FPDF(orientation="portrait", unit="mm", format="A4")
    pdf.set_creation_date(FIXED_TIME)
    pdf.set_title(title)
    pdf.set_author(AUTHOR)
    pdf.set_creator(AUTHOR)
    pdf.set_subject("Generic worked examples for SAP interface incident triage")
    pdf.set_keywords("worked examples, interface incident, triage")
    pdf.set_margins(left=20, top=18, right=20)
    pdf.set_auto_page_break(auto=True, margin=18)
    pdf.add_page()
    width = pdf.w - pdf.l_margin - pdf.r_margin
    next_line = {"new_x": XPos.LMARGIN, "new_y": YPos.NEXT}

    for block in blocks:
        if isinstance(block, Heading):
            size = {0: 18, 1: 14, 2: 12}[block.level]
            pdf.set_font("Helvetica", "B", size)
            pdf.ln(2 if block.level else 0)
            pdf.multi_cell(width, size * 0.5, block.text, **next_line)
            pdf.ln(2)
        elif isinstance(block, Paragraph) and block.text.startswith("Keywords:"):
            # The keyword line must stay one line of text, so the font shrinks until it fits.
            size = 10.5
            pdf.set_font("Helvetica", "", size)
            while pdf.get_string_width(block.text) > width and size > 6:
                size -= 0.5
                pdf.set_font("Helvetica", "", size)
            pdf.ln(2)
            pdf.cell(width, 5.4, block.text, **next_line)
        elif isinstance(block, Paragraph):
            pdf.set_font("Helvetica", "", 10.5)
            pdf.multi_cell(width, 5.4, block.text, markdown=True, **next_line)
            pdf.ln(2)
        elif isinstance(block, ListBlock):
            pdf.set_font("Helvetica", "", 10.5)
            for number, item in enumerate(block.items, start=1):
                marker = f"{number}." if block.ordered else "-"
                pdf.set_x(pdf.l_margin + 2)
                pdf.cell(6, 5.4, marker)
                pdf.multi_cell(width - 8, 5.4, item, markdown=True, **next_line)
                pdf.ln(0.8)
            pdf.ln(1.5)
        elif isinstance(block, Table):
            pdf.set_font("Helvetica", "", 9.5)
            with pdf.table(width=width, line_height=5.2, text_align="LEFT", first_row_as_headings=True) as table:
                for row in block.rows:
                    cells = table.row()
                    for text in row:
                        cells.cell(_plain(text))
            pdf.ln(3)
        elif isinstance(block, Figure):
            png = FIGURES[block.name]()
            with Image.open(io.BytesIO(png)) as image:
                height = width * image.height / image.width
            if pdf.get_y() + height > pdf.h - pdf.b_margin:
                pdf.add_page()
            pdf.image(io.BytesIO(png), x=pdf.l_margin, w=width, h=height, alt_text=block.alt)
            pdf.ln(3)
        elif isinstance(block, PageBreak):
            pdf.add_page()

    path.write_bytes(bytes(pdf.output()))
    return path


def build_all(directory: str | Path) -> dict[str, Path]:
    """Build both files into ``directory``; returns the paths by generator name."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    return {
        "build_docx": build_docx(directory / "ops-writing-style-guide.docx"),
        "build_pdf": build_pdf(directory / "worked-examples-interface-incident-triage.pdf"),
    }


if __name__ == "__main__":  # pragma: no cover - manual preview
    import sys

    for name, built in build_all(sys.argv[1] if len(sys.argv) > 1 else ".").items():
        print(f"{name}: {built}")
