"""A passage split into the units the built-in answerer chooses from, with Markdown syntax taken out.

A unit is a sentence, a list item (with the line that leads into its list, once),
or a table row read as ``Header: value; Header: value`` from its table's header
row. Headings, ``Page N`` lines, ``Keywords:`` lines, the ``Images:`` summary
line, code blocks and table rules are not prose and give no unit. ``plain``
takes out the Markdown syntax (``**``, ``__``, backticks, ``|``, link targets)
and keeps identifiers verbatim.
"""

import re
from dataclasses import dataclass

from portal.ingest.markers import is_images_line, is_page_line, only_figure_markers

_ATX_HEADING = re.compile(r"^#{1,6}(\s|$)")
_SETEXT_UNDERLINE = re.compile(r"^(=+|-+)$")
_THEMATIC_BREAK = re.compile(r"^([-*_])(\s*\1){2,}$")
_FENCE = re.compile(r"^(```|~~~)")
_KEYWORDS_LINE = re.compile(r"^[*_]*keywords[*_]*\s*:", re.IGNORECASE)
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$")
_BULLET = re.compile(r"^(?:([-*+•])|(\d{1,3})[.)])\s+(.*)$")
_BLOCKQUOTE = re.compile(r"^(?:>\s?)+")

# End of a sentence: terminal punctuation, optional closing quotes/brackets,
# whitespace, then something that can start a sentence.
_BOUNDARY = re.compile(r"[.!?]+[\"'’”)\]]*\s+(?=[A-Z0-9\"'‘“(\[])")
_ABBREVIATIONS = frozenset(
    "e.g i.e vs cf fig figs no nos approx dr mr mrs ms st jr sr inc ltd co".split()
)


@dataclass
class _Block:
    """A block of a passage a sentence cannot cross: a paragraph, a list item or a table row."""

    text: str
    heading: str  # the heading it stands under ("" before any)
    kind: str = "prose"  # "prose" | "item" | "row"
    lead_in: str = ""  # an item's list: the paragraph line that leads into it ("…:")
    list_id: int = -1  # items of one list share it
    numbered: bool = False


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _blocks(text: str) -> list[_Block]:
    """The passage's blocks in order. Headings, ``Page N`` lines, ``Keywords:`` lines, the
    ``Images:`` summary line, code blocks and table rules are not prose and are dropped."""
    blocks: list[_Block] = []
    lines: list[str] = []
    meta = {"kind": "prose", "lead_in": "", "list_id": -1, "numbered": False}
    heading = ""
    header: list[str] | None = None  # the current table's header row, once its rule was seen
    first_row: list[str] | None = None  # a table's first row: its header if a rule follows
    rows = 0
    lists = 0
    list_open = False  # the last block was an item and nothing but blank lines followed it

    def flush() -> None:
        nonlocal meta
        if lines:
            blocks.append(_Block(" ".join(lines), heading, **meta))
            lines.clear()
        meta = {"kind": "prose", "lead_in": "", "list_id": -1, "numbered": False}

    def end_table() -> None:
        nonlocal header, first_row, rows
        if first_row is not None or (header is not None and not rows):  # a lone row, or a header without rows
            blocks.append(_Block(_row_text(first_row or header, None), heading, "row"))
        header = first_row = None
        rows = 0

    in_fence = False
    for raw in text.splitlines():
        line = _BLOCKQUOTE.sub("", raw.strip()).strip()
        if _FENCE.match(raw.strip()):
            in_fence = not in_fence
            flush()
            continue
        if in_fence:
            continue
        is_row = line.startswith("|")
        is_rule = bool(line) and bool(_TABLE_SEPARATOR.match(line))
        if not is_row and not is_rule:
            end_table()
        if not line:
            list_open = list_open or meta["kind"] == "item"
            flush()
            continue
        bullet = _BULLET.match(line)
        if _SETEXT_UNDERLINE.match(line) and lines and meta["kind"] == "prose":
            heading = lines.pop()  # the line above was a heading
            flush()
            list_open = False
        elif _ATX_HEADING.match(line):
            flush()
            list_open = False
            heading = line.lstrip("#").strip()
        elif is_rule and first_row is not None:
            header, first_row = first_row, None
        elif (_THEMATIC_BREAK.match(line) or is_page_line(line) or _KEYWORDS_LINE.match(line)
              or is_images_line(line) or is_rule):
            flush()
            list_open = False
        elif is_row:
            flush()
            list_open = False
            if header is None and first_row is None:
                first_row = _cells(line)
            else:
                if first_row is not None:  # no rule under it: a row of a table whose header is elsewhere
                    blocks.append(_Block(_row_text(first_row, None), heading, "row"))
                    first_row = None
                blocks.append(_Block(_row_text(_cells(line), header), heading, "row"))
                rows += 1
        elif only_figure_markers(line):
            flush()
            blocks.append(_Block(line, heading))
        elif bullet:
            continuing = meta["kind"] == "item" or list_open
            lead_in = meta["lead_in"] if continuing else ""
            if not continuing:
                lists += 1
                before = lines[-1] if lines else (blocks[-1].text if blocks and blocks[-1].kind == "prose"
                                                  and blocks[-1].heading == heading else "")
                lead_in = before if before.rstrip().endswith(":") else ""
            elif list_open and blocks and blocks[-1].kind == "item":
                lead_in = blocks[-1].lead_in
            flush()
            list_open = False
            meta = {"kind": "item", "lead_in": lead_in, "list_id": lists, "numbered": bullet.group(2) is not None}
            lines.append(bullet.group(3))
        else:
            if list_open or (meta["kind"] == "item" and not lines):
                flush()
            list_open = False
            lines.append(line)
    flush()
    end_table()
    return blocks


