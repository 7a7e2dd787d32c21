"""Document text to safe HTML: Markdown, passage anchors, highlights, figures in place.

Markdown is rendered by ``ingest.markdown_blocks.MARKDOWN``, the parser the passage splitter
and the answerer read blocks with, raw HTML disabled; ``[Figure N: label]`` markers, as the
parser reads them in the text as written, become images, each figure once (at its first
marker: no id twice on a page), every value escaped again where it is put into markup (a
Markdown image is a link, never loaded); then the
whole result is sanitized with nh3, last, so nothing added after the renderer
can carry an attribute outside the allow-list (an ``hx-*`` attribute would act
in the reader's browser). The document's headings are one level down (its ``#`` an ``h2``):
the page's ``h1`` is its title. Each top-level block carries its source line, the
first block of each passage carries ``id="passage-N"`` so a citation can
scroll to it, and the blocks of a cited passage get the class ``cited``.
A figure carries its stored width and height, so the page keeps its room before the image
arrives (a scroll to the cited passage stays where it landed), and is a link to the image
at full size (a phone shrinks it to the screen).
"""

from __future__ import annotations

import bisect
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import nh3
from markdown_it.token import Token
from markupsafe import Markup, escape

from portal.answers.citations import SHOWN_MARKER, marker_pieces
from portal.controls import strip_control_characters
from portal.ingest.markdown_blocks import ANSWER_MARKDOWN as _ANSWER_MARKDOWN
from portal.ingest.markdown_blocks import MARKDOWN, source_lines
from portal.ingest.markers import is_page_line, is_the_images_line

_BLOCK_TAGS = {
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "li",
    "pre",
    "blockquote",
    "table",
    "hr",
    "div",
    "code",
}
_ALLOWED_TAGS = _BLOCK_TAGS | {
    "a",
    "em",
    "strong",
    "del",
    "br",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "span",
    "mark",
    "img",
    "s",
    "sup",
    "sub",
}
_ALLOWED_ATTRIBUTES = {
    "*": {"class", "id", "data-line"},
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "loading", "width", "height"},
    "ol": {"start"},
}


@dataclass(frozen=True)
class FigureImage:
    """Where a kept figure is served and its size in pixels, as stored with the revision."""

    src: str
    width: int
    height: int


FigureLookup = Callable[[int], FigureImage | None]
"""A revision's kept figures by number (the viewer's ``_kept_figures``): None for a number it does not have."""


@dataclass(frozen=True)
class PassageLines:
    ordinal: int
    line_start: int
    line_end: int


def render_markdown(
    text: str,
    passages: list[PassageLines] = (),
    highlight: tuple[int, int] | None = None,
    figure: FigureLookup | None = None,
    section_anchors: dict[int, str] | None = None,
) -> Markup:
    """Render ``text``; ``highlight`` is a 1-based inclusive line range to mark as cited.

    ``section_anchors`` maps a 0-based line to an id: an empty anchor with that id is put
    before the top-level block holding the line, so the outline can jump there (a block may
    carry a passage id of its own).
    """
    tokens = MARKDOWN.parse(text)
    lines = source_lines(text)  # passage lines are counted as str.splitlines counts them
    starts = [p.line_start for p in passages]
    anchored: set[int] = set()
    waiting = deque(sorted((section_anchors or {}).items()))  # taken from the front: a list's pop(0) is quadratic
    before: dict[int, list[str]] = {}  # token position → anchor ids to put before it
    for position, token in enumerate(tokens):
        if token.level != 0 or token.nesting == -1 or not token.map:
            continue
        first, end = lines(token.map)
        first_line, last_line = first + 1, end
        while waiting and waiting[0][0] < end:
            before.setdefault(position, []).append(waiting.popleft()[1])
        token.attrSet("data-line", str(first_line))
        classes = []
        if highlight and first_line <= highlight[1] and last_line >= highlight[0]:
            classes.append("cited")
        position = bisect.bisect_right(starts, first_line) - 1
        if position >= 0 and position not in anchored:
            anchored.add(position)
            token.attrSet("id", f"passage-{passages[position].ordinal}")
        if classes:
            token.attrSet("class", " ".join(classes))
    _mark_page_lines(tokens)
    _mark_images_line(tokens)
    _inert_content(tokens)
    _figures_in_place(tokens, once_each(figure))
    _below_the_page_title(tokens)
    _hyphenated_words_whole_in_cells(tokens)
    tokens = _with_anchors(tokens, before)
    body = MARKDOWN.renderer.render(tokens, MARKDOWN.options, {})
    return sanitized(body)


