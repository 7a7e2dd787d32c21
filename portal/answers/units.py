"""A passage split into the units the built-in answerer chooses from, with Markdown syntax taken out.

A unit is a sentence, a list item (with the line that leads into its list, once),
or a table row read as ``Header: value; Header: value`` from its table's header
row. Headings, ``Page N`` lines, ``Keywords:`` lines, the ``Images:`` summary
line, code blocks and table rules are not prose and give no unit. The blocks are
the viewer's: ``ingest.markdown_blocks`` reads the passage with its parser. ``plain``
takes out the Markdown syntax (``**``, ``__``, backticks, ``|``, link targets)
and keeps identifiers verbatim; a page shows a passage excerpt with it and ``row_text``
(``documents/excerpts.py``).
"""

import re
from dataclasses import dataclass
from functools import lru_cache

from markdown_it.common.utils import replaceEntityPattern, unescapeAll

from portal.controls import strip_control_characters
from portal.ingest.markdown_blocks import BACKSLASH_ESCAPE, MARKDOWN, heading_title, markdown_blocks, quoted_wildcards
from portal.ingest.markers import is_images_line, is_page_shaped, only_figure_markers

KEYWORDS_LINE = re.compile(r"^[*_]*keywords[*_]*\s*:", re.IGNORECASE)
TABLE_RULE = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$")

# End of a sentence: terminal punctuation, optional closing quotes/brackets,
# whitespace, then something that can start a sentence.
_BOUNDARY = re.compile(r"[.!?]+[\"'’”)\]]*\s+(?=[A-Z0-9\"'‘“(\[])")
_ABBREVIATIONS = frozenset("e.g i.e vs cf fig figs no nos approx dr mr mrs ms st jr sr inc ltd co".split())


@dataclass(frozen=True, slots=True)
class _Block:
    """A block of a passage a sentence cannot cross: a paragraph, a list item or a table row."""

    text: str
    heading: str  # the heading it stands under ("" before any)
    kind: str = "prose"  # "prose" | "item" | "row"
    lead_in: str = ""  # an item's list: the paragraph line that leads into it ("…:")
    list_id: int = -1  # items of one list share it
    numbered: bool = False
    labels: tuple[str, ...] = ()  # a row's: the labels its text names its cells by (``_row_pairs``)


def _blocks(text: str) -> tuple[_Block, ...]:
    """The passage's blocks in order, as the viewer renders its Markdown (``markdown_blocks``).

    Headings, code blocks, thematic breaks and, inside a paragraph, ``Page N`` lines,
    ``Keywords:`` lines and the ``Images:`` summary line are not prose and are dropped; a line
    of figure markers is a block of its own. A list item is its first paragraph; a nested list
    continues its outermost list. A paragraph of ``|`` lines is the rows of a table whose header
    row is in an earlier passage (a passage is a slice of its document).
    """
    blocks: list[_Block] = []
    heading = ""
    lists: dict[int, tuple[int, str]] = {}  # a top Markdown list → (its number here, its lead-in)
    # A list right under a paragraph (no blank line) is led in by that paragraph's last line:
    # (the line after the paragraph, that line), when the line is prose.
    line_before = (-1, "")
    source = markdown_blocks(text)
    for position, block in enumerate(source):
        if block.kind == "heading":
            heading = heading_title(block.text)
        elif block.kind == "table_header":
            following = source[position + 1] if position + 1 < len(source) else None
            if following is None or following.kind != "table_row":  # a header without rows: a row of its own
                blocks.append(_Block(row_text(list(block.cells), None), heading, "row"))
        elif block.kind == "table_row":
            pairs = _row_pairs(list(block.cells), list(block.header))
            blocks.append(
                _Block(_pairs_text(pairs), heading, "row", labels=tuple(label for label, _ in pairs if label))
            )
        elif block.kind == "paragraph":
            lines = [line.strip() for line in block.text.split("\n")]
            if all(line.startswith("|") for line in lines):
                blocks.extend(
                    _Block(row_text(table_cells(line), None), heading, "row")
                    for line in lines
                    if not TABLE_RULE.match(line)
                )
                continue
            pieces = _paragraph_pieces(lines, block.item_lead)
            if block.item_lead and pieces[0]:
                if block.lists[0] not in lists:
                    lead_in = line_before[1] if line_before[0] == block.line_start else _prose_before(blocks, heading)
                    lists[block.lists[0]] = len(lists) + 1, lead_in if lead_in.endswith(":") else ""
                number, lead_in = lists[block.lists[0]]
                blocks.append(_Block(pieces.pop(0), heading, "item", lead_in, number, block.numbered))
            blocks.extend(_Block(piece, heading) for piece in pieces if piece)
            line_before = (block.line_end, lines[-1]) if pieces and pieces[-1] else (-1, "")
    return tuple(blocks)


