"""A PDF's text as its reader found it: the lines and paragraph breaks kept, the cited passage marked
to the character.

A PDF's text is not Markdown: read as Markdown its lines ran together into paragraphs, a heading
merged into the text after it, and a line starting with ``1.`` or ``-`` became a list whose
highlight spread over everything the list held. Here each line of the text is one line on the
screen (``span.line``), except that a line starting with a lower-case letter continues the line
before it (the PDF wrapped a sentence there; joined, it reflows on a narrow screen instead of
leaving ragged stubs), a blank line ends a paragraph, a ``Page N`` line is the page divider, a
figure marker becomes its figure (at its first marker only, as in ``render``), and exactly the
cited passage's characters (``char_start`` to ``char_end`` of the revision text) are wrapped in
``mark.cited``, one mark per line. Every piece of text is escaped here and the result is cleaned
by the same allow-list as the Markdown viewer (``render.sanitized``).
"""

from __future__ import annotations

from markupsafe import Markup, escape

from portal.documents.render import SECTION_ANCHOR, FigureLookup, PassageLines, figure_html, once_each, sanitized
from portal.ingest.markdown_blocks import LINE_BREAKS
from portal.ingest.markers import figure_marker_matches, is_page_line, only_figure_markers


def render_pdf_text(
    text: str,
    passages: list[PassageLines] = (),
    highlight: tuple[int, int] | None = None,
    figure: FigureLookup | None = None,
    section_anchors: dict[int, str] | None = None,
) -> Markup:
    """Render ``text``; ``highlight`` is the ``[start, end)`` character range of the cited passage.

    ``section_anchors`` maps a 0-based line to an id: an empty anchor with that id starts a new block
    before the line, so the outline (a PDF's pages) can jump there.
    """
    section_anchors = section_anchors or {}
    figure = once_each(figure)
    anchors: dict[int, int] = {}
    for passage in passages:
        anchors.setdefault(passage.line_start, passage.ordinal)
    blocks: list[str] = []
    paragraph: list[str] = []

    def end_paragraph() -> None:
        if paragraph:
            blocks.append(f"<p>{''.join(paragraph)}</p>")
            paragraph.clear()

    position = 0
    for number, raw in enumerate(text.splitlines(keepends=True), start=1):
        start, content = position, raw.rstrip(LINE_BREAKS)
        position += len(raw)
        if not content.strip():
            end_paragraph()
            continue
        if number - 1 in section_anchors:
            end_paragraph()
            blocks.append(str(SECTION_ANCHOR.format(id=section_anchors[number - 1])))
        line = _line_html(number, content, start, anchors.get(number), highlight, figure)
        if is_page_line(content.strip()):
            end_paragraph()
            blocks.append(f'<p class="page-line">{line}</p>')
        elif only_figure_markers(content):
            end_paragraph()
            blocks.append(f'<div class="figure-line">{line}</div>')
        else:
            if paragraph:  # the line break before this line: a space inside the mark when the passage spans it
                joined = _marked(" ") if _inside(start - 1, start, highlight) else " "
                paragraph.append(joined if _continues(content) else "<br>")
            paragraph.append(line)
    end_paragraph()
    return sanitized("\n".join(blocks))


def _line_html(
    number: int,
    content: str,
    start: int,
    anchor: int | None,
    highlight: tuple[int, int] | None,
    figure: FigureLookup | None,
) -> str:
    """One line as ``span.line``: its text escaped, its figures in place, the highlighted part marked."""
    parts: list[str] = []
    at = 0
    for marker_start, marker_end, figure_number, label in figure_marker_matches(content):
        parts.append(_text_html(content, at, marker_start, start, highlight))
        shown = str(figure_html(figure_number, label, figure, content[marker_start:marker_end]))
        parts.append(_marked(shown) if _inside(start + marker_start, start + marker_end, highlight) else shown)
        at = marker_end
    parts.append(_text_html(content, at, len(content), start, highlight))
    anchor_id = f' id="passage-{anchor}"' if anchor is not None else ""
    return f'<span class="line" data-line="{number}"{anchor_id}>{"".join(parts)}</span>'


def _text_html(content: str, begin: int, end: int, line_start: int, highlight: tuple[int, int] | None) -> str:
    """``content[begin:end]`` escaped, the part inside ``highlight`` (document offsets) marked."""
    if begin >= end:
        return ""
    if highlight is None:
        return str(escape(content[begin:end]))
    mark_begin = min(max(highlight[0] - line_start, begin), end)
    mark_end = max(min(highlight[1] - line_start, end), mark_begin)
    before, marked, after = content[begin:mark_begin], content[mark_begin:mark_end], content[mark_end:end]
    return str(escape(before)) + (_marked(escape(marked)) if marked else "") + str(escape(after))


def _continues(content: str) -> bool:
    """Whether a line goes on with the sentence of the line before: it starts with a lower-case letter."""
    first = content.lstrip()[:1]
    return first.islower()


def _marked(html: str) -> str:
    return f'<mark class="cited">{html}</mark>'


def _inside(begin: int, end: int, highlight: tuple[int, int] | None) -> bool:
    return highlight is not None and highlight[0] <= begin and end <= highlight[1]
