"""Markdown read once: the viewer's parser and the blocks it finds, with the source lines of each.

The viewer (``documents/render.py``) renders with ``MARKDOWN``; the passage splitter
(``passages``) takes its headings, and the answerer (``answers/units.py``) its paragraphs,
list items and table rows, from ``markdown_blocks``, which reads the same parser's tokens.
So a ``#`` line in a code block, a setext heading or a table without outer pipes is what
the viewer shows it as, for all three. The parser reads a figure marker as written in the text
(``markers.figure_marker_at``) as one ``figure_marker`` token, which the viewer makes its figure.

Line numbers follow the project's convention (``passages``): 0-based here, counted as
``str.splitlines`` counts them. markdown-it breaks lines only at ``\\n``, ``\\r\\n`` and ``\\r``;
``source_lines`` converts its line maps where a text also holds another line break
(form feed, ``\\u2028``, …).

Pure: no Flask, no database; ingest, answers and documents import it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_block import StateBlock
from markdown_it.rules_block.paragraph import paragraph
from markdown_it.rules_inline import StateInline

from portal.ingest.markers import figure_marker_at

# A quoted word holding ``*`` or ``_`` is a value to type, not emphasis: SAP's wildcard in
# 'table name "*" and user "*"' would otherwise pair up and vanish into italics. The quotes
# must match and enclose no space, so '*"quoted"*' and '"a *b* c"' stay emphasis. Possessive
# quantifiers keep the scan linear on hostile text.
_QUOTED_WORD = re.compile(r'"[^\s"]*+"|\'[^\s\']*+\'|“[^\s”]*+”|‘[^\s’]*+’')


@lru_cache(maxsize=16)  # the inline rule asks about one text once for each ``*`` or ``_`` in it, in a row
def quoted_wildcards(text: str) -> tuple[tuple[int, int], ...]:
    """The ``(start, end)`` offsets of the quoted words in ``text`` that hold a ``*`` or ``_``."""
    return tuple(match.span() for match in _QUOTED_WORD.finditer(text) if "*" in match.group() or "_" in match.group())


def in_quoted_wildcard(text: str, position: int) -> bool:
    """``text[position]`` stands inside a quoted word that holds a wildcard (between its quotes)."""
    spans = quoted_wildcards(text)
    index = bisect_right(spans, (position, len(text) + 1)) - 1
    return index >= 0 and spans[index][0] < position < spans[index][1] - 1


def _quoted_wildcard(state: StateInline, silent: bool) -> bool:
    """An inline rule before emphasis: a ``*`` or ``_`` inside a quoted word is literal text."""
    position = state.pos
    if state.src[position] not in "*_" or not in_quoted_wildcard(state.src, position):
        return False
    if not silent:  # appended, not ``pending +=``: that copies the text waiting so far, quadratic in a run
        state.append_pending(state.src[position])
    state.pos = position + 1
    return True


def _figure_marker(state: StateInline, silent: bool) -> bool:
    """An inline rule before escapes and links: a figure marker as written in the text is one
    ``figure_marker`` token (``meta``: its number and label), read where a receipt and redaction read
    one, so what Markdown makes of other text (an entity, an escaped bracket) never becomes a figure.
    A backslash before a marker is text: ingest writes a marker after whatever the text ends with."""
    position = state.pos
    if state.src[position] == "\\" and figure_marker_at(state.src, position + 1):
        if not silent:
            state.append_pending("\\")
        state.pos = position + 1
        return True
    found = figure_marker_at(state.src, position) if state.src[position] == "[" else None
    if found is None:
        return False
    end, number, label = found
    if not silent:
        token = state.push("figure_marker", "", 0)
        token.content = state.src[position:end]
        token.meta = {"number": number, "label": label}
    state.pos = end
    return True


def _figure_marker_as_text(self, tokens, index, options, env) -> str:
    """A figure marker the renderer did not put a figure for: its text."""
    return escapeHtml(tokens[index].content)


def _too_deep(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """A block rule before all others: at the deepest level a list item or quote may still open
    (``maxNesting`` less the two levels a list and its item take), every block is a paragraph of
    its lines as written. Past ``maxNesting`` markdown-it drops the rest of the text (to the end of
    the document, not only of the list), which a hostile file used to hide a passage from every
    page — the viewer, excerpts, the answerer's units — while search and a model still read it."""
    if state.level < state.md.options.maxNesting - 2:
        return False
    return paragraph(state, start_line, end_line, silent)