def _prose_before(blocks: list[_Block], heading: str) -> str:
    """The paragraph a list follows after a blank line: the last block, if prose under the same heading."""
    before = blocks[-1] if blocks else None
    return before.text if before is not None and before.kind == "prose" and before.heading == heading else ""


def _paragraph_pieces(lines: list[str], after_bullet: bool) -> list[str]:
    """A paragraph's prose, cut where a text marker line stands: a ``Page N``, ``Keywords:`` or
    ``Images:`` line is left out, a line of figure markers is a piece of its own. A first piece
    of ``""`` says the paragraph opened with a marker line. A list item's first line follows its
    bullet: it is the item's text, never a marker line."""
    pieces: list[str] = []
    current: list[str] = []
    for number, line in enumerate(lines):
        if number == 0 and after_bullet:
            current.append(line)
        elif is_page_shaped(line) or KEYWORDS_LINE.match(line) or is_images_line(line) or only_figure_markers(line):
            pieces.append(" ".join(current))
            current = []
            if only_figure_markers(line):
                pieces.append(line)
        else:
            current.append(line)
    pieces.append(" ".join(current))
    return pieces


def table_cells(line: str) -> list[str]:
    """A table row's cells from its source line (``| a | b |``)."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


# The header of a table's second column when its rows are names and their values.
_VALUE_HEADERS = frozenset({"value", "values", "setting", "details"})


def row_text(cells: list[str], header: list[str] | None) -> str:
    """A table row as ``Header: value; Header: value`` (empty cells left out), a row of a table of names and
    values as ``name: value``, or its cells joined by ``; `` when the passage does not hold the table's header
    row."""
    return _pairs_text(_row_pairs(cells, header))


def _row_pairs(cells: list[str], header: list[str] | None) -> list[tuple[str, str]]:
    """A row's cells, each with the label ``row_text`` gives it ("" for none), empty cells left out."""
    if header and len(header) == len(cells):
        if len(cells) == 2 and header[1].strip().casefold() in _VALUE_HEADERS and all(cells):
            # a table of names and values reads "Incident: INC-2026-0203", not "Field: Incident; Value: INC-…"
            return [(cells[0], cells[1])]
        return [(h, c) for h, c in zip(header, cells) if c]
    return [("", c) for c in cells if c]


def _pairs_text(pairs: list[tuple[str, str]]) -> str:
    return "; ".join(f"{label}: {value}" if label else value for label, value in pairs)


def _protected_spans(unit: str) -> list[tuple[int, int]]:
    """Bracketed spans (figure markers, link texts) that a boundary must not cut."""
    return [m.span() for m in re.finditer(r"\[[^\]]*\]", unit)]


# A short quotation: the sentences quoted ("User is locked. Please notify the person responsible") are one part of
# the sentence quoting them.
# A quotation opens after a space or a bracket and closes before one: a "24\" screen" is an inch, not a quotation.
_QUOTED = re.compile(r"(?<![\w\"])\"[^\"\n]{1,200}\"(?![\w\"])|“[^”\n]{1,200}”")