def sanitized(body: str, tags: set[str] = _ALLOWED_TAGS) -> Markup:
    """The last step of every rendering: ``body`` cleaned to an allow-list of tags (the viewer's unless
    given), attributes and link schemes, and of the characters text loses (``portal.controls``).

    Stored text holds no reordering control, but Markdown writes one as an entity (``&#x202E;``, in text or a
    link's title), which the parser decodes, and so does the cleaner for an entity in raw HTML: the page showed
    "rm -rf" reversed. So they go here, from what the cleaner writes, where every entity has become its
    character."""
    cleaned = nh3.clean(
        _text_in_pieces(body),
        tags=tags,
        attributes=_ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return Markup(strip_control_characters(cleaned))


# nh3's serializer (html5ever's) reads from each "&" or no-break space it writes out to the end of that text
# node, or to the next "<" in it: a paragraph of 400,000 ampersands took 1.7 s to clean, 200,000 of them before
# 200,000 emoji 3.4 s, the square of the text. So a long run of text reaches it in pieces, an empty comment
# between two: separate text nodes, and nh3 drops comments, so the HTML it gives back is the same.
TEXT_PIECE_CHARS = 1_000
_LONGEST_REFERENCE = 10  # "&#x1F600;": the renderers escape text with short references (&amp; &lt; &#34; …)
_TEXT_RUN = re.compile(r"(?:^|(?<=>))[^<]+")  # the text after a tag: escaped, so it holds no "<" or ">"


def _text_in_pieces(body: str) -> str:
    """``body`` with an empty comment every ``TEXT_PIECE_CHARS`` characters of each run of text, never inside
    a character reference."""
    return _TEXT_RUN.sub(lambda run: _pieces(run.group()), body) if len(body) > TEXT_PIECE_CHARS else body


def _pieces(text: str) -> str:
    if len(text) <= TEXT_PIECE_CHARS:
        return text
    pieces, start = [], 0
    while len(text) - start > TEXT_PIECE_CHARS:
        cut = start + TEXT_PIECE_CHARS
        reference = text.rfind("&", max(start, cut - _LONGEST_REFERENCE), cut)
        end = text.find(";", reference, reference + _LONGEST_REFERENCE) if reference != -1 else -1
        if end >= cut:  # the cut would fall inside "&…;": before it, or after it when it starts the piece
            cut = reference if reference > start else end + 1
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return "<!---->".join(pieces)


def _inert_content(tokens) -> None:
    """What the text itself names stays out of the page's attributes and requests: a code block's info
    string puts no class on it, and a Markdown image is shown as a link to its address, labelled with its
    alt text, not loaded — a reader's browser would fetch it as the reader (another site's tracking
    pixel, or a portal address). The document's own figures come from its ``[Figure N: …]`` markers."""
    for token in tokens:
        if token.type == "fence":
            token.info = ""
        elif token.type == "inline" and token.children:
            token.children = _links_elsewhere_only(_images_as_links(token.children, inside_link=False))


# Where a link may lead: another site, an e-mail, or a place on the page. A relative address ("CONTRIBUTING.md",
# "/docs/LICENSE", "x.png") pointed at the document's own repository, and from the portal's pages it led to 404s.
_LINK_TARGET = re.compile(r"(?:https?://|mailto:|#)", re.IGNORECASE)


def _links_elsewhere_only(children: list[Token]) -> list[Token]:
    """``children`` with each link to a relative address replaced by its text (``_LINK_TARGET``)."""
    result, dropping = [], False
    for child in children:
        if child.type == "link_open" and not _LINK_TARGET.match(str(child.attrGet("href") or "")):
            dropping = True
            continue
        if child.type == "link_close" and dropping:
            dropping = False
            continue
        result.append(child)
    return result


def _figures_in_place(tokens, figure: FigureLookup | None) -> None:
    """Each figure marker the parser read becomes its figure (``figure_html``), except in a link's text (links
    do not nest; the image's own link would cut the outer one short), where it stays text."""
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        depth = 0
        for child in token.children:
            depth += {"link_open": 1, "link_close": -1}.get(child.type, 0)
            if child.type == "figure_marker" and not depth:
                shown = figure_html(child.meta["number"], child.meta["label"], figure, child.content)
                child.type, child.content = "html_inline", shown


def once_each(figure: FigureLookup | None) -> FigureLookup | None:
    """``figure`` answering for each number only the first time it is asked: a figure stands at its first
    marker, and a later one is its text, so no id is on a page twice."""
    if figure is None:
        return None
    shown: set[int] = set()

    def first_time(number: int) -> FigureImage | None:
        if number in shown:
            return None
        shown.add(number)
        return figure(number)

    return first_time


def _below_the_page_title(tokens) -> None:
    """Each heading one level down (``#`` an ``h2``): the page's one ``h1`` is its title, and the document's
    headings sit below it in the outline. Markup has no seventh level, so ``#####`` and ``######`` both
    become ``h6``; ids and anchors are on the tokens, so they stay."""
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(int(token.tag[1]) + 1, 6)}"


