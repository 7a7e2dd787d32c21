"""The one entry point for reading an upload: ``read_upload(filename, data, content_type)``.

Pure: no database and no Flask. Checks run cheapest first — extension, content
type, size, leading bytes — and only then is the file parsed: Markdown and text
here, Word, PDF and image files in a child process that can be stopped
(``reader_parent``). Every refusal is a ``Refused`` worded in ``limits``.
"""

import codecs
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from portal.controls import normalised_text, shows_nothing
from portal.ingest import limits
from portal.ingest.figures import ExtractedFigure, assemble, figure_label
from portal.ingest.markers import without_images_line
from portal.ingest.reader_parent import ReaderResult, run_reader
from portal.ingest.sniff import describe, sniff

__all__ = ["Extracted", "ExtractedFigure", "read_upload"]

KINDS = {
    ".md": "markdown",
    ".txt": "text",
    ".docx": "docx",
    ".pdf": "pdf",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".webp": "image",
}

# Content types a browser may send for each extension; the rest is a mismatch.
CONTENT_TYPES = {
    ".md": {"text/markdown", "text/x-markdown", "text/plain"},
    ".txt": {"text/plain"},
    ".docx": {
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/zip",
        "application/x-zip-compressed",
    },
    ".pdf": {"application/pdf", "application/x-pdf"},
    ".png": {"image/png", "image/x-png"},
    ".jpg": {"image/jpeg", "image/pjpeg", "image/jpg"},
    ".jpeg": {"image/jpeg", "image/pjpeg", "image/jpg"},
    ".webp": {"image/webp"},
}
# Sent when the browser does not know the type: the same as sending none.
UNSAID_CONTENT_TYPES = {"", "application/octet-stream", "binary/octet-stream", "application/unknown"}

# What the leading bytes must be ("cfb" for .docx: an encrypted Word file is one).
EXPECTED_BYTES = {
    ".docx": ({"zip", "cfb"}, "a .docx Word file"),
    ".pdf": ({"pdf"}, "a PDF file"),
    ".png": ({"png"}, "a PNG image"),
    ".jpg": ({"jpeg"}, "a JPEG image"),
    ".jpeg": ({"jpeg"}, "a JPEG image"),
    ".webp": ({"webp"}, "a WebP image"),
}
# A text upload that starts with one of these signatures is a binary file under a text name
# (signatures short enough to begin real text, such as BMP's "BM", are left out).
BINARY_KINDS = {"pdf", "zip", "cfb", "png", "jpeg", "gif", "webp", "tiff", "emf", "jpeg2000"}


@dataclass
class Extracted:
    """An upload read and ready to store.

    ``text`` is the document text as stored (Markdown; plain text for ``.txt``),
    with a ``[Figure N: label]`` marker where each kept figure stands and, when
    any image was not kept, a last line ``Images: K kept, N not kept (…)``.
    ``original`` is the uploaded file (None for .md/.txt: their text is the file).
    """

    text: str
    kind: str  # "markdown" | "text" | "docx" | "pdf" | "image"
    original: bytes | None
    figures: list[ExtractedFigure] = field(default_factory=list)
    images_not_kept: dict[str, int] = field(default_factory=dict)
    pages: int | None = None
    title_hint: str = ""
    title: str = ""  # the file's own title (PDF metadata), preferred over the file name


