"""The document viewer, behind both of its doors: the staff viewer (``documents.show``) and a
member's cited document (``chat.document``).

Both show one revision's text, formatted or with line numbers, with a cited
passage highlighted and figures in place; only the address of a figure differs
(each door serves figures through its own permission check), so the caller
passes it in.
"""

from __future__ import annotations

from collections.abc import Callable

from markupsafe import Markup

from portal.documents.render import FigureImage, PassageLines, numbered_lines, render_markdown
from portal.documents.render_pdf import render_pdf_text
from portal.models import Document, Figure, Passage, Revision

VIEWS = ("formatted", "lines")


def chosen_view(requested: str | None) -> str:
    """``lines`` when asked for, else the formatted text."""
    return requested if requested in VIEWS else "formatted"


def passages_of(revision: Revision) -> list[Passage]:
    return list(Passage.select().where(Passage.revision == revision).order_by(Passage.ordinal))


def document_body(
    revision: Revision,
    kind: str,
    passages: list[Passage],
    view: str,
    highlighted: Passage | None,
    figure_url: Callable[[int], str],
) -> Markup | list:
    """The text as HTML (``formatted``) or as numbered lines (``lines``), ``highlighted`` marked.

    A PDF's text keeps its lines and marks exactly the passage's characters (``render_pdf``);
    other kinds are Markdown, marked by block. ``figure_url(number)`` is asked only for figures
    the revision has; a marker naming another number stays text.
    """
    if view == "lines":
        return numbered_lines(revision.text, (highlighted.line_start, highlighted.line_end) if highlighted else None)
    kept = {
        f.number: (f.width, f.height)
        for f in Figure.select(Figure.number, Figure.width, Figure.height).where(Figure.revision == revision)
    }

    def figure(number: int) -> FigureImage | None:
        return FigureImage(figure_url(number), *kept[number]) if number in kept else None

    anchors = [PassageLines(p.ordinal, p.line_start, p.line_end) for p in passages]
    if kind == "pdf":
        highlight = (highlighted.char_start, highlighted.char_end) if highlighted else None
        return render_pdf_text(revision.text, anchors, highlight, figure)
    highlight = (highlighted.line_start, highlighted.line_end) if highlighted else None
    return render_markdown(revision.text, anchors, highlight, figure)


def figure_of(document: Document, version: int, number: int) -> Figure | None:
    """Figure ``number`` of ``document``'s revision ``version``, while that revision is kept."""
    return (
        Figure.select()
        .join(Revision)
        .where((Revision.document == document) & (Revision.version == version) & (Figure.number == number))
        .first()
    )


def revision_history(document: Document) -> list[Revision]:
    """The kept revisions, newest first, with what the viewer's side column shows of them."""
    return list(
        Revision.select(Revision.version, Revision.sha256, Revision.created_at, Revision.created_by)
        .where(Revision.document == document)
        .order_by(Revision.version.desc())
    )
