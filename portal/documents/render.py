"""Document text to safe HTML: Markdown, passage anchors, highlights, figures in place.

Markdown is rendered by ``ingest.markdown_blocks.MARKDOWN``, the parser the passage splitter
and the answerer read blocks with, raw HTML disabled; ``[Figure N: label]`` markers
become images, every value escaped again where it is put into markup; then the
whole result is sanitized with nh3, last, so nothing added after the renderer
can carry an attribute outside the allow-list (an ``hx-*`` attribute would act
in the reader's browser). Each top-level block carries its source line, the
first block of each passage carries ``id="passage-N"`` so a citation can
scroll to it, and the blocks of a cited passage get the class ``cited``.
A figure carries its stored width and height, so the page keeps its room before the image
arrives (a scroll to the cited passage stays where it landed), and is a link to the image
at full size (a phone shrinks it to the screen).
"""

from __future__ import annotations

import bisect
import html
from collections.abc import Callable
from dataclasses import dataclass

import nh3
from markupsafe import Markup, escape

from portal.ingest.markdown_blocks import MARKDOWN, source_lines
from portal.ingest.markers import figure_marker, is_page_line, replace_figure_markers_in_html

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


@dataclass(frozen=True)
class PassageLines:
    ordinal: int
    line_start: int
    line_end: int


def render_markdown(
    text: str,
    passages: list[PassageLines] = (),
    highlight: tuple[int, int] | None = None,
    figure: Callable[[int], FigureImage | None] | None = None,
) -> Markup:
    """Render ``text``; ``highlight`` is a 1-based inclusive line range to mark as cited."""
    tokens = MARKDOWN.parse(text)
    lines = source_lines(text)  # passage lines are counted as str.splitlines counts them
    starts = [p.line_start for p in passages]
    anchored: set[int] = set()
    for token in tokens:
        if token.level != 0 or token.nesting == -1 or not token.map:
            continue
        first, end = lines(token.map)
        first_line, last_line = first + 1, end
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
    body = MARKDOWN.renderer.render(tokens, MARKDOWN.options, {})
    if figure is not None:
        body = replace_figure_markers_in_html(
            body, lambda number, label: figure_html(number, html.unescape(label), figure(number))
        )
    return sanitized(body)


def sanitized(body: str) -> Markup:
    """``body`` cleaned to the viewer's allow-list of tags, attributes and link schemes."""
    return Markup(
        nh3.clean(
            body,
            tags=_ALLOWED_TAGS,
            attributes=_ALLOWED_ATTRIBUTES,
            url_schemes={"http", "https", "mailto"},
            link_rel="noopener noreferrer nofollow",
        )
    )


def _mark_page_lines(tokens) -> None:
    """A PDF's ``Page N`` line becomes a visible page divider."""
    for opening, inline in zip(tokens, tokens[1:]):
        if opening.type == "paragraph_open" and inline.type == "inline" and is_page_line(inline.content):
            existing = opening.attrGet("class")
            opening.attrSet("class", f"{existing} page-line" if existing else "page-line")


_FIGURE_HTML = Markup(
    '<span class="figure" id="figure-{number}">'
    '<a class="figure-open" href="{src}" title="Open figure {number} full size">'
    '<img src="{src}" alt="{label}" width="{width}" height="{height}" loading="lazy"></a>'
    '<span class="figure-caption">Figure {number}: {label}</span></span>'
)


def figure_html(number: int, label: str, image: FigureImage | None) -> Markup:
    """Figure ``number`` as its image (a link to it at full size) with its caption; the marker as text
    when the revision has no such figure. ``label`` is plain text: ``Markup.format`` escapes every value,
    quotes included."""
    if image is None:
        return escape(figure_marker(number, label))
    return _FIGURE_HTML.format(number=number, src=image.src, label=label, width=image.width, height=image.height)


def numbered_lines(text: str, highlight: tuple[int, int] | None = None) -> list[tuple[int, str, bool]]:
    """The text as (line number, line, highlighted) rows for the line view."""
    return [
        (n, line, bool(highlight and highlight[0] <= n <= highlight[1]))
        for n, line in enumerate(text.split("\n"), start=1)
    ]