def _sentences(unit: str) -> list[str]:
    """The sentences of a block's text."""
    protected = _protected_spans(unit)
    quoted = [m.span() for m in _QUOTED.finditer(unit)]
    sentences = []
    start = 0
    for match in _BOUNDARY.finditer(unit):
        end = match.start()
        if any(a < end < b for a, b in protected) or any(a < match.end() < b for a, b in quoted):
            continue
        previous_word = unit[start:end].rsplit(None, 1)[-1] if unit[start:end].strip() else ""
        if previous_word.lower().lstrip("(\"'‘“[").rstrip(".") in _ABBREVIATIONS or (
            len(previous_word) == 1 and previous_word.isupper()
        ):
            continue
        cut = match.start() + len(match.group().rstrip())
        sentences.append(unit[start:cut].strip())
        start = match.end()
    sentences.append(unit[start:].strip())
    return [s for s in sentences if s]


def split_sentences(text: str) -> list[str]:
    """The units of a passage (sentences, list items, table rows), Markdown syntax taken out."""
    return [sentence for sentence, _heading in sentences_with_headings(text)]


def sentences_with_headings(text: str) -> list[tuple[str, str]]:
    """``split_sentences``, each unit paired with the heading it stands under ("" before any)."""
    return [(unit.text, unit.heading) for unit in passage_units(text)]


@dataclass(frozen=True, slots=True)
class Unit:
    """One unit of a passage with what the answerer weighs around it."""

    text: str  # as the answer gives it: Markdown syntax taken out
    heading: str  # the heading it stands under, Markdown syntax taken out
    kind: str  # "prose" | "item" | "row"
    lead_in: str  # an item's: the line that leads into its list
    list_id: int  # items of one list share it
    numbered: bool  # an item of a numbered list
    # a row's column headings, as its text names its cells ("February: 64"): they label values, and hold none
    labels: tuple[str, ...] = ()


# A passage is read by the evidence check and again by the answerer, and the same passages are
# issued to many questions: its units are worked out once per process (passages never change).
@lru_cache(maxsize=4096)
def passage_units(text: str) -> tuple[Unit, ...]:
    """Sentences of prose, whole list items and table rows, in passage order."""
    units = []
    for block in _blocks(text):
        pieces = [block.text] if block.kind == "row" else _sentences(block.text)
        if block.kind == "item":  # an item is one unit however many sentences it has
            pieces = [" ".join(pieces)]
        for piece in pieces:
            plain_text = plain(piece)
            if plain_text:
                units.append(
                    Unit(
                        plain_text,
                        plain(block.heading),
                        block.kind,
                        plain(block.lead_in),
                        block.list_id,
                        block.numbered,
                        tuple(plain(label) for label in block.labels),
                    )
                )
    return tuple(units)


# --- Markdown syntax out --------------------------------------------------------------

_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_SINGLE_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
# A link's target may hold balanced parentheses, as Markdown allows ("…/wiki/Valve_(mechanical)").
_TARGET = r"\((?:[^()\s]|\([^()\s]*\))*\)"
_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]" + _TARGET)
_IMAGE = re.compile(r"!\[([^\]\n]*)\]" + _TARGET)
_HTML_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_HIDDEN_WILDCARDS = str.maketrans("*_", "\x00\x01")
_SHOWN_WILDCARDS = str.maketrans("\x00\x01", "*_")


def _hide_quoted_wildcards(text: str) -> str:
    """``*`` and ``_`` inside quoted words (``markdown_blocks.quoted_wildcards``) out of the emphasis patterns' way."""
    pieces, position = [], 0
    for start, end in quoted_wildcards(text):
        pieces += [text[position:start], text[start:end].translate(_HIDDEN_WILDCARDS)]
        position = end
    return "".join(pieces) + text[position:]


