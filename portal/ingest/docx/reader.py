"""Word (.docx) files read into Markdown, with a placeholder where each picture stands.

The package is read with zipfile and lxml rather than python-docx so that only
the parts needed are unpacked, each after its declared size is checked: the
main document, its relationships, styles and numbering, and then each picture
on demand, within the image budget. Only the body is read: headers, footers,
footnotes, endnotes and comments are not. The author's text is kept from reading as a marker
(``markers.neutralise_markers``) before ingest writes the figures' markers into it.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib

from portal.controls import shows_nothing
from portal.ingest import limits
from portal.ingest.docx.markdown import MarkdownWriter, Picture
from portal.ingest.docx.package import WHAT, Package, W
from portal.ingest.docx.styles import Numbering, Styles
from portal.ingest.images import (
    KEPT_TYPES,
    ImageBudget,
    ImageOutcome,
    NotKept,
    Reading,
    prepare_image_bytes,
)
from portal.ingest.markers import neutralise_markers
from portal.ingest.sniff import CFB_MAGIC, sniff


def read_docx(data: bytes) -> Reading:
    """Read a .docx into Markdown text with picture placeholders; raise Refused if it cannot be."""
    if data.startswith(CFB_MAGIC):
        raise _refusal_for_compound_file(data)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as error:
        raise limits.refuse_damaged(WHAT, "not a readable zip archive") from error
    package = Package(archive)
    try:
        main_part = package.main_document_part()
        document = package.xml(main_part)
        relationships = package.relationships(main_part)
        styles = Styles(package.related_xml(relationships, "/styles"))
        numbering = Numbering(package.related_xml(relationships, "/numbering"), styles)
        body = document.find(f"{W}body")
        if body is None:
            raise limits.refuse_damaged(WHAT, "it has no document body")
        writer = MarkdownWriter(styles, numbering, relationships)
        writer.blocks_of(body)
        text = neutralise_markers(writer.markdown())
    except BaseException:
        archive.close()
        raise
    readable = re.sub(r"\x00\d+\x00", "", text)
    if shows_nothing(readable) and not writer.pictures:
        archive.close()
        raise limits.refuse_empty()
    if len(readable) > limits.MAX_TEXT_CHARS:
        archive.close()
        raise limits.refuse_too_many_chars(len(readable))
    pictures = writer.pictures
    return Reading(
        text=text,
        labels=[picture.label for picture in pictures],
        images=lambda budget: _prepare_pictures(package, pictures, budget),
        close=archive.close,
    )


def _refusal_for_compound_file(data: bytes):
    """An OLE container named .docx: an encrypted Word file, or an old binary one."""
    import msoffcrypto

    try:
        office_file = msoffcrypto.OfficeFile(io.BytesIO(data))
        encrypted = office_file.is_encrypted()
    except Exception:
        return limits.refuse_damaged(WHAT, "an unreadable Office container")
    from msoffcrypto.format.ooxml import OOXMLFile

    if isinstance(office_file, OOXMLFile) and encrypted:
        return limits.refuse_encrypted(WHAT)
    found = "an old Word (.doc) file" if type(office_file).__name__ == "Doc97File" else None
    return limits.refuse_bytes_mismatch("a .docx Word file", found or "an old Office file")


# --- the pictures -------------------------------------------------------------


def _prepare_pictures(package: Package, pictures: list[Picture], budget: ImageBudget):
    """Yield (slot, PreparedImage | NotKept) for each picture, in document order."""
    outcomes: dict[str, ImageOutcome] = {}  # by part: a picture used twice is read once
    for slot, picture in enumerate(pictures):
        try:
            budget.check_time_and_count()
            outcome = outcomes.get(picture.part or "")
            if outcome is None:
                outcome = _prepare_part(package, picture.part, budget)
                if picture.part and not (isinstance(outcome, NotKept) and outcome.reason == "pool"):
                    outcomes[picture.part] = outcome
        except NotKept as not_kept:
            outcome = not_kept
        if not isinstance(outcome, NotKept):
            budget.record_kept()
        yield slot, outcome


def _prepare_part(package: Package, part: str | None, budget: ImageBudget) -> ImageOutcome:
    info = package.info(part) if part else None
    if info is None:
        return NotKept("decode")  # a linked (not embedded) picture, or a missing part
    try:
        with package.archive.open(info) as member:
            kind = sniff(member.read(1024))
        if kind not in KEPT_TYPES:
            return NotKept("type" if kind else "decode")
        budget.charge(info.file_size)
        data = package.archive.read(info)
        return prepare_image_bytes(data)
    except NotKept as not_kept:
        return not_kept
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError, MemoryError):
        return NotKept("decode")
