"""Small upload files generated on the fly for the ingest tests and the PDF benchmark.

A tiny PDF writer (text in Helvetica, optional RGB or JPEG image objects), Word
files through python-docx, and images through Pillow. Nothing is downloaded.
"""

from __future__ import annotations

import io
import random
import zlib
from dataclasses import dataclass, field

from PIL import Image

# --- images -------------------------------------------------------------------


def image_bytes(width: int, height: int, fmt: str = "PNG", color=(200, 40, 40), **save) -> bytes:
    image = Image.new("RGB", (width, height), color)
    out = io.BytesIO()
    image.save(out, fmt, **save)
    return out.getvalue()


def exif_with_orientation(orientation: int = 1, comment: str = "secret camera serial 1234") -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation  # Orientation
    exif[0x010E] = comment  # ImageDescription
    return exif.tobytes()


def animated_bytes(fmt: str = "GIF", size=(64, 64)) -> bytes:
    frames = [Image.new("RGB", size, color) for color in ((255, 0, 0), (0, 0, 255))]
    out = io.BytesIO()
    frames[0].save(out, fmt, save_all=True, append_images=frames[1:], duration=100, loop=0)
    return out.getvalue()


def riff_chunks(webp: bytes) -> list[bytes]:
    """The chunk ids of a WebP (RIFF) file, e.g. [b"VP8L"] or [b"VP8X", b"ICCP", …]."""
    assert webp[:4] == b"RIFF" and webp[8:12] == b"WEBP"
    chunks, offset = [], 12
    while offset + 8 <= len(webp):
        chunk_id = webp[offset : offset + 4]
        size = int.from_bytes(webp[offset + 4 : offset + 8], "little")
        chunks.append(chunk_id)
        offset += 8 + size + (size & 1)
    return chunks


# --- PDF ----------------------------------------------------------------------


@dataclass
class PdfImage:
    width: int
    height: int
    data: bytes  # raw RGB samples, or JPEG bytes when jpeg=True
    jpeg: bool = False


@dataclass
class PdfPage:
    lines: list[str] = field(default_factory=list)
    images: list[PdfImage] = field(default_factory=list)
    word_objects: bool = False  # draw each word on its own, as typesetters with kerning do


def rgb_image(width: int, height: int, color=(30, 120, 200)) -> PdfImage:
    return PdfImage(width, height, bytes(color) * (width * height))


def pdf_bytes(pages: list[PdfPage]) -> bytes:
    """A valid PDF 1.4: one Helvetica text line per entry, images drawn below the text."""
    objects: dict[int, bytes] = {}
    font_id, pages_id = 3, 2
    next_id = 4
    kids = []
    for page in pages:
        page_id, content_id = next_id, next_id + 1
        next_id += 2
        resources = []
        drawing = []
        for number, image in enumerate(page.images):
            image_id = next_id
            next_id += 1
            data = image.data if image.jpeg else zlib.compress(image.data)
            filter_name = "/DCTDecode" if image.jpeg else "/FlateDecode"
            objects[image_id] = _stream(
                f"/Type /XObject /Subtype /Image /Width {image.width} /Height {image.height} "
                f"/ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter {filter_name}",
                data,
            )
            resources.append(f"/Im{number} {image_id} 0 R")
            height = 200 * image.height / image.width  # drawn at the image's own aspect ratio
            drawing.append(f"q 200 0 0 {height:.2f} {50 + 10 * number} {100 + 10 * number} cm /Im{number} Do Q")
        text = ["BT /F1 10 Tf 12 TL 40 800 Td"]
        for line in page.lines:
            if page.word_objects:
                words = [f"[({_pdf_string(word)}) -250]" for word in line.split()]
                text.append(" TJ ".join(words) + " TJ T*")
            else:
                text.append(f"({_pdf_string(line)}) Tj T*")
        text.append("ET")
        content = "\n".join(text + drawing).encode("latin-1", "replace")
        objects[content_id] = _stream("/Filter /FlateDecode", zlib.compress(content))
        xobjects = f" /XObject << {' '.join(resources)} >>" if resources else ""
        objects[page_id] = (
            f"<< /Type /Page /Parent {pages_id} 0 R /MediaBox [0 0 595 842] "
            f"/Resources << /Font << /F1 {font_id} 0 R >>{xobjects} >> /Contents {content_id} 0 R >>"
        ).encode()
        kids.append(f"{page_id} 0 R")
    objects[1] = f"<< /Type /Catalog /Pages {pages_id} 0 R >>".encode()
    objects[pages_id] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>".encode()
    objects[font_id] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for object_id in sorted(objects):
        offsets[object_id] = len(out)
        out += f"{object_id} 0 obj\n".encode() + objects[object_id] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    for object_id in range(1, size):
        out += f"{offsets[object_id]:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _stream(dictionary: str, data: bytes) -> bytes:
    return f"<< {dictionary} /Length {len(data)} >>\nstream\n".encode() + data + b"\nendstream"