# A target the viewer's parser does not make a link of: the text stays as written, as the viewer shows it
# ("[js](javascript:alert(1))" typed in a Word file).
def _link_text(link: re.Match) -> str:
    """A link's text, or the whole link as written when the viewer's parser would make no link of its target
    (its own ``validateLink``, after the entities and escapes it reads)."""
    target = link.group()[len(link.group(1)) + 3 : -1].strip().strip("<>")  # between "[text](" and ")"
    return link.group(1) if MARKDOWN.validateLink(MARKDOWN.normalizeLink(unescapeAll(target))) else link.group()


# A backslash escape (``\[``, ``\|``, ``\#``): the character it escapes is text, out of the syntax patterns' way until
# it is given back, without its backslash, as the viewer shows it.
_ESCAPED_BASE = 0xF100  # private use: the escaped character's code point above it
_SHOWN_ESCAPES = {_ESCAPED_BASE + code: chr(code) for code in range(0x21, 0x7F)}


# An HTML entity as Markdown reads one ("&lt;", "&#60;", "&#x3C;").
_ENTITY = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_BACKTICKS = re.compile(r"`+")


def _decoded(entity: re.Match) -> str:
    """The character an entity stands for, by markdown-it's own table and rules (an unknown or invalid one stays as
    written); an ASCII one as an escape, so that "&#42;" is a star to show, not emphasis. A control or a reordering
    mark ("&#x202E;") is dropped, as from the document's own text."""
    decoded = strip_control_characters(replaceEntityPattern(entity.group(), entity.group(1)))
    if decoded == entity.group():
        return decoded
    return "".join(chr(_ESCAPED_BASE + ord(c)) if 0x21 <= ord(c) < 0x7F else c for c in decoded)


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text``'s code spans are: a run of backticks up to the next run of the same length (CommonMark).
    One pass over the runs: a regex pairing them backtracked for seconds on a long unmatched run."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    following: dict[int, int] = {}
    next_of_length: list[int | None] = [None] * len(runs)
    for k in range(len(runs) - 1, -1, -1):
        length = runs[k][1] - runs[k][0]
        next_of_length[k] = following.get(length)
        following[length] = k
    spans, k = [], 0
    while k < len(runs):
        closer = next_of_length[k]
        if closer is None:
            k += 1
            continue
        spans.append((runs[k][0], runs[closer][1]))
        k = closer + 1
    return spans


def _entities_decoded(text: str) -> str:
    """``text`` with the HTML entities outside its code spans decoded, as markdown-it decodes them for the viewer."""
    if "&" not in text:
        return text
    parts, last = [], 0
    for start, end in _code_spans(text):
        parts += [_ENTITY.sub(_decoded, text[last:start]), text[start:end]]
        last = end
    return "".join(parts) + _ENTITY.sub(_decoded, text[last:])


def plain(text: str) -> str:
    """``text`` without Markdown syntax: emphasis markers, backticks, pipes, leading ``#``, link
    targets, backslash escapes; HTML entities decoded, as the viewer shows them. Words (and identifiers such as
    ``Z_PP_CONF_IDOC_PROCESS``) stay as they are."""
    # a backslash escape first: "\\&lt;" is the text "&lt;", as the viewer shows it
    text = _entities_decoded(BACKSLASH_ESCAPE.sub(lambda m: chr(_ESCAPED_BASE + ord(m.group(1))), text))
    text = _HTML_BREAK.sub(" ", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(_link_text, text)
    text = _hide_quoted_wildcards(text)  # "*" is a value to type, as the viewer shows it
    text = _EMPHASIS.sub(r"\2", text)
    text = _SINGLE_STAR.sub(r"\1", text)
    text = text.translate(_SHOWN_WILDCARDS)
    text = text.replace("`", "").replace("|", " ")
    text = text.lstrip("#").strip().translate(_SHOWN_ESCAPES)
    return " ".join(text.split())