# A word with a hyphen inside it: a date (2026-03-13), an id (FS-SD-021), a name (order-desk). Tried only
# where a word starts: tried inside a long word without a hyphen, from each of its characters, it read the
# rest of the word every time (a cell of one 390,000-character word and a " -": over half an hour to render).
_HYPHENATED = re.compile(r"(?<![^\s-])[^\s-]++(?:-[^\s-]++)+")


def _hyphenated_words_whole_in_cells(tokens) -> None:
    """In a table cell a hyphenated word stays on one line (``span.nobr``): Chromium breaks a line after
    any hyphen, so a cell at its narrowest showed "2026-03-" over "13". A table too wide for its column
    scrolls inside itself instead (cairn.css)."""
    in_cell = False
    for token in tokens:
        if token.type in ("th_open", "td_open", "th_close", "td_close"):
            in_cell = token.nesting == 1
        elif in_cell and token.type == "inline" and token.children:
            token.children = [piece for child in token.children for piece in _hyphenated_kept_whole(child)]


def _hyphenated_kept_whole(child: Token) -> list[Token]:
    if child.type != "text" or "-" not in child.content:
        return [child]
    pieces, position = [], 0
    for match in _HYPHENATED.finditer(child.content):
        if match.start() > position:
            pieces.append(Token("text", "", 0, content=child.content[position : match.start()]))
        pieces += [
            Token("nobr_open", "span", 1, attrs={"class": "nobr"}),
            Token("text", "", 0, content=match.group()),
            Token("nobr_close", "span", -1),
        ]
        position = match.end()
    if position < len(child.content):
        pieces.append(Token("text", "", 0, content=child.content[position:]))
    return pieces


def _images_as_links(children: list[Token], inside_link: bool) -> list[Token]:
    """``children`` with each image replaced by a link to its address holding its alt text (only the alt
    text inside a link already: links do not nest); the address as the text when there is no alt text."""
    result = []
    depth = 1 if inside_link else 0
    for child in children:
        depth += {"link_open": 1, "link_close": -1}.get(child.type, 0)
        if child.type != "image":
            result.append(child)
            continue
        label = _images_as_links(child.children or [], inside_link=True) if child.children else []
        if not label:
            label = [Token("text", "", 0, content=str(child.attrGet("src") or ""))]
        if depth:
            result += label
            continue
        opening = Token("link_open", "a", 1, attrs={"href": child.attrGet("src") or ""})
        if child.attrGet("title"):
            opening.attrSet("title", child.attrGet("title"))
        result += [opening, *label, Token("link_close", "a", -1)]
    return result


SECTION_ANCHOR = Markup('<span class="section-anchor" id="{id}"></span>')


def _with_anchors(tokens, before: dict[int, list[str]]) -> list:
    """``tokens`` with an empty anchor block before the positions ``before`` names."""
    if not before:
        return tokens
    result = []
    for position, token in enumerate(tokens):
        for anchor in before.get(position, ()):
            block = Token("html_block", "", 0)
            block.content = SECTION_ANCHOR.format(id=anchor)
            result.append(block)
        result.append(token)
    return result


def render_answer(answer: str, cited: set[int], source_url: Callable[[int], str], markdown: bool = True) -> Markup:
    """An answer as the viewer renders text, sanitized: a model's Markdown, or (``markdown`` False) the
    extractive answer's plain text, one paragraph whose ``*``, ``_``, ``\\``, ``<`` and ``&`` are the
    documents' characters, never syntax (its units are the passages' text with the syntax already out:
    ``answers.units.plain``).

    Each item of a ``[n]`` marker whose first number is in ``cited`` becomes a link to
    ``source_url(n)``; markers in code spans stay code. Single line breaks are kept (a model
    writes them as breaks), an image is the viewer's link labelled with its alt text, never
    loaded (``_inert_content``: an answer shows no picture from anywhere), and a heading is a
    bold paragraph, outside the page's outline.
    """
    tokens = _ANSWER_MARKDOWN.parse(answer) if markdown else _one_paragraph(answer)
    _inert_content(tokens)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):  # a heading of the page's outline, not the answer's
            token.tag = "p"
            if token.nesting == 1:
                token.attrSet("class", "answer-heading")
        elif token.type == "inline" and token.children:
            token.children = _linked_markers(token.children, cited, source_url)
    body = _ANSWER_MARKDOWN.renderer.render(tokens, _ANSWER_MARKDOWN.options, {})
    return sanitized(body.strip(), _ALLOWED_TAGS - {"img", "h1", "h2", "h3", "h4", "h5", "h6"})