def _pdf_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


WORDS = (
    "system landscape transport request client posting period batch job interface queue "
    "release downtime restart checklist kernel patch database backup archive monitor alert "
    "incident problem change board minute calendar runbook procedure operator shift handover"
).split()


def text_lines(count: int, width: int = 90, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        words, length = [], 0
        while length < width - 12:
            word = rng.choice(WORDS)
            words.append(word)
            length += len(word) + 1
        lines.append(" ".join(words).capitalize() + ".")
    return lines


def text_pdf(pages: int, lines_per_page: int = 15, width: int = 85, word_objects: bool = False) -> bytes:
    """A text-only PDF: about lines_per_page × width characters on every page."""
    return pdf_bytes(
        [PdfPage(text_lines(lines_per_page, width, seed=n), word_objects=word_objects) for n in range(pages)]
    )


# --- Word ---------------------------------------------------------------------


def docx_bytes(build) -> bytes:
    """A .docx made by ``build(document)`` with python-docx."""
    from docx import Document

    document = Document()
    build(document)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def add_picture(document, data: bytes, alt: str | None = None, paragraph=None):
    """Insert a picture (in its own paragraph unless one is given) with optional alt text."""
    from docx.shared import Pt

    run = (paragraph or document.add_paragraph()).add_run()
    shape = run.add_picture(io.BytesIO(data), width=Pt(72))
    if alt is not None:
        shape._inline.docPr.set("descr", alt)
    return shape


def add_hyperlink(paragraph, text: str, url: str):
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    relationship_id = paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    hyperlink = OxmlElement("w:hyperlink")
    hyperlink.set(qn("r:id"), relationship_id)
    run = OxmlElement("w:r")
    text_element = OxmlElement("w:t")
    text_element.text = text
    run.append(text_element)
    hyperlink.append(run)
    paragraph._p.append(hyperlink)


def replace_part(docx: bytes, part: str, data: bytes) -> bytes:
    """The same .docx with one zip member's bytes replaced (e.g. a picture by a TIFF)."""
    import zipfile

    source = zipfile.ZipFile(io.BytesIO(docx))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info.filename, data if info.filename == part else source.read(info))
    return out.getvalue()


def encrypted_docx(plain: bytes, password: str = "Passw0rd!") -> bytes:
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    OOXMLFile(io.BytesIO(plain)).encrypt(password, out)
    return out.getvalue()


def mixed_images_docx() -> bytes:
    """A Word file with four kept raster pictures, each with alt text (the suite's own stand-in
    for the shared synthetic-mixed-image-formats.docx)."""

    def build(document):
        document.add_heading("Mixed image formats", level=1)
        document.add_paragraph(
            "This document embeds four pictures, each with alt text. Raster PNG, JPEG and GIF pictures are kept."
        )
        for fmt, color, alt in (
            ("PNG", (220, 40, 40), "Alt: red PNG rectangle"),
            ("JPEG", (40, 60, 220), "Alt: blue JPEG rectangle"),
            ("GIF", (230, 210, 40), "Alt: yellow GIF rectangle"),
            ("PNG", (140, 50, 200), "Alt: purple PNG rectangle"),
        ):
            add_picture(document, image_bytes(96, 64, fmt, color=color), alt=alt)
        document.add_paragraph("End of document.")

    return docx_bytes(build)
