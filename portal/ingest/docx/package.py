"""The Word package: namespaces, its parts (each read after its declared size is checked) and relationships."""

from __future__ import annotations

import posixpath
import zipfile
import zlib
from dataclasses import dataclass
from urllib.parse import unquote

from lxml import etree

from portal.ingest import limits

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
PIC = "{http://schemas.openxmlformats.org/drawingml/2006/picture}"
M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
V = "{urn:schemas-microsoft-com:vml}"
VML_OFFICE = "{urn:schemas-microsoft-com:office:office}"
PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
CONTENT_TYPES = "{http://schemas.openxmlformats.org/package/2006/content-types}"

# Strict Open XML uses other namespace names for the same elements.
_STRICT_NAMESPACES = {
    b"http://purl.oclc.org/ooxml/wordprocessingml/main": b"http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    b"http://purl.oclc.org/ooxml/officeDocument/relationships": b"http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    b"http://purl.oclc.org/ooxml/drawingml/main": b"http://schemas.openxmlformats.org/drawingml/2006/main",
    b"http://purl.oclc.org/ooxml/drawingml/wordprocessingDrawing": b"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
    b"http://purl.oclc.org/ooxml/drawingml/picture": b"http://schemas.openxmlformats.org/drawingml/2006/picture",
    b"http://purl.oclc.org/ooxml/officeDocument/math": b"http://schemas.openxmlformats.org/officeDocument/2006/math",
}

WHAT = "Word file"


@dataclass
class Relationship:
    type: str
    target: str  # a part name inside the package, or a URL when external
    external: bool


class Package:
    """The zip archive of a .docx, read one checked part at a time."""

    def __init__(self, archive: zipfile.ZipFile):
        self.archive = archive
        self.members = {info.filename.lower(): info for info in archive.infolist()}

    def info(self, part: str) -> zipfile.ZipInfo | None:
        return self.members.get(part.lstrip("/").lower())

    def read(self, part: str) -> bytes:
        """An XML part's bytes, after checking its declared size (zipfile stops at that size)."""
        info = self.info(part)
        if info is None:
            raise KeyError(part)
        if info.file_size > limits.MAX_DOCX_PART_BYTES:
            raise limits.refuse_part_too_large(part, info.file_size)
        try:
            return self.archive.read(info)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as error:
            # the part, not the library's words ("Bad CRC-32 for file …"): the uploader can act on neither
            raise limits.refuse_damaged(WHAT, f"its part {part} cannot be unpacked") from error

    def xml(self, part: str) -> etree._Element:
        try:
            data = self.read(part)
        except KeyError:
            raise limits.refuse_damaged(WHAT, f"the part {part} is missing") from None
        if b"purl.oclc.org/ooxml/" in data:
            for strict, transitional in _STRICT_NAMESPACES.items():
                data = data.replace(strict, transitional)
        parser = etree.XMLParser(
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
            remove_comments=True,
            remove_pis=True,
        )
        try:
            return etree.fromstring(data, parser)
        except etree.XMLSyntaxError as error:
            raise limits.refuse_damaged(WHAT, f"{part} is not well-formed XML") from error

    def main_document_part(self) -> str:
        """The main document's part name, checked to be a Word document and not a workbook."""
        if self.info("[Content_Types].xml") is None or self.info("_rels/.rels") is None:
            raise limits.refuse_bytes_mismatch("a .docx Word file", "a zip archive")
        for relationship in self.relationships("").values():
            if relationship.type.endswith("/officeDocument") and not relationship.external:
                main = relationship.target
                break
        else:
            raise limits.refuse_damaged(WHAT, "it names no main document")
        content_type = self._content_type(main)
        if "wordprocessingml" not in content_type and "ms-word" not in content_type:
            raise limits.refuse_bytes_mismatch("a .docx Word file", "another Office file")
        return main

    def _content_type(self, part: str) -> str:
        types = self.xml("[Content_Types].xml")
        name = "/" + part.lstrip("/")
        for override in types.iter(f"{CONTENT_TYPES}Override"):
            if override.get("PartName", "").lower() == name.lower():
                return override.get("ContentType", "")
        extension = posixpath.splitext(name)[1].lstrip(".").lower()
        for default in types.iter(f"{CONTENT_TYPES}Default"):
            if default.get("Extension", "").lower() == extension:
                return default.get("ContentType", "")
        return ""

    def relationships(self, source: str) -> dict[str, Relationship]:
        """The relationships of part ``source`` (``""`` for the package), by id."""
        folder, name = posixpath.split(source)
        rels_part = posixpath.join(folder, "_rels", f"{name}.rels")
        if self.info(rels_part) is None:
            return {}
        result = {}
        for element in self.xml(rels_part).iter(f"{PKG_REL}Relationship"):
            target = element.get("Target", "")
            external = element.get("TargetMode", "") == "External"
            if not external:
                target = unquote(target)
                if target.startswith("/"):
                    target = target.lstrip("/")
                else:
                    target = posixpath.normpath(posixpath.join(folder, target))
            result[element.get("Id", "")] = Relationship(element.get("Type", ""), target, external)
        return result

    def related_xml(self, relationships: dict[str, Relationship], type_suffix: str):
        for relationship in relationships.values():
            if relationship.type.endswith(type_suffix) and not relationship.external:
                if self.info(relationship.target) is not None:
                    return self.xml(relationship.target)
        return None