def _row_text(cells: list[str], header: list[str] | None) -> str:
    """A table row as ``Header: value; Header: value`` (empty cells left out), or its cells
    joined by ``; `` when the passage does not hold the table's header row."""
    if header and len(header) == len(cells):
        pairs = [f"{h}: {c}" if h else c for h, c in zip(header, cells) if c]
        return "; ".join(pairs)
    return "; ".join(c for c in cells if c)


def _protected_spans(unit: str) -> list[tuple[int, int]]:
    """Bracketed spans (figure markers, link texts) that a boundary must not cut."""
    return [m.span() for m in re.finditer(r"\[[^\]]*\]", unit)]


def _sentences(unit: str) -> list[str]:
    """The sentences of a block's text."""
    protected = _protected_spans(unit)
    sentences = []
    start = 0
    for match in _BOUNDARY.finditer(unit):
        end = match.start()
        if any(a < end < b for a, b in protected):
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


@dataclass
class Unit:
    """One unit of a passage with what the answerer weighs around it."""

    text: str  # as the answer gives it: Markdown syntax taken out
    heading: str  # the heading it stands under, Markdown syntax taken out
    kind: str  # "prose" | "item" | "row"
    lead_in: str  # an item's: the line that leads into its list
    list_id: int  # items of one list share it
    numbered: bool  # an item of a numbered list


def passage_units(text: str) -> list[Unit]:
    """Sentences of prose, whole list items and table rows, in passage order."""
    units = []
    for block in _blocks(text):
        pieces = [block.text] if block.kind == "row" else _sentences(block.text)
        if block.kind == "item":  # an item is one unit however many sentences it has
            pieces = [" ".join(pieces)]
        for piece in pieces:
            plain_text = plain(piece)
            if plain_text:
                units.append(Unit(plain_text, plain(block.heading), block.kind, plain(block.lead_in),
                                   block.list_id, block.numbered))
    return units


# --- Markdown syntax out --------------------------------------------------------------

_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_SINGLE_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\([^)\s]*\)")
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\s]*\)")
_HTML_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def plain(text: str) -> str:
    """``text`` without Markdown syntax: emphasis markers, backticks, pipes, leading ``#``, link
    targets. Words (and identifiers such as ``Z_PP_CONF_IDOC_PROCESS``) stay as they are."""
    text = _HTML_BREAK.sub(" ", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    text = _SINGLE_STAR.sub(r"\1", text)
    text = text.replace("`", "").replace("|", " ")
    text = text.lstrip("#").strip()
    return " ".join(text.split())