def read_upload(filename: str, data: bytes, content_type: str | None = None, *, title: str | None = None) -> Extracted:
    """Read an uploaded file into text and figures, or raise Refused naming why not.

    ``title`` labels the figure of an image upload (default: the file name's stem).
    """
    name = re.split(r"[\\/]", filename or "")[-1]
    extension = PurePosixPath(name).suffix.lower() if "." in name.strip(".") else ""
    kind = KINDS.get(extension)
    if kind is None:
        raise limits.refuse_unsupported_type(extension)
    refuse_if_content_type_differs(name, extension, content_type)
    if len(data) > limits.MAX_FILE_BYTES:
        raise limits.refuse_too_large(len(data))
    if not data:
        raise limits.refuse_empty()
    title_hint = PurePosixPath(name).stem.strip() or name
    if kind in ("markdown", "text"):
        return Extracted(read_text(data), kind, None, title_hint=title_hint)
    found = sniff(data)
    allowed, expected = EXPECTED_BYTES[extension]
    if found not in allowed:
        raise limits.refuse_bytes_mismatch(expected, describe(found))
    result = run_reader(kind, data, label=figure_label(title or title_hint))
    assembled = assemble(result.text, result.labels, result.kept, result.not_kept)
    if kind == "image":
        refuse_if_image_not_kept(result)
    if not assembled.figures and not _readable(assembled.text, assembled.images_not_kept):
        raise limits.refuse_empty(assembled.text if assembled.images_not_kept else "")
    if len(assembled.text) > limits.MAX_TEXT_CHARS:
        raise limits.refuse_too_many_chars(len(assembled.text))
    return Extracted(
        text=assembled.text,
        kind=kind,
        original=data,
        figures=assembled.figures,
        images_not_kept=assembled.images_not_kept,
        pages=result.pages,
        title_hint=title_hint,
        title=result.title,
    )


def refuse_if_content_type_differs(name: str, extension: str, content_type: str | None) -> None:
    sent = (content_type or "").split(";")[0].strip().lower()
    if sent not in UNSAID_CONTENT_TYPES and sent not in CONTENT_TYPES[extension]:
        raise limits.refuse_content_type_mismatch(name, sent)


def refuse_if_image_not_kept(result: ReaderResult) -> None:
    """An image file is a document of its own: one it cannot keep is refused with the reason."""
    if 0 in result.kept:
        return
    reason = result.not_kept.get(0, "deadline")
    if reason == "deadline":
        raise limits.refuse_timeout(limits.IMAGE_SECONDS)
    raise limits.refuse_image_file(reason, **result.facts.get(0, {}))


def _text_encoding(data: bytes) -> tuple[str, int]:
    """The encoding a text file's byte order mark names (UTF-8 without one), and the mark's length."""
    if data.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le", 2
    if data.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be", 2
    return "utf-8", 3 if data.startswith(codecs.BOM_UTF8) else 0


# Signatures written in printable letters: a text may begin with them ("GIF89a is the animated version."), so a file
# beginning so is an image only when what follows is no plain text (a GIF's size and colour table are binary).
_LETTER_SIGNATURES = {"gif"}
_CONTROL_BYTES = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _binary_kind(data: bytes) -> str | None:
    """The binary format a text upload's bytes are in (a PDF only when they begin with its signature), or None."""
    found = sniff(data)
    if found not in BINARY_KINDS or (found == "pdf" and not data.startswith(b"%PDF-")):
        return None
    if found in _LETTER_SIGNATURES:
        head = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data[:1024])
        if "\ufffd" not in head and not _CONTROL_BYTES.search(head):
            return None
    return found


def read_text(data: bytes) -> str:
    """Decode a .md/.txt upload (UTF-8, or UTF-16 with its byte order mark), newlines as \\n, without control
    characters or bidirectional reordering (as the Word and PDF readers give their text)."""
    found = _binary_kind(data)
    if found is not None:
        raise limits.refuse_bytes_mismatch("a text file", describe(found))
    encoding, bom = _text_encoding(data)
    try:
        text = data[bom:].decode(encoding)
    except UnicodeDecodeError as error:
        raise limits.refuse_encoding(bom + error.start) from None
    if "\x00" in text:  # UTF-16 without a byte order mark, or a binary file: valid UTF-8, yet not text
        before = text[: text.index("\x00")]
        raise limits.refuse_nul_character(bom + len(before.encode(encoding)))
    text = normalised_text(text)
    if shows_nothing(text):
        raise limits.refuse_empty()
    if len(text) > limits.MAX_TEXT_CHARS:
        raise limits.refuse_too_many_chars(len(text))
    return text


def _readable(text: str, images_not_kept: dict[str, int]) -> bool:
    """Whether any text is left besides the Images line."""
    if images_not_kept:
        text = without_images_line(text)
    return not shows_nothing(text)
