"""Every limit on reading an upload, and the one place its refusal is worded.

Callers raise what these functions return: ``raise refuse_too_large(size)``.
Each message names the limit or reason it hit and says what to do next.
"""

from portal.errors import Refused

# Formats (SPEC 3).
MAX_FILE_BYTES = 4 * 1024 * 1024  # "4 MB": binary megabytes, 4,194,304 bytes
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

# The reading process (not user-facing limits; they stop hostile files).
WORKER_MEMORY_BYTES = 2 * 1024 * 1024 * 1024  # address space of the child process
MAX_DOCX_PART_BYTES = 50 * 1024 * 1024  # one XML part of a Word file, uncompressed

# Why an image inside a document was not kept, in the order the Images line lists them.
IMAGE_REASONS = ("type", "pixels", "bytes", "size", "count", "pool", "deadline", "decode")

ACCEPTED_EXTENSIONS = (".md", ".txt", ".docx", ".pdf", ".png", ".jpg", ".jpeg", ".webp")

REASONS = (
    "too_large",
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


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def refuse_too_large(size: int) -> Refused:
    return Refused(
        "too_large",
        f"The file is {_mb(size)}; the limit is 4 MB per file. "
        "Split the document and upload the parts.",
    )


def request_too_large_message() -> str:
    """A request body over the limit (one file at the limit plus its form) was not read."""
    return (f"The upload is larger than the {MAX_FILE_BYTES // (1024 * 1024)} MB limit per file, so it was not "
            "read. Upload large files one at a time, or split them.")


def too_many_form_parts_message() -> str:
    return (f"The form holds more than {MAX_FORM_PARTS:,} fields and files, the limit per request, so it was "
            "not read. Upload fewer files at a time.")


def refuse_too_many_chars(chars: int, *, at_least: bool = False) -> Refused:
    amount = f"at least {chars:,}" if at_least else f"{chars:,}"
    return Refused(
        "too_many_chars",
        f"The document has {amount} characters of text; the limit is 400,000 characters "
        "per document, and a document is never cut short. Split it and upload the parts.",
    )


def refuse_too_many_pages(pages: int) -> Refused:
    return Refused(
        "too_many_pages",
        f"The PDF has {pages:,} pages; the limit is 300 pages. Split it and upload the parts.",
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
        f"This {what} could not be read: it is possibly damaged{because}. "
        "Open it, save a new copy and upload that.",
    )


def refuse_part_too_large(part: str, size: int) -> Refused:
    return refuse_damaged(
        "Word file", f"its part {part} unpacks to {_mb(size)}, over the 50 MB that is read"
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
            "Old Word files (.doc) are not accepted: open the file in Word, save it as "
            ".docx, and upload that.",
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


def refuse_image_file(reason: str, width: int = 0, height: int = 0, size: int = 0) -> Refused:
    """Refusal of an image file (.png, .jpg, .webp) that cannot be kept, by image reason."""
    if reason == "pixels" and not width * height:
        message = "The image has far more than the limit of 8,000,000 pixels. Scale it down."
    elif reason == "pixels":
        message = (
            f"The image is {width:,} × {height:,} = {width * height:,} pixels; the limit is "
            "8,000,000 pixels. Scale it down and upload it again."
        )
    elif reason == "size":
        message = (
            f"The image is {width} × {height} pixels; an image needs at least 32 pixels on "
            "each side."
        )
    elif reason == "bytes":
        message = f"The image is {_mb(size)}; the limit is 5 MB per image."
    elif reason == "type":
        message = "The image is not a PNG, JPEG or WebP image."
    else:
        reason = "decode"
        message = (
            "The image could not be read: it is possibly damaged, or animated. "
            "Upload a still PNG, JPEG or WebP image."
        )
    return Refused(reason, message)