def _one_paragraph(text: str) -> list[Token]:
    """The tokens of one paragraph holding ``text`` as text: what the parser gives for a line without syntax."""
    inline = Token("inline", "", 0, content=text, children=[Token("text", "", 0, content=text)])
    return [Token("paragraph_open", "p", 1), inline, Token("paragraph_close", "p", -1)]


def answer_text(answer: str, markdown: bool = True) -> str:
    """An answer's text as ``render_answer`` shows it, on one line: for excerpts and announcements."""
    return render_answer(answer, set(), str, markdown).striptags()


_CITE_LINK = Markup('<a class="cite" href="{href}">{text}</a>')


def _linked_markers(children: list[Token], cited: set[int], source_url: Callable[[int], str]) -> list[Token]:
    """``children`` with the citation markers of their text linked (``_marker_links``), except in a link's
    text (a link, an autolink, an image's link): links do not nest, and the HTML parser would cut the outer
    link short at a citation inside it. There the marker stays text."""
    result, depth = [], 0
    for child in children:
        depth += {"link_open": 1, "link_close": -1}.get(child.type, 0)
        result += [child] if depth else _marker_links(child, cited, source_url)
    return result


def _marker_links(token: Token, cited: set[int], source_url: Callable[[int], str]) -> list[Token]:
    """A text token split at its citation markers, each marker one token of escaped markup (each cited
    item a link, built with ``Markup.format``); other tokens as they are."""
    if token.type != "text" or "[" not in token.content:
        return [token]
    pieces: list[Token] = []

    def add(kind: str, content: str) -> None:
        if content:
            piece = Token(kind, "", 0)
            piece.content = content
            pieces.append(piece)

    position = 0
    for match in SHOWN_MARKER.finditer(token.content):
        add("text", token.content[position : match.start()])
        items = (
            _CITE_LINK.format(href=source_url(number), text=item) if number in cited else escape(item)
            for item, number in marker_pieces(match.group(1))
        )
        add("html_inline", Markup("[{}]").format(Markup("").join(items)))
        position = match.end()
    add("text", token.content[position:])
    return pieces


def _mark_page_lines(tokens) -> None:
    """A PDF's ``Page N`` line becomes a visible page divider."""
    for opening, inline in zip(tokens, tokens[1:]):
        if opening.type == "paragraph_open" and inline.type == "inline" and is_page_line(inline.content):
            existing = opening.attrGet("class")
            opening.attrSet("class", f"{existing} page-line" if existing else "page-line")


def _mark_images_line(tokens) -> None:
    """The ``Images: K kept, N not kept (…)`` line ingest ends a text with reads as a note on the document, not as
    its last paragraph (an author's line shaped like it was neutralised at ingest: ``markers``)."""
    if len(tokens) >= 3 and tokens[-3].type == "paragraph_open" and tokens[-2].type == "inline":
        if tokens[-3].level == 0 and is_the_images_line(tokens[-2].content):
            existing = tokens[-3].attrGet("class")
            tokens[-3].attrSet("class", f"{existing} images-line" if existing else "images-line")


_FIGURE_HTML = Markup(
    '<span class="figure" id="figure-{number}">'
    '<a class="figure-open" href="{src}" title="Open figure {number} full size">'
    '<img src="{src}" alt="{label}" width="{width}" height="{height}" loading="lazy"></a>'
    '<span class="figure-caption">Figure {number}: {label}</span></span>'
)


def figure_html(number: int, label: str, figure: FigureLookup | None, written: str) -> Markup:
    """What a ``[Figure N: label]`` marker becomes in both renderings (Markdown and a PDF's lines): figure
    ``number`` as its image (a link to it at full size) with its caption; the marker as ``written`` (text)
    when ``figure`` does not have it, so "[Figure 007: x]" typed into a Markdown file is not shown as
    "[Figure 7: x]". ``label`` is plain text: ``Markup.format`` escapes every value, quotes included."""
    image = figure(number) if figure is not None else None
    if image is None:
        return escape(written)
    return _FIGURE_HTML.format(number=number, src=image.src, label=label, width=image.width, height=image.height)


def numbered_lines(text: str, highlight: tuple[int, int] | None = None, first: int = 1) -> list[tuple[int, str, bool]]:
    """The text as (line number, line, highlighted) rows for the line view, numbered from ``first``."""
    return [
        (n, line, bool(highlight and highlight[0] <= n <= highlight[1]))
        for n, line in enumerate(text.split("\n"), start=first)
    ]
