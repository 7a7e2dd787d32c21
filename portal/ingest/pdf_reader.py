"""PDF files read page by page with PDFium (pypdfium2).

Each page's text starts with a line ``Page N``, the page's own text after it kept from reading as a
marker (``markers.neutralise_markers``: a footer ``Page 2`` is text); a placeholder for each image
object drawn on the page (form XObjects included) follows the page's text, in
the order the page draws them, labelled ``Page N``. A PDF that opens with the
empty password (owner-password-only protection) is read like any other.
"""

import re

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from portal.controls import readable_text
from portal.ingest import limits
from portal.ingest.figures import placeholder
from portal.ingest.images import (
    ImageBudget,
    ImageOutcome,
    NotKept,
    Reading,
    check_dimensions,
    prepare_pil_image,
)
from portal.ingest.markers import neutralise_markers, page_line

WHAT = "PDF"
_NEEDS_PASSWORD = (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY)
_IMAGE_OBJECTS = [pdfium_c.FPDF_PAGEOBJ_IMAGE]
_MAX_FORM_DEPTH = 15  # as PdfPage.get_objects, which the picture phase uses


def read_pdf(data: bytes) -> Reading:
    """Read a PDF's text with image placeholders; raise Refused when it cannot be."""
    try:
        document = pdfium.PdfDocument(data)  # no password: owner-only protection opens
    except pdfium.PdfiumError as error:
        if error.err_code in _NEEDS_PASSWORD:
            raise limits.refuse_encrypted(WHAT) from None
        raise limits.refuse_damaged(WHAT) from None
    try:
        return _read_pages(document)
    except BaseException:
        document.close()
        raise


def _read_pages(document: pdfium.PdfDocument) -> Reading:
    page_count = len(document)
    if page_count > limits.MAX_PDF_PAGES:
        raise limits.refuse_too_many_pages(page_count)
    sections: list[str] = []
    labels: list[str] = []
    pages_with_images: list[int] = []
    characters = 0
    for index in range(page_count):
        text, image_count = _page_text_and_image_count(document, index)
        characters += len(text)
        if characters > limits.MAX_TEXT_CHARS:  # stop reading: the rest cannot change the answer
            raise limits.refuse_too_many_chars(characters, at_least=True)
        line = page_line(index + 1)
        section = [line]
        if text:
            section.append(neutralise_markers(text))
        for _ in range(image_count):
            section.append(placeholder(len(labels)))
            labels.append(line)  # a PDF's images have no alt text: each is labelled by its page line
        if image_count:
            pages_with_images.append(index)
        sections.append("\n\n".join(section))
    if characters == 0:
        raise limits.refuse_scanned_pdf() if labels else limits.refuse_empty()
    return Reading(
        text="\n\n".join(sections),
        labels=labels,
        pages=page_count,
        title=_metadata_title(document),
        images=lambda budget: _prepare_images(document, pages_with_images, budget),
        close=document.close,
    )


# What PDF producers write when the author gave no title: "Untitled", "Microsoft Word - report.docx",
# or the name of the file the PDF was made from ("zen_of_python.txt").
_PLACEHOLDER_TITLE = re.compile(
    r"^(untitled|microsoft word)|\.(txt|md|pdf|docx?|odt|rtf|tex|dvi|e?ps|html?|xlsx?|pptx?|indd|qxd)$",
    re.IGNORECASE,
)


def _metadata_title(document: pdfium.PdfDocument) -> str:
    """The Title of the PDF's document information, if it has a usable one; text read out of the file like
    its pages, so without the controls they lose (``strip_control_characters``)."""
    try:
        title = " ".join(readable_text(document.get_metadata_value("Title") or "").split())
    except Exception:  # metadata is optional; a broken entry must not refuse the file
        return ""
    usable = 2 < len(title) <= 255 and not _PLACEHOLDER_TITLE.search(title)
    return title if usable else ""


def _page_text_and_image_count(document: pdfium.PdfDocument, index: int) -> tuple[str, int]:
    try:
        page = document[index]
    except pdfium.PdfiumError:
        raise limits.refuse_damaged(WHAT, f"page {index + 1} cannot be loaded") from None
    try:
        textpage = page.get_textpage()
        try:
            raw = textpage.get_text_range()
        finally:
            textpage.close()
        images = _count_images(page.raw)
    except pdfium.PdfiumError:
        raise limits.refuse_damaged(WHAT, f"page {index + 1} cannot be read") from None
    finally:
        page.close()
    return clean_page_text(raw), images


def _count_images(container, level: int = 0, form: bool = False) -> int:
    """Image objects drawn by a page or form XObject, counted the way ``get_objects`` walks.

    Calls PDFium directly: wrapping every text object in Python took a third of
    the reading time on text-heavy pages.
    """
    count_objects = pdfium_c.FPDFFormObj_CountObjects if form else pdfium_c.FPDFPage_CountObjects
    get_object = pdfium_c.FPDFFormObj_GetObject if form else pdfium_c.FPDFPage_GetObject
    images = 0
    for index in range(max(0, count_objects(container))):
        item = get_object(container, index)
        kind = pdfium_c.FPDFPageObj_GetType(item) if item else None
        if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            images += 1
        elif kind == pdfium_c.FPDF_PAGEOBJ_FORM and level < _MAX_FORM_DEPTH - 1:
            images += _count_images(item, level + 1, form=True)
    return images


def clean_page_text(raw: str) -> str:
    """Page text with plain newlines, no control characters, no trailing blanks."""
    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    text = readable_text(text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


def _prepare_images(document: pdfium.PdfDocument, pages: list[int], budget: ImageBudget):
    """Yield (slot, PreparedImage | NotKept) for every image object, in page order."""
    slot = 0
    for index in pages:
        page = document[index]
        try:
            for image in page.get_objects(filter=_IMAGE_OBJECTS, max_depth=_MAX_FORM_DEPTH):
                yield slot, _prepare_image(image, budget)
                slot += 1
        finally:
            page.close()


def _prepare_image(image: pdfium.PdfImage, budget: ImageBudget) -> ImageOutcome:
    try:
        budget.check_time_and_count()
        width, height = image.get_px_size()
        check_dimensions(width, height)
        budget.charge(pdfium_c.FPDFImageObj_GetImageDataRaw(image, None, 0))
        bitmap = _drawn_bitmap(image)
        # pdfium's own buffer, freed on close: safe, since the prepared image is encoded bytes by then (pypdfium2
        # warns on every such close, which filled the server log)
        bitmap.warn_on_close = False
        try:
            prepared = prepare_pil_image(bitmap.to_pil())
        finally:
            bitmap.close()
    except NotKept as not_kept:
        return not_kept
    except (pdfium.PdfiumError, OSError, ValueError, MemoryError):
        return NotKept("decode")
    budget.record_kept()
    return prepared


def _drawn_bitmap(image: pdfium.PdfImage) -> pdfium.PdfBitmap:
    """The image as the page draws it (soft mask and orientation applied), at its own resolution."""
    try:
        return image.get_bitmap(render=True)
    except pdfium.PdfiumError:
        return image.get_bitmap(render=False)
