"""Every limit a user can meet, its human-readable form, and the one place a refusal is worded.

Callers raise what these functions return: ``raise refuse_too_large(size)``.
Each message names the limit or reason it hit and says what to do next.
Nothing else writes a limit's number: templates get ``limits()`` (a context
processor in portal/web.py), cairn.js reads the messages it shows from the page,
and tests/test_limits.py fails on a limit written out anywhere else.
"""

from dataclasses import dataclass

from portal.errors import Refused

# Formats (SPEC 3).
MAX_FILE_BYTES = 4 * 1024 * 1024  # "4 MB": binary megabytes, 4,194,304 bytes
# Without JavaScript a browser sends every chosen file in one request (cairn.js sends one file per request).
MAX_BATCH_BYTES = 16 * 1024 * 1024  # the files of one upload request together
# A request over MAX_BATCH_BYTES is read this far, keeping nothing, to name its files and their sizes.
MAX_LISTED_BATCH_BYTES = 16 * MAX_BATCH_BYTES
REQUEST_OVERHEAD_BYTES = 64 * 1024  # the form around the files: part headers, the CSRF token
MAX_FORM_PARTS = 1_000  # fields and files in one posted form (Werkzeug's default, stated here)
MAX_TEXT_CHARS = 400_000
MAX_PDF_PAGES = 300
READ_SECONDS = 15.0  # reading the text of a Word, PDF or image file
IMAGE_SECONDS = 20.0  # preparing its images, counted from the end of the text

# Images (SPEC 5).
MAX_IMAGES = 40
MAX_IMAGE_PIXELS = 8_000_000
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # as stored in the document
MIN_IMAGE_SIDE = 32
MAX_IMAGE_POOL_BYTES = 128 * 1024 * 1024  # image data read per document
KEPT_IMAGE_SIDE = 1568  # a kept image is scaled down to fit this square

# Typed text (not uploads, but worded the same way, so defined here).
MAX_QUESTION_CHARS = 2_000  # one question to an agent (chat, the try page, `cairn ask`)
MAX_SEARCH_CHARS = 2_000  # one search typed into a pack page or the regression-case form

# The reading process (not user-facing limits; they stop hostile files).
WORKER_MEMORY_BYTES = 2 * 1024 * 1024 * 1024  # address space of the child process
MAX_DOCX_PART_BYTES = 50 * 1024 * 1024  # one XML part of a Word file, uncompressed

# Why an image inside a document was not kept, in the order the Images line lists them.
IMAGE_REASONS = ("type", "pixels", "bytes", "size", "count", "pool", "deadline", "decode")
# What each reason of the Images line means, for the person who uploaded the file: the line itself
# keeps the short codes (SPEC 5), the upload's result explains the ones it names.
IMAGE_REASON_TEXT = {
    "type": "not a PNG, JPEG, GIF or WebP image (SVG, TIFF, EMF … are not kept)",
    "pixels": f"more than {MAX_IMAGE_PIXELS:,} pixels",
    "bytes": f"larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MB",
    "size": f"smaller than {MIN_IMAGE_SIDE} pixels on a side",
    "count": f"beyond the first {MAX_IMAGES} images of the document",
    "pool": f"beyond the {MAX_IMAGE_POOL_BYTES // (1024 * 1024)} MB of image data read per document",
    "deadline": f"not prepared within the {IMAGE_SECONDS:g} s allowed for a document's images",
    "decode": "could not be read (damaged, or a format the reader does not know)",
}

ACCEPTED_EXTENSIONS = (".md", ".txt", ".docx", ".pdf", ".png", ".jpg", ".jpeg", ".webp")

REASONS = (
    "too_large",
    "batch_too_large",
    "too_many_chars",
    "too_many_pages",
    "timeout",
    "scanned_pdf",
    "encrypted",
    "damaged",
    "empty",
    "unsupported_type",
    "type_mismatch",
    "encoding",
    "busy",
) + IMAGE_REASONS


def megabytes(size: int) -> str:
    """A limit in binary megabytes as messages write it: 4 * 1024 * 1024 is "4 MB"."""
    return f"{size / (1024 * 1024):g} MB"


def number(value: int) -> str:
    """A count as messages write it: 400000 is "400,000"."""
    return f"{value:,}"


@dataclass(frozen=True)
class Limit:
    value: int
    label: str  # as a page or message writes it: "4 MB", "400,000"