def _configured() -> MarkdownIt:
    """CommonMark with tables; raw HTML off, so nothing in a document becomes markup: it is text. A link reference
    definition (``[h]: https://… "title"``) is a paragraph of text too: CommonMark renders it as nothing, so a
    hostile file hid a line from every page — the viewer, excerpts, the answerer's units — while search and a model
    still read it; ``[text][h]`` is then shown as typed."""
    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    parser.disable("reference")
    parser.block.ruler.before("table", "too_deep", _too_deep)  # table is the first block rule
    parser.inline.ruler.before("strikethrough", "quoted_wildcard", _quoted_wildcard)
    parser.inline.ruler.before("escape", "figure_marker", _figure_marker)
    parser.add_render_rule("figure_marker", _figure_marker_as_text)
    return parser


MARKDOWN = _configured()
# Answers are rendered by the same parser, with single line breaks kept. An image is parsed as
# in a document, so the renderer shows it the viewer's way, a link labelled with its alt text
# (``documents.render``): an answer never loads a picture, wherever a model or a document told it to point.
ANSWER_MARKDOWN = _configured()
ANSWER_MARKDOWN.options["breaks"] = True
# The same parser without the inline pass (emphasis, links, …): the block structure, at about
# half the cost. An inline token keeps its source in ``content``, without children.
_BLOCK_STRUCTURE = _configured().disable(["inline", "text_join"])

_MARKDOWN_IT_BREAK = re.compile(r"\r\n?|\n")
# What ends a line: the characters ``str.splitlines`` breaks at. Passages count their line ranges by them, and
# the viewer and the PDF view number lines by the same, so a cited range marks the same lines everywhere.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_OTHER_LINE_BREAKS = re.compile("[" + LINE_BREAKS.replace("\n", "").replace("\r", "") + "]")  # markdown-it's are \r, \n
_LIST_OPEN = {"bullet_list_open": False, "ordered_list_open": True}
_CLOSE = frozenset({"blockquote_close", "bullet_list_close", "ordered_list_close", "list_item_close"})


@dataclass(frozen=True, slots=True)
class Block:
    """One leaf block of the text as the viewer renders it.

    ``kind`` is ``heading``, ``paragraph``, ``code`` (fenced or indented), ``rule`` (a
    thematic break), ``table_header`` (a table's header row) or ``table_row`` (a row of its
    body). ``text`` is a heading's or paragraph's inline source, Markdown syntax kept, its
    lines joined by ``\\n``; a code block's content; empty for the others.
    """

    kind: str
    text: str
    line_start: int  # its first source line, 0-based
    line_end: int  # one past its last
    level: int = 0  # a heading's level, 1 to 6
    depth: int = 0  # how many block quotes and list items it stands in: 0 is the top level
    lists: tuple[int, ...] = ()  # the lists it stands in, outermost first, numbered through the text
    item_lead: bool = False  # the first block of the list item it stands in: what the bullet introduces
    numbered: bool = False  # the innermost list is an ordered one
    cells: tuple[str, ...] = ()  # a table row's cells, inline source; as many as its header has
    header: tuple[str, ...] = ()  # a body row: its table's header cells
    heading_path: tuple[str, ...] = ()  # the top-level headings in force, its own included (``path_title``)


# A backslash escape: the ASCII punctuation character after it is text (``\[``, ``\#``, ``\|``).
BACKSLASH_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def unescaped(text: str) -> str:
    """``text`` with each backslash escape read as its character, as the viewer shows it ("\\[draft\\]" is
    "[draft]")."""
    return BACKSLASH_ESCAPE.sub(r"\1", text)


def heading_title(text: str) -> str:
    """A heading's inline source on one line (a setext heading may span several), its escapes read as their
    characters: the title and the heading paths show "[Draft] Plan | Q3", as the viewer does."""
    return unescaped(" ".join(line.strip() for line in text.split("\n")))


# Every passage and outline entry under a heading repeats its title in their heading path: a title of
# 200,000 characters over 28,000 short sections made billions of characters of paths (quadratic). Titles
# people write are far shorter (at most 114 characters in the demo corpus and the fixtures).
MAX_PATH_TITLE_CHARS = 200


def path_title(title: str) -> str:
    """A heading's title as heading paths hold it: cut to ``MAX_PATH_TITLE_CHARS``, ending "…" when cut."""
    if len(title) <= MAX_PATH_TITLE_CHARS:
        return title
    return title[: MAX_PATH_TITLE_CHARS - 1] + "…"


