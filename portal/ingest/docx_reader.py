"""Word (.docx) files read into Markdown, with a placeholder where each picture stands.

The package is read with zipfile and lxml rather than python-docx so that only
the parts needed are unpacked, each after its declared size is checked: the
main document, its relationships, styles and numbering, and then each picture
on demand, within the image budget. Only the body is read: headers, footers,
footnotes, endnotes and comments are not.
"""

import io
import posixpath
import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from lxml import etree

from portal.ingest import limits
from portal.ingest.figures import figure_label, placeholder, strip_control_characters
from portal.ingest.images import (
    KEPT_TYPES,
    ImageBudget,
    ImageOutcome,
    NotKept,
    Reading,
    prepare_image_bytes,
)
from portal.ingest.sniff import CFB_MAGIC, sniff

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

LINK_SCHEMES = ("http://", "https://", "mailto:")
_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.IGNORECASE)
_LIST_STYLE = re.compile(r"list (bullet|number)(?:\s*([2-9]))?", re.IGNORECASE)
_OFF = {"0", "false", "off", "none"}

WHAT = "Word file"


def read_docx(data: bytes) -> Reading:
    """Read a .docx into Markdown text with picture placeholders; raise Refused if it cannot be."""
    if data.startswith(CFB_MAGIC):
        raise _refusal_for_compound_file(data)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as error:
        raise limits.refuse_damaged(WHAT, "not a readable zip archive") from error
    package = _Package(archive)
    try:
        main_part = package.main_document_part()
        document = package.xml(main_part)
        relationships = package.relationships(main_part)
        styles = _Styles(package.related_xml(relationships, "/styles"))
        numbering = _Numbering(package.related_xml(relationships, "/numbering"), styles)
        body = document.find(f"{W}body")
        if body is None:
            raise limits.refuse_damaged(WHAT, "it has no document body")
        writer = _Writer(styles, numbering, relationships)
        writer.blocks_of(body)
        text = writer.markdown()
    except BaseException:
        archive.close()
        raise
    readable = re.sub(r"\x00\d+\x00", "", text)
    if not readable.strip() and not writer.pictures:
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


# --- the package -------------------------------------------------------------


@dataclass
class _Relationship:
    type: str
    target: str  # a part name inside the package, or a URL when external
    external: bool


