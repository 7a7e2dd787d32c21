"""The numbered references a run issues to the model, and how they are labelled."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    """One passage issued to the model as reference ``[n]``, exactly as issued.

    Retrieval builds these; the answer layer only reads them. ``page`` is set for
    PDF passages, ``heading_path`` (``Setup > Network > Proxy``) for Markdown and
    Word passages; either may be empty.
    """

    n: int
    passage_id: int
    document_id: int
    document_title: str
    pack: str
    pack_title: str
    version: int
    page: int | None
    heading_path: str
    line_start: int
    line_end: int
    text: str


def label(ref: Reference) -> str:
    """``[n] Pack title — Document title (page N | section A > B)``, shown to model and reader."""
    where = ""
    if ref.page is not None:
        where = f" (page {ref.page})"
    elif ref.heading_path:
        where = f" (section {ref.heading_path})"
    return f"[{ref.n}] {ref.pack_title} — {ref.document_title}{where}"