def limits() -> dict[str, Limit]:
    """Every user-facing limit by name, with its label; templates get it as ``limits``.

    Built at each call from the constants above, so a changed constant changes every page.
    """
    return {
        "file_bytes": Limit(MAX_FILE_BYTES, megabytes(MAX_FILE_BYTES)),
        "batch_bytes": Limit(MAX_BATCH_BYTES, megabytes(MAX_BATCH_BYTES)),
        "form_parts": Limit(MAX_FORM_PARTS, number(MAX_FORM_PARTS)),
        "text_chars": Limit(MAX_TEXT_CHARS, number(MAX_TEXT_CHARS)),
        "pdf_pages": Limit(MAX_PDF_PAGES, number(MAX_PDF_PAGES)),
        "images": Limit(MAX_IMAGES, number(MAX_IMAGES)),
        "image_pixels": Limit(MAX_IMAGE_PIXELS, number(MAX_IMAGE_PIXELS)),
        "image_bytes": Limit(MAX_IMAGE_BYTES, megabytes(MAX_IMAGE_BYTES)),
        "image_side": Limit(MIN_IMAGE_SIDE, number(MIN_IMAGE_SIDE)),
        "docx_part_bytes": Limit(MAX_DOCX_PART_BYTES, megabytes(MAX_DOCX_PART_BYTES)),
        "question_chars": Limit(MAX_QUESTION_CHARS, number(MAX_QUESTION_CHARS)),
        "search_chars": Limit(MAX_SEARCH_CHARS, number(MAX_SEARCH_CHARS)),
    }


def _mb(size: int) -> str:
    """A file's own size, to one decimal (a limit is written by ``megabytes``)."""
    return f"{size / (1024 * 1024):.1f} MB"


def too_large_message(size_label: str) -> str:
    """A file over the per-file limit; ``size_label`` is its size as ``_mb`` writes it."""
    return (
        f"The file is {size_label}; the limit is {megabytes(MAX_FILE_BYTES)} per file. "
        "Split the document and upload the parts."
    )


def refuse_too_large(size: int) -> Refused:
    return Refused("too_large", too_large_message(_mb(size)))


def not_sent_too_large_message() -> str:
    """What the upload page shows after the name of a chosen file over the limit, which cairn.js does
    not send. The script writes the file's size in place of ``{size}``, to one decimal as ``_mb`` does."""
    return f"refused — {too_large_message('{size}')} It was not sent."


def refuse_batch_too_large(total: int | None) -> Refused:
    """One file of a request whose files together are over ``MAX_BATCH_BYTES`` (a form sent without
    JavaScript): nothing in it was read."""
    amount = f"were {_mb(total)}, over" if total else "were over"
    return Refused(
        "batch_too_large",
        f"The files sent together {amount} the {megabytes(MAX_BATCH_BYTES)} limit for one upload, so none "
        "of them was read and nothing was stored. Upload them again a few at a time.",
    )


def request_too_large_message() -> str:
    """A request body over the limit (one file at the limit plus its form) was not read (the 413)."""
    return (
        f"The upload is larger than the {megabytes(MAX_FILE_BYTES)} limit per file, so it was not "
        "read. Upload large files one at a time, or split them."
    )


def too_many_form_parts_message() -> str:
    return (
        f"The form holds more than {number(MAX_FORM_PARTS)} fields and files, the limit per request, so it was "
        "not read. Upload fewer files at a time."
    )


def search_too_long_message() -> str:
    return f"A search is at most {number(MAX_SEARCH_CHARS)} characters."


def refuse_too_many_chars(chars: int, *, at_least: bool = False) -> Refused:
    amount = f"at least {chars:,}" if at_least else f"{chars:,}"
    return Refused(
        "too_many_chars",
        f"The document has {amount} characters of text; the limit is {number(MAX_TEXT_CHARS)} characters "
        "per document, and a document is never cut short. Split it and upload the parts.",
    )


def refuse_too_many_pages(pages: int) -> Refused:
    return Refused(
        "too_many_pages",
        f"The PDF has {pages:,} pages; the limit is {number(MAX_PDF_PAGES)} pages. Split it and upload the parts.",
    )


def refuse_timeout(seconds: float) -> Refused:
    return Refused(
        "timeout",
        f"Reading the document took longer than the limit of {seconds:g} seconds. "
        "Split or simplify it, then upload it again.",
    )


def refuse_busy() -> Refused:
    return Refused(
        "busy",
        f"The portal was reading other documents for longer than {READ_SECONDS:g} seconds, so this one "
        "was not read. Nothing was stored; upload it again in a moment.",
    )


