"""Build the demo's Word and PDF documents from the Markdown-ish sources in ``sources/``.

The seed ingests real binary files so that the Word and PDF readers, figure
extraction and the viewer are exercised on the demo itself. The files are
generated, never checked in: ``build_docx(path)`` and ``build_pdf(path)`` write
byte-identical output on every run (fixed metadata, fixed zip timestamps,
deterministic PNG figures drawn with Pillow in ``figures.py``). The source
format and its parser are in ``source_format.py``.
"""

from __future__ import annotations

import copy
import io
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from PIL import Image

from portal.demo.figures import FIGURES
from portal.demo.source_format import (
    Figure,
    Heading,
    ListBlock,
    PageBreak,
    Paragraph,
    Table,
    parse_source,
    plain,
    split_bold,
)

SOURCES_DIR = Path(__file__).resolve().parent / "sources"
STYLE_GUIDE_SOURCE = SOURCES_DIR / "ops-writing-style-guide.md"
WORKED_EXAMPLES_SOURCE = SOURCES_DIR / "worked-examples-interface-incident-triage.md"

# Every generated file carries this moment as its creation and modification time.
FIXED_TIME = datetime(2026, 1, 5, 9, 0, 0, tzinfo=UTC)
FIXED_ZIP_TIME = (2026, 1, 5, 9, 0, 0)
AUTHOR = "Cairn demo content"

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
                    run = cell.paragraphs[0].add_run(plain(text))
                    run.bold = row_index == 0
        elif isinstance(block, Figure):
            document.add_picture(io.BytesIO(FIGURES[block.name]()), width=Inches(6))
            doc_pr = document.inline_shapes[-1]._inline.docPr
            doc_pr.set("descr", block.alt)
            doc_pr.set("title", block.alt.split(":")[0])
        # Page breaks are a PDF concern; the Word file flows.

    core = document.core_properties
    core.title = plain(next(b.text for b in blocks if isinstance(b, Heading)))
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
    for part, bold in split_bold(text):
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
    title = plain(next(b.text for b in blocks if isinstance(b, Heading)))

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
                        cells.cell(plain(text))
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
