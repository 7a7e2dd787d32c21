"""The Markdown writer: the document body as Markdown, with a numbered placeholder where each picture stands."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

from portal.controls import readable_text
from portal.ingest.docx.package import MC, PIC, VML_OFFICE, WP, A, M, R, V, W
from portal.ingest.docx.styles import is_on, numbering_reference, outline_level
from portal.ingest.figures import figure_label, placeholder

LINK_SCHEMES = ("http://", "https://", "mailto:")
# What a link's target keeps as written: URL syntax (RFC 3986) but the parentheses and brackets, which end or open a
# Markdown link. Everything else is percent-encoded, a backslash, a line break and a no-break space too: Word never
# shows a target, so nothing in it may become the document's text or markup ("manual\n\n| PIN | 7731 |").
_URL_KEPT = ":/?#@!$&'*+,;=%-._~"


@dataclass
class Picture:
    part: str | None  # the part name inside the package; None when not embedded
    label: str


@dataclass
class Piece:
    text: str
    bold: bool = False
    italic: bool = False
    url: str | None = None
    is_picture: bool = False


class MarkdownWriter:
    """Walks the body in document order and collects Markdown blocks and pictures."""

    def __init__(self, styles, numbering, relationships, pictures=None, counters=None, in_cell=False):
        self.styles = styles
        self.numbering = numbering
        self.relationships = relationships
        self.pictures: list[Picture] = [] if pictures is None else pictures
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
        pieces: list[Piece] = []
        self.inline(paragraph, pieces, None)
        properties = paragraph.find(f"{W}pPr")
        style_element = properties.find(f"{W}pStyle") if properties is not None else None
        style_id = style_element.get(f"{W}val") if style_element is not None else self.styles.default_paragraph
        heading = self.styles.heading_level(style_id)
        if heading is None:
            direct = outline_level(properties)
            heading = min(direct + 1, 6) if direct is not None and direct < 9 else None
        if heading and not self.in_cell:
            text = " ".join(as_typed(_plain(pieces)).split())
            if text:
                self.list_columns = []
                self.blocks.append(("heading", "#" * heading + " " + text))
            return
        listed = None if heading else self.list_item(properties, style_id)
        text = _render(pieces).strip()
        if not text:
            return
        text = _lines_as_typed(text)  # in a list item's body too: "# Board plan" in a bullet is no heading
        if self.in_cell:  # a table cell is one line: ``_cell_text`` keeps its items apart
            marker = listed[0] if listed and listed[0] != "-" else ""
            self.blocks.append(("item" if listed else "paragraph", f"{marker} {text}".lstrip()))
            return
        if listed is None:
            self.list_columns = []
            self.blocks.append(("paragraph", text))
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
        reference = numbering_reference(properties) or self.styles.numbering(style_id)
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
                writer = MarkdownWriter(
                    self.styles, self.numbering, self.relationships, self.pictures, self.counters, in_cell=True
                )
                writer.blocks_of(cell)
                # the typed text's pipes are escaped already (``as_typed``); a figure's label may hold one
                cells.append(re.sub(r"(?<!\\)\|", r"\\|", _cell_text(writer.blocks)))
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

    def inline(self, element, pieces: list[Piece], url: str | None) -> None:
        for child in element:
            tag = child.tag
            if tag == f"{W}r":
                self.run(child, pieces, url)
            elif tag == f"{W}hyperlink":
                self.inline(child, pieces, self.link_url(child) or url)
            elif tag in (
                f"{W}ins",
                f"{W}moveTo",
                f"{W}smartTag",
                f"{W}customXml",
                f"{W}fldSimple",
                f"{W}dir",
                f"{W}bdo",
            ):
                self.inline(child, pieces, url)
            elif tag == f"{W}sdt":
                content = child.find(f"{W}sdtContent")
                if content is not None:
                    self.inline(content, pieces, url)
            elif tag in (f"{M}oMath", f"{M}oMathPara"):
                math = "".join(t.text or "" for t in child.iter(f"{M}t"))
                pieces.append(Piece(readable_text(math), url=url))
            elif tag == f"{MC}AlternateContent":
                self.inline(_chosen(child), pieces, url)

    def run(self, run, pieces: list[Piece], url: str | None) -> None:
        bold, italic = self.run_format(run)
        self.run_content(run, pieces, url, bold, italic)

    def run_content(self, container, pieces, url, bold, italic) -> None:
        for child in container:
            tag = child.tag
            if tag == f"{W}t":
                pieces.append(Piece(readable_text(child.text or ""), bold, italic, url))
            elif tag in (f"{W}tab", f"{W}ptab"):
                pieces.append(Piece("\t", url=url))
            elif tag in (f"{W}br", f"{W}cr"):
                if child.get(f"{W}type") not in ("page", "column"):
                    pieces.append(Piece("\n", url=url))
            elif tag == f"{W}noBreakHyphen":
                pieces.append(Piece("-", bold, italic, url))
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
                bold = is_on(properties.find(f"{W}b"))
            if properties.find(f"{W}i") is not None:
                italic = is_on(properties.find(f"{W}i"))
            style = properties.find(f"{W}rStyle")
            style_id = style.get(f"{W}val") if style is not None else None
        style_bold, style_italic = self.styles.run_format(style_id)
        return bool(style_bold if bold is None else bold), bool(style_italic if italic is None else italic)

    def link_url(self, hyperlink) -> str | None:
        relationship = self.relationships.get(hyperlink.get(f"{R}id", ""))
        if relationship is None or not relationship.external:
            return None
        url = readable_text(relationship.target).strip()
        if not url.lower().startswith(LINK_SCHEMES):
            return None
        return quote(url, safe=_URL_KEPT)

    # pictures

    def drawing(self, drawing, pieces: list[Piece]) -> None:
        properties = drawing.find(f".//{WP}docPr")
        blips = [blip for blip in drawing.iter(f"{A}blip") if not _inside(blip, f"{W}txbxContent", drawing)]
        for blip in blips:
            picture = _ancestor(blip, f"{PIC}pic", drawing)
            own = picture.find(f"{PIC}nvPicPr/{PIC}cNvPr") if picture is not None else None
            candidates = [properties, own] if len(blips) == 1 else [own, properties]
            alt = _first_attribute(candidates, "descr") or _first_attribute(candidates, "title")
            self.add_picture(blip.get(f"{R}embed"), alt, pieces)
        self.text_boxes(drawing, pieces)

    def vml(self, element, pieces: list[Piece]) -> None:
        for image in element.iter(f"{V}imagedata"):
            if _inside(image, f"{W}txbxContent", element):
                continue
            shape = image.getparent()
            alt = (shape.get("alt") if shape is not None else None) or image.get(f"{VML_OFFICE}title")
            self.add_picture(image.get(f"{R}id") or image.get(f"{R}pict"), alt, pieces)
        self.text_boxes(element, pieces)

    def add_picture(self, relationship_id: str | None, alt: str | None, pieces: list[Piece]) -> None:
        relationship = self.relationships.get(relationship_id or "")
        part = relationship.target if relationship is not None and not relationship.external else None
        slot = len(self.pictures)
        self.pictures.append(Picture(part, figure_label(alt)))
        pieces.append(Piece(placeholder(slot), is_picture=True))

    def text_boxes(self, container, pieces: list[Piece]) -> None:
        """The text of text boxes inside a drawing, inline, in order."""
        for box in container.iter(f"{W}txbxContent"):
            if _inside(box, f"{W}txbxContent", container):
                continue
            for paragraph in box.iter(f"{W}p"):
                if _inside(paragraph, f"{W}txbxContent", box):
                    continue  # a text box inside this one: its own drawing reads it
                pieces.append(Piece(" "))
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


def _cell_text(blocks: list[tuple[str, str]]) -> str:
    """A table cell's blocks on the one line a Markdown table row allows: a list item (numbered ones keep their
    number) ends with "; " unless its text ends a sentence, so items stay apart in the passage and in the
    answerer's ``Header: value`` unit; paragraphs follow one another with a space."""
    out = ""
    previous = None
    for kind, text in blocks:
        text = " ".join(text.split())
        if out:
            apart = "item" in (kind, previous) and not out.endswith((".", ":", ";", "!", "?"))
            out += "; " if apart else " "
        out += text
        previous = kind
    return out