class _Package:
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
            raise limits.refuse_damaged(WHAT, f"{part}: {error}") from error

    def xml(self, part: str) -> etree._Element:
        try:
            data = self.read(part)
        except KeyError:
            raise limits.refuse_damaged(WHAT, f"the part {part} is missing") from None
        if b"purl.oclc.org/ooxml/" in data:
            for strict, transitional in _STRICT_NAMESPACES.items():
                data = data.replace(strict, transitional)
        parser = etree.XMLParser(
            resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
            remove_comments=True, remove_pis=True,
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

    def relationships(self, source: str) -> dict[str, _Relationship]:
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
            result[element.get("Id", "")] = _Relationship(element.get("Type", ""), target, external)
        return result

    def related_xml(self, relationships: dict[str, _Relationship], type_suffix: str):
        for relationship in relationships.values():
            if relationship.type.endswith(type_suffix) and not relationship.external:
                if self.info(relationship.target) is not None:
                    return self.xml(relationship.target)
        return None


# --- styles and numbering ------------------------------------------------------


def _is_on(element) -> bool:
    return element is not None and element.get(f"{W}val", "true").lower() not in _OFF


@dataclass
class _Style:
    name: str
    based_on: str | None
    numbering: tuple[str, int] | None
    outline_level: int | None
    bold: bool | None
    italic: bool | None


class _Styles:
    def __init__(self, root):
        self.by_id: dict[str, _Style] = {}
        self.default_paragraph: str | None = None
        if root is None:
            return
        for element in root.iter(f"{W}style"):
            style_id = element.get(f"{W}styleId", "")
            is_default = element.get(f"{W}default", "").lower() in ("1", "true", "on")
            if element.get(f"{W}type") == "paragraph" and is_default:
                self.default_paragraph = style_id
            name = element.find(f"{W}name")
            based_on = element.find(f"{W}basedOn")
            paragraph = element.find(f"{W}pPr")
            run = element.find(f"{W}rPr")
            self.by_id[style_id] = _Style(
                name=(name.get(f"{W}val", "") if name is not None else style_id).strip(),
                based_on=based_on.get(f"{W}val") if based_on is not None else None,
                numbering=_numbering_reference(paragraph),
                outline_level=_outline_level(paragraph),
                bold=_is_on(run.find(f"{W}b")) if run is not None and run.find(f"{W}b") is not None else None,
                italic=_is_on(run.find(f"{W}i")) if run is not None and run.find(f"{W}i") is not None else None,
            )

    def chain(self, style_id: str | None) -> Iterator[_Style]:
        seen = set()
        while style_id and style_id in self.by_id and style_id not in seen and len(seen) < 20:
            seen.add(style_id)
            style = self.by_id[style_id]
            yield style
            style_id = style.based_on

    def heading_level(self, style_id: str | None) -> int | None:
        for style in self.chain(style_id):
            match = _HEADING_STYLE.fullmatch(style.name)
            if match:
                return min(int(match.group(1)), 6)
            if style.name.lower() == "title":
                return 1
            if style.outline_level is not None and style.outline_level < 9:
                return min(style.outline_level + 1, 6)
        return None

    def numbering(self, style_id: str | None) -> tuple[str, int] | None:
        for style in self.chain(style_id):
            if style.numbering:
                return style.numbering
        return None

    def list_style(self, style_id: str | None) -> tuple[str, int] | None:
        """("bullet" | "number", level) for the built-in List Bullet / List Number styles."""
        for style in self.chain(style_id):
            match = _LIST_STYLE.fullmatch(style.name)
            if match:
                kind = "bullet" if match.group(1).lower() == "bullet" else "number"
                return kind, int(match.group(2) or 1) - 1
        return None

    def run_format(self, style_id: str | None) -> tuple[bool | None, bool | None]:
        bold = italic = None
        for style in self.chain(style_id):
            bold = style.bold if bold is None else bold
            italic = style.italic if italic is None else italic
        return bold, italic


def _numbering_reference(paragraph_properties) -> tuple[str, int] | None:
    if paragraph_properties is None:
        return None
    reference = paragraph_properties.find(f"{W}numPr")
    if reference is None:
        return None
    num_id = reference.find(f"{W}numId")
    level = reference.find(f"{W}ilvl")
    if num_id is None:
        return None
    try:
        return num_id.get(f"{W}val", "0"), int(level.get(f"{W}val", "0")) if level is not None else 0
    except ValueError:
        return None


def _outline_level(paragraph_properties) -> int | None:
    if paragraph_properties is None:
        return None
    element = paragraph_properties.find(f"{W}outlineLvl")
    try:
        return int(element.get(f"{W}val")) if element is not None else None
    except (TypeError, ValueError):
        return None


class _Numbering:
    """List formats from numbering.xml: is level N of list M bulleted, and where it starts."""

    def __init__(self, root, styles: _Styles):
        self.abstract: dict[str, dict[int, tuple[str, int]]] = {}
        self.style_links: dict[str, str] = {}
        self.instances: dict[str, tuple[str, dict[int, int]]] = {}
        self.styles = styles
        if root is None:
            return
        for abstract in root.iter(f"{W}abstractNum"):
            levels = {}
            for level in abstract.iter(f"{W}lvl"):
                fmt = level.find(f"{W}numFmt")
                start = level.find(f"{W}start")
                try:
                    levels[int(level.get(f"{W}ilvl", "0"))] = (
                        fmt.get(f"{W}val", "decimal") if fmt is not None else "decimal",
                        int(start.get(f"{W}val", "1")) if start is not None else 1,
                    )
                except ValueError:
                    continue
            abstract_id = abstract.get(f"{W}abstractNumId", "")
            self.abstract[abstract_id] = levels
            link = abstract.find(f"{W}numStyleLink")
            if link is not None:
                self.style_links[abstract_id] = link.get(f"{W}val", "")
        for num in root.iter(f"{W}num"):
            abstract_ref = num.find(f"{W}abstractNumId")
            starts = {}
            for override in num.iter(f"{W}lvlOverride"):
                start = override.find(f"{W}startOverride")
                try:
                    if start is not None:
                        starts[int(override.get(f"{W}ilvl", "0"))] = int(start.get(f"{W}val", "1"))
                except ValueError:
                    continue
            if abstract_ref is not None:
                self.instances[num.get(f"{W}numId", "")] = (abstract_ref.get(f"{W}val", ""), starts)

    def level_format(self, num_id: str, level: int, depth: int = 0) -> tuple[str, int] | None:
        """("bullet" | "number", start) or None when the paragraph is not a list item."""
        if num_id == "0" or num_id not in self.instances or depth > 3:
            return None
        abstract_id, starts = self.instances[num_id]
        levels = self.abstract.get(abstract_id, {})
        if not levels and abstract_id in self.style_links:
            linked = self.styles.numbering(self.style_links[abstract_id])
            return self.level_format(linked[0], level, depth + 1) if linked else None
        fmt, start = levels.get(level, ("bullet", 1))
        if fmt == "none":
            return None
        return ("bullet" if fmt == "bullet" else "number"), starts.get(level, start)


# --- the Markdown writer ------------------------------------------------------


@dataclass
class _Picture:
    part: str | None  # the part name inside the package; None when not embedded
    label: str


@dataclass
class _Piece:
    text: str
    bold: bool = False
    italic: bool = False
    url: str | None = None
    is_picture: bool = False


class _Writer:
    """Walks the body in document order and collects Markdown blocks and pictures."""

    def __init__(self, styles, numbering, relationships, pictures=None, counters=None, in_cell=False):
        self.styles = styles
        self.numbering = numbering
        self.relationships = relationships
        self.pictures: list[_Picture] = [] if pictures is None else pictures
        self.counters: dict[str, list[int]] = {} if counters is None else counters
        self.in_cell = in_cell
        self.blocks: list[tuple[str, str]] = []
        self.list_columns: list[int] = []  # content column of each open list level

    def markdown(self) -> str:
        out = []
        previous = None
        for kind, text in self.blocks:
            if out:
                out.append("\n" if kind == previous == "item" else "\n\n")
            out.append(text)
            previous = kind
        return "".join(out)

    # blocks

    def blocks_of(self, container) -> None:
        for element in container:
            tag = element.tag
            if tag == f"{W}p":
                self.paragraph(element)
            elif tag == f"{W}tbl":
                self.table(element)
            elif tag == f"{W}sdt":
                content = element.find(f"{W}sdtContent")
                if content is not None:
                    self.blocks_of(content)
            elif tag in (f"{W}customXml", f"{W}ins", f"{W}moveTo"):
                self.blocks_of(element)
            elif tag == f"{MC}AlternateContent":
                self.blocks_of(_chosen(element))

    def paragraph(self, paragraph) -> None:
        pieces: list[_Piece] = []
        self.inline(paragraph, pieces, None)
        properties = paragraph.find(f"{W}pPr")
        style_element = properties.find(f"{W}pStyle") if properties is not None else None
        style_id = style_element.get(f"{W}val") if style_element is not None else self.styles.default_paragraph
        heading = self.styles.heading_level(style_id)
        if heading is None:
            direct = _outline_level(properties)
            heading = min(direct + 1, 6) if direct is not None and direct < 9 else None
        if heading and not self.in_cell:
            text = " ".join(_plain(pieces).split())
            if text:
                self.list_columns = []
                self.blocks.append(("heading", "#" * heading + " " + text))
            return
        listed = None if heading else self.list_item(properties, style_id)
        text = _render(pieces).strip()
        if not text:
            return
        if listed is None or self.in_cell:
            self.list_columns = []
            self.blocks.append(("paragraph", f"{listed[0]} {text}" if listed else text))
            return
        marker, level = listed
        if not self.blocks or self.blocks[-1][0] != "item":
            self.list_columns = []
        level = min(level, len(self.list_columns))
        indent = self.list_columns[level - 1] if level else 0
        column = indent + len(marker) + 1
        self.list_columns = self.list_columns[:level] + [column]
        body = text.replace("\n", "\n" + " " * column)
        self.blocks.append(("item", " " * indent + marker + " " + body))

    def list_item(self, properties, style_id) -> tuple[str, int] | None:
        """The Markdown marker ("-" or "3.") and nesting level, or None for a plain paragraph."""
        reference = _numbering_reference(properties) or self.styles.numbering(style_id)
        if reference is not None:
            num_id, level = reference
            level = max(0, min(level, 8))
            found = self.numbering.level_format(num_id, level)
            if found is None:
                return None
            kind, start = found
            by_name = self.styles.list_style(style_id)
            if by_name:  # "List Bullet 2" is its own list at level 0, drawn one step in
                level = max(level, by_name[1])
        else:
            by_name = self.styles.list_style(style_id)
            if by_name is None:
                return None
            kind, level = by_name
            num_id, start = f"style:{style_id}", 1
        counters = self.counters.setdefault(num_id, [0] * 9)
        counters[level] += 1
        for deeper in range(level + 1, 9):
            counters[deeper] = 0
        if kind == "bullet":
            return "-", level
        return f"{start + counters[level] - 1}.", level

    def table(self, table) -> None:
        rows = []
        for row in _children(table, f"{W}tr"):
            cells = []
            for cell in _children(row, f"{W}tc"):
                writer = _Writer(self.styles, self.numbering, self.relationships,
                                 self.pictures, self.counters, in_cell=True)
                writer.blocks_of(cell)
                text = " ".join(" ".join(text.split()) for _, text in writer.blocks)
                cells.append(text.replace("|", "\\|"))
                span = _int_value(cell.find(f"{W}tcPr/{W}gridSpan"), 1)
                cells.extend([""] * max(0, min(span, 64) - 1))
            rows.append(cells)
        if not any(cell for row in rows for cell in row):
            return
        if self.in_cell:  # a table inside a table cell: its rows in one line
            self.blocks.append(("paragraph", " / ".join(" ; ".join(c for c in row if c) for row in rows)))
            return
        width = max(len(row) for row in rows)
        lines = [_table_row(rows[0], width), "|" + " --- |" * width]
        lines += [_table_row(row, width) for row in rows[1:]]
        self.list_columns = []
        self.blocks.append(("table", "\n".join(lines)))

    # inline content

    def inline(self, element, pieces: list[_Piece], url: str | None) -> None:
        for child in element:
            tag = child.tag
            if tag == f"{W}r":
                self.run(child, pieces, url)
            elif tag == f"{W}hyperlink":
                self.inline(child, pieces, self.link_url(child) or url)
            elif tag in (f"{W}ins", f"{W}moveTo", f"{W}smartTag", f"{W}customXml",
                         f"{W}fldSimple", f"{W}dir", f"{W}bdo"):
                self.inline(child, pieces, url)
            elif tag == f"{W}sdt":
                content = child.find(f"{W}sdtContent")
                if content is not None:
                    self.inline(content, pieces, url)
            elif tag in (f"{M}oMath", f"{M}oMathPara"):
                pieces.append(_Piece("".join(t.text or "" for t in child.iter(f"{M}t")), url=url))
            elif tag == f"{MC}AlternateContent":
                self.inline(_chosen(child), pieces, url)

    def run(self, run, pieces: list[_Piece], url: str | None) -> None:
        bold, italic = self.run_format(run)
        self.run_content(run, pieces, url, bold, italic)

    def run_content(self, container, pieces, url, bold, italic) -> None:
        for child in container:
            tag = child.tag
            if tag == f"{W}t":
                pieces.append(_Piece(strip_control_characters(child.text or ""), bold, italic, url))
            elif tag in (f"{W}tab", f"{W}ptab"):
                pieces.append(_Piece("\t", url=url))
            elif tag in (f"{W}br", f"{W}cr"):
                if child.get(f"{W}type") not in ("page", "column"):
                    pieces.append(_Piece("\n", url=url))
            elif tag == f"{W}noBreakHyphen":
                pieces.append(_Piece("-", bold, italic, url))
            elif tag == f"{W}drawing":
                self.drawing(child, pieces)
            elif tag in (f"{W}pict", f"{W}object"):
                self.vml(child, pieces)
            elif tag == f"{MC}AlternateContent":
                self.run_content(_chosen(child), pieces, url, bold, italic)

    def run_format(self, run) -> tuple[bool, bool]:
        properties = run.find(f"{W}rPr")
        bold = italic = None
        style_id = None
        if properties is not None:
            if properties.find(f"{W}b") is not None:
                bold = _is_on(properties.find(f"{W}b"))
            if properties.find(f"{W}i") is not None:
                italic = _is_on(properties.find(f"{W}i"))
            style = properties.find(f"{W}rStyle")
            style_id = style.get(f"{W}val") if style is not None else None
        style_bold, style_italic = self.styles.run_format(style_id)
        return bool(style_bold if bold is None else bold), bool(style_italic if italic is None else italic)

    def link_url(self, hyperlink) -> str | None:
        relationship = self.relationships.get(hyperlink.get(f"{R}id", ""))
        if relationship is None or not relationship.external:
            return None
        url = relationship.target.strip()
        if not url.lower().startswith(LINK_SCHEMES):
            return None
        return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")

    # pictures

    def drawing(self, drawing, pieces: list[_Piece]) -> None:
        properties = drawing.find(f".//{WP}docPr")
        blips = [blip for blip in drawing.iter(f"{A}blip") if not _inside(blip, f"{W}txbxContent", drawing)]
        for blip in blips:
            picture = _ancestor(blip, f"{PIC}pic", drawing)
            own = picture.find(f"{PIC}nvPicPr/{PIC}cNvPr") if picture is not None else None
            candidates = [properties, own] if len(blips) == 1 else [own, properties]
            alt = _first_attribute(candidates, "descr") or _first_attribute(candidates, "title")
            self.add_picture(blip.get(f"{R}embed"), alt, pieces)
        self.text_boxes(drawing, pieces)

    def vml(self, element, pieces: list[_Piece]) -> None:
        for image in element.iter(f"{V}imagedata"):
            if _inside(image, f"{W}txbxContent", element):
                continue
            shape = image.getparent()
            alt = (shape.get("alt") if shape is not None else None) or image.get(f"{VML_OFFICE}title")
            self.add_picture(image.get(f"{R}id") or image.get(f"{R}pict"), alt, pieces)
        self.text_boxes(element, pieces)

    def add_picture(self, relationship_id: str | None, alt: str | None, pieces: list[_Piece]) -> None:
        relationship = self.relationships.get(relationship_id or "")
        part = relationship.target if relationship is not None and not relationship.external else None
        slot = len(self.pictures)
        self.pictures.append(_Picture(part, figure_label(alt)))
        pieces.append(_Piece(placeholder(slot), is_picture=True))

    def text_boxes(self, container, pieces: list[_Piece]) -> None:
        """The text of text boxes inside a drawing, inline, in order."""
        for box in container.iter(f"{W}txbxContent"):
            if _inside(box, f"{W}txbxContent", container):
                continue
            for paragraph in box.iter(f"{W}p"):
                if _inside(paragraph, f"{W}txbxContent", box):
                    continue  # a text box inside this one: its own drawing reads it
                pieces.append(_Piece(" "))
                self.inline(paragraph, pieces, None)


def _chosen(alternate):
    """The first mc:Choice of an mc:AlternateContent (the fallback repeats it)."""
    for tag in (f"{MC}Choice", f"{MC}Fallback"):
        found = alternate.find(tag)
        if found is not None:
            return found
    return []


def _children(element, tag: str) -> Iterator:
    """Children with ``tag``, looking through content controls and custom XML wrappers."""
    for child in element:
        if child.tag == tag:
            yield child
        elif child.tag == f"{W}sdt":
            content = child.find(f"{W}sdtContent")
            if content is not None:
                yield from _children(content, tag)
        elif child.tag == f"{W}customXml":
            yield from _children(child, tag)


def _ancestor(element, tag: str, stop):
    node = element.getparent()
    while node is not None and node is not stop:
        if node.tag == tag:
            return node
        node = node.getparent()
    return None


def _inside(element, tag: str, stop) -> bool:
    return _ancestor(element, tag, stop) is not None


def _first_attribute(elements, name: str) -> str | None:
    for element in elements:
        if element is not None and (element.get(name) or "").strip():
            return element.get(name)
    return None


def _int_value(element, default: int) -> int:
    try:
        return int(element.get(f"{W}val")) if element is not None else default
    except (TypeError, ValueError):
        return default


def _table_row(cells: list[str], width: int) -> str:
    cells = cells + [""] * (width - len(cells))
    return "| " + " | ".join(cells) + " |"


def _plain(pieces: list[_Piece]) -> str:
    return "".join(piece.text for piece in pieces)


def _render(pieces: list[_Piece]) -> str:
    """Markdown for a paragraph's pieces: emphasis and links around runs of like pieces."""
    out = []
    index = 0
    while index < len(pieces):
        url = pieces[index].url
        end = index
        while end < len(pieces) and pieces[end].url == url:
            end += 1
        group = _emphasized(pieces[index:end])
        if url and group.strip() and not any(p.is_picture for p in pieces[index:end]):
            label = group.strip().replace("[", "\\[").replace("]", "\\]")
            lead = group[: len(group) - len(group.lstrip())]
            trail = group[len(group.rstrip()):]
            group = f"{lead}[{label}]({url}){trail}"
        out.append(group)
        index = end
    return "".join(out)


def _emphasized(pieces: list[_Piece]) -> str:
    out = []
    index = 0
    while index < len(pieces):
        piece = pieces[index]
        end = index + 1
        while (
            end < len(pieces)
            and not pieces[end].is_picture
            and not piece.is_picture
            and (pieces[end].bold, pieces[end].italic) == (piece.bold, piece.italic)
        ):
            end += 1
        text = "".join(p.text for p in pieces[index:end])
        out.append(text if piece.is_picture else _emphasis(text, piece.bold, piece.italic))
        index = end
    return "".join(out)


def _emphasis(text: str, bold: bool, italic: bool) -> str:
    core = text.strip()
    if not core or not (bold or italic) or "\n" in core:
        return text
    mark = "***" if bold and italic else "**" if bold else "*"
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    return f"{lead}{mark}{core}{mark}{trail}"


# --- the pictures -------------------------------------------------------------


def _prepare_pictures(package: _Package, pictures: list[_Picture], budget: ImageBudget):
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


def _prepare_part(package: _Package, part: str | None, budget: ImageBudget) -> ImageOutcome:
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