def source_lines(text: str) -> Callable[[list[int]], tuple[int, int]]:
    """A token's ``map`` (markdown-it lines) → ``(first, end)`` source lines, 0-based, end exclusive."""
    if not _OTHER_LINE_BREAKS.search(text):
        return lambda line_map: (line_map[0], line_map[1])
    line_starts = [0, *accumulate(map(len, text.splitlines(keepends=True)))]
    total = len(line_starts) - 1
    markdown_starts = [0, *(match.end() for match in _MARKDOWN_IT_BREAK.finditer(text))]
    converted = [bisect_right(line_starts, start) - 1 if start < len(text) else total for start in markdown_starts]
    converted.append(total)  # the end of a map that reaches the end of the text
    return lambda line_map: (converted[line_map[0]], converted[line_map[1]])


# An upload reads its text's blocks twice (its title, then its passages), and a long text of small blocks
# (400,000 characters of table cells or list items) takes seconds to parse: the last two texts' blocks are
# kept (tens of MB at worst), as a tuple of frozen blocks that no caller can change.
@lru_cache(maxsize=2)
def markdown_blocks(text: str) -> tuple[Block, ...]:
    """The leaf blocks of ``text`` in order, as ``MARKDOWN`` parses it."""
    return tuple(_blocks(text))


def _blocks(text: str) -> list[Block]:
    tokens = _BLOCK_STRUCTURE.parse(text)
    lines = source_lines(text)
    blocks: list[Block] = []
    containers: list[tuple[str, int, bool]] = []  # ("quote" | "list" | "item", number, ordered)
    context: dict = {}  # what a block takes from its containers, worked out again when they change
    counters = {"list": 0, "item": 0}
    lead_pending = -1  # an item whose first block is still to come
    path: list[tuple[int, str]] = []  # (level, title) of the top-level headings in force
    titles: tuple[str, ...] = ()

    def enter_or_leave() -> None:
        lists = [(number, ordered) for what, number, ordered in containers if what == "list"]
        items = [number for what, number, _ in containers if what == "item"]
        context.update(
            depth=len(containers) - len(lists),
            lists=tuple(number for number, _ in lists),
            numbered=bool(lists) and lists[-1][1],
            item=items[-1] if items else -1,
        )

    def add(kind: str, line_map: list[int], text: str = "", **fields) -> None:
        nonlocal lead_pending
        first, end = lines(line_map)
        lead = lead_pending >= 0 and context["item"] == lead_pending
        blocks.append(
            Block(
                kind,
                text,
                first,
                end,
                depth=context["depth"],
                lists=context["lists"],
                item_lead=lead,
                numbered=context["numbered"],
                heading_path=titles,
                **fields,
            )
        )
        if lead:
            lead_pending = -1

    enter_or_leave()
    position = 0
    while position < len(tokens):
        token = tokens[position]
        kind = token.type
        position += 1
        if kind == "blockquote_open":
            containers.append(("quote", 0, False))
        elif kind in _LIST_OPEN:
            counters["list"] += 1
            containers.append(("list", counters["list"], _LIST_OPEN[kind]))
        elif kind == "list_item_open":
            counters["item"] += 1
            containers.append(("item", counters["item"], False))
            lead_pending = counters["item"]
        elif kind in _CLOSE:
            containers.pop()
        elif kind == "heading_open":
            level, content = int(token.tag[1]), tokens[position].content
            if not containers:
                while path and path[-1][0] >= level:
                    path.pop()
                path.append((level, path_title(heading_title(content))))
                titles = tuple(title for _, title in path if title)
            add("heading", token.map, content, level=level)
            position += 2
            continue
        elif kind == "paragraph_open":
            add("paragraph", token.map, tokens[position].content)
            position += 2
            continue
        elif kind in ("fence", "code_block"):
            add("code", token.map, token.content)
            continue
        elif kind == "hr":
            add("rule", token.map)
            continue
        elif kind == "table_open":
            position = _table(tokens, position, add)
            continue
        enter_or_leave()  # a container opened or closed
    return blocks


def _table(tokens, position: int, add: Callable[..., None]) -> int:
    """Add a table's rows (each a ``tr`` with its cells' inline tokens); the position after it."""
    header: tuple[str, ...] = ()
    in_body = False
    row_map: list[int] = []
    cells: list[str] = []
    while tokens[position].type != "table_close":
        token = tokens[position]
        if token.type == "tbody_open":
            in_body = True
        elif token.type == "tr_open":
            row_map, cells = token.map, []
        elif token.type == "inline":
            cells.append(token.content)
        elif token.type == "tr_close" and in_body:
            add("table_row", row_map, cells=tuple(cells), header=header)
        elif token.type == "tr_close":
            header = tuple(cells)
            add("table_header", row_map, cells=header)
        position += 1
    return position + 1