def refuse_scanned_pdf() -> Refused:
    return Refused(
        "scanned_pdf",
        "This PDF has page images but no text: it looks scanned, and reading text from "
        "images is not supported yet. Upload a copy with a text layer (after OCR) instead.",
    )


def refuse_encrypted(what: str) -> Refused:
    return Refused(
        "encrypted",
        f"This {what} is protected by a password: remove the password, save, upload again.",
    )


def refuse_damaged(what: str, detail: str = "") -> Refused:
    because = f" ({detail})" if detail else ""
    return Refused(
        "damaged",
        f"This {what} could not be read: it is possibly damaged{because}. Open it, save a new copy and upload that.",
    )


def refuse_part_too_large(part: str, size: int) -> Refused:
    return refuse_damaged(
        "Word file", f"its part {part} unpacks to {_mb(size)}, over the {megabytes(MAX_DOCX_PART_BYTES)} that is read"
    )


def refuse_empty(images_line: str = "") -> Refused:
    """``images_line``: when the only content was pictures and none could be kept."""
    if images_line:
        return Refused(
            "empty",
            f"The document has no text, and none of its pictures could be kept ({images_line}).",
        )
    return Refused(
        "empty",
        "The document has no text: it is empty or holds only blank space. Nothing was stored.",
    )


def refuse_unsupported_type(extension: str) -> Refused:
    if extension == ".doc":
        return Refused(
            "unsupported_type",
            "Old Word files (.doc) are not accepted: open the file in Word, save it as .docx, and upload that.",
        )
    if extension != extension.rstrip() and extension.rstrip() in ACCEPTED_EXTENSIONS:
        # "Files of type .md  are not accepted" read as though .md were refused: the space is the problem.
        return Refused(
            "unsupported_type",
            f"The file name ends in '{extension}': blank space after the extension. "
            "Rename the file without it and upload it again.",
        )
    what = f"Files of type {extension}" if extension else "Files without an extension"
    return Refused(
        "unsupported_type",
        f"{what} are not accepted. Accepted types: {', '.join(ACCEPTED_EXTENSIONS)}.",
    )


def refuse_content_type_mismatch(filename: str, content_type: str) -> Refused:
    return Refused(
        "type_mismatch",
        f"The file {filename} was sent as {content_type}, which does not match its "
        "extension. Upload the file under the name that matches its type.",
    )


def refuse_bytes_mismatch(expected: str, found: str | None) -> Refused:
    looks = f": it looks like {found}" if found else ""
    advice = " Save it as .docx in Word and upload that." if found == "an old Word (.doc) file" else ""
    return Refused(
        "type_mismatch",
        f"The file's contents are not {expected}{looks}. "
        f"The extension of its name must match what it contains.{advice}",
    )


def refuse_encoding(position: int) -> Refused:
    return Refused(
        "encoding",
        f"The text file is not valid UTF-8 (first bad byte at position {position:,}). "
        "Save it with UTF-8 encoding and upload it again.",
    )


def refuse_nul_character(position: int) -> Refused:
    return Refused(
        "encoding",
        f"The text file holds a NUL byte (at byte {position:,}), which text never does: it is a binary file, "
        "or UTF-16 saved without a byte order mark. Save it as UTF-8 text and upload it again.",
    )


def refuse_image_file(reason: str, width: int = 0, height: int = 0, size: int = 0) -> Refused:
    """Refusal of an image file (.png, .jpg, .webp) that cannot be kept, by image reason."""
    if reason == "pixels" and not width * height:
        message = f"The image has far more than the limit of {number(MAX_IMAGE_PIXELS)} pixels. Scale it down."
    elif reason == "pixels":
        message = (
            f"The image is {width:,} × {height:,} = {width * height:,} pixels; the limit is "
            f"{number(MAX_IMAGE_PIXELS)} pixels. Scale it down and upload it again."
        )
    elif reason == "size":
        message = (
            f"The image is {width} × {height} pixels; an image needs at least {number(MIN_IMAGE_SIDE)} pixels on "
            "each side."
        )
    elif reason == "bytes":
        message = f"The image is {_mb(size)}; the limit is {megabytes(MAX_IMAGE_BYTES)} per image."
    elif reason == "type":
        message = "The image is not a PNG, JPEG or WebP image."
    else:
        reason = "decode"
        message = (
            "The image could not be read: it is possibly damaged, or animated. Upload a still PNG, JPEG or WebP image."
        )
    return Refused(reason, message)