def _table_row(cells: list[str], width: int) -> str:
    cells = cells + [""] * (width - len(cells))
    return "| " + " | ".join(cells) + " |"


# Characters typed in Word that Markdown would read as a link, an autolink, a table's cell, an entity, an escape,
# emphasis or code: they are escaped, so "[Verify your account](https://…)" typed as text stays that text, as the
# author saw it, and a "|" in a cell does not cut the row (Word's own bold, italic and links make markup). An "_"
# between letters or digits (Z_PP_CONF_IDOC_PROCESS) never makes emphasis and stays as it is: search reads an
# identifier whole.
_TYPED_SYNTAX = re.compile(r"[\[\]<|&\\*`]|(?<![^\W_])_|_(?![^\W_])")
# A paragraph's line that Markdown would read as a heading, a quote, a list item, a code fence, a rule or a setext
# heading's underline ("***Important***" is emphasis, not a rule).
_BLOCK_START = re.compile(
    r"^([ \t]*)(#{1,6}(?=[ \t]|$)|>|[-+*](?=[ \t]|$)|\d{1,9}(?=[.)](?:[ \t]|$))|`{3,}|~{3,}"
    r"|[-*_](?=(?:[ \t]*[-*_]){2,}[ \t]*$)|=(?==*[ \t]*$))",
    re.M,
)


def as_typed(text: str) -> str:
    """``text`` typed in a Word file, with what Markdown would read as a link, a table, an entity, an escape,
    emphasis or code escaped."""
    return _TYPED_SYNTAX.sub(lambda m: "\\" + m.group(), text)


def _lines_as_typed(text: str) -> str:
    """A paragraph's lines, none of them starting a heading, a quote, a list or a code block as Markdown reads one:
    "# Note" typed in a plain paragraph is a paragraph (it became a heading, and the document's title)."""

    def escaped(match: re.Match) -> str:
        lead, start = match.groups()
        return f"{lead}{start}\\" if start[0].isdigit() else f"{lead}\\{start}"

    return _BLOCK_START.sub(escaped, text)


def _plain(pieces: list[Piece]) -> str:
    return "".join(piece.text for piece in pieces)


def _render(pieces: list[Piece]) -> str:
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
            label = group.strip()  # its brackets are escaped already (``as_typed``)
            lead = group[: len(group) - len(group.lstrip())]
            trail = group[len(group.rstrip()) :]
            group = f"{lead}[{label}]({url}){trail}"
        out.append(group)
        index = end
    return "".join(out)


def _emphasized(pieces: list[Piece]) -> str:
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
        out.append(text if piece.is_picture else _emphasis(as_typed(text), piece.bold, piece.italic))
        index = end
    return "".join(out)


def _emphasis(text: str, bold: bool, italic: bool) -> str:
    core = text.strip()
    if not core or not (bold or italic) or "\n" in core:
        return text
    mark = "***" if bold and italic else "**" if bold else "*"
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()) :]
    return f"{lead}{mark}{core}{mark}{trail}"
