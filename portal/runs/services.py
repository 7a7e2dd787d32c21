"""The run record shown to people: a run's sources, its answer as HTML, citations in the viewer.

Asking (retrieval, the evidence check, the answer, storing the run) is
``portal.runs.ask``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from markupsafe import Markup
from peewee import JOIN

from portal import access, storage
from portal.answers.grounding import writes_markdown
from portal.answers.references import grounding_reference
from portal.db import KeptSelect
from portal.documents.render import render_answer
from portal.models import (
    RUN_STATUSES,
    Document,
    Figure,
    Pack,
    Passage,
    ReceiptFigure,
    Revision,
    Run,
    RunReference,
    User,
)
from portal.paging import ListPage

STATUS_LABELS = {status: status.replace("_", " ") for status in RUN_STATUSES}  # "completed with warning"

RUNS_PER_PAGE = 50  # the run list, a page at a time


def forget_document_text(document_pk: int) -> None:
    """A document was deleted: its receipts keep their place and numbers but lose its text and figures.

    The kept figures' files go with the document's folder."""
    forget_documents_text([document_pk])


def forget_documents_text(document_pks: list[int]) -> None:
    """``forget_document_text`` for several documents at once (a pack's, when it is deleted)."""
    cited = RunReference.document_pk.in_(document_pks)
    RunReference.update(text=None).where(cited).execute()
    ReceiptFigure.delete().where(ReceiptFigure.document_pk.in_(document_pks)).execute()
    for row in RunReference.select().where(cited & ~RunReference.figures.is_empty()):
        row.figures = [{"number": f["number"], "label": None, "figure_id": None} for f in row.figures]
        row.save(only=[RunReference.figures])


def keep_cited_figures(document_pk: int, figures: list[Figure], folder: str, files: storage.FileChanges) -> list[str]:
    """Before ``figures`` go with their purged revision, copy those a receipt cites to ``folder``.

    The receipt outlives later edits (SPEC 7), images included; only deleting the
    document takes them. Returns the paths written.
    """
    if not figures:
        return []
    cited = {
        entry.get("figure_id")
        for row in RunReference.select(RunReference.figures).where(
            (RunReference.document_pk == document_pk) & ~RunReference.figures.is_empty()
        )
        for entry in row.figures
    }
    written = []
    for figure in figures:
        if figure.id not in cited:
            continue
        path = f"{folder}/figure-{figure.id}.webp"
        files.write(path, storage.read(figure.path))
        written.append(path)
        ReceiptFigure.create(
            figure_id=figure.id, document_pk=document_pk, path=path, width=figure.width, height=figure.height
        )
    return written


def cited_figure_path(run: Run, n: int, number: int) -> str | None:
    """The file of figure ``number`` of the run's receipt entry ``n``: its revision's, else the copy the
    receipt kept; None when there is no such entry or figure."""
    reference = RunReference.get_or_none((RunReference.run == run) & (RunReference.n == n))
    entry = next((f for f in reference.figures if f["number"] == number), None) if reference else None
    figure_id = entry.get("figure_id") if entry else None
    if figure_id is None:
        return None
    found = (
        Figure.select(Figure.path)
        .join(Revision)
        .where((Figure.id == figure_id) & (Revision.document == reference.document_pk))
        .first()
    )
    if found is None:
        found = ReceiptFigure.get_or_none(
            (ReceiptFigure.figure_id == figure_id) & (ReceiptFigure.document_pk == reference.document_pk)
        )
    return found.path if found else None


# --- The run record ------------------------------------------------------------------


@dataclass
class SourceFigure:
    number: int
    label: str | None
    available: bool


@dataclass
class Source:
    """One issued passage as the run record shows it, with the state of its document now."""

    reference: RunReference
    cited: bool
    text: str | None  # None: "Passage unavailable for this source."
    figures: list[SourceFigure] = field(default_factory=list)
    document: Document | None = None  # the live document the viewer may open for this user
    live_document: Document | None = None  # the live document whoever reads (a caller's own door decides)
    deleted: bool = False
    current_version: int | None = None
    revision_kept: bool = True  # False once the revision it was issued from was purged (or deleted)

    @property
    def changed(self) -> bool:
        return self.current_version is not None and self.current_version != self.reference.version

    @property
    def renamed_to(self) -> str | None:
        """The document's title now, when it was renamed since the run (the receipt keeps the title as issued)."""
        live = self.live_document
        return live.title if live is not None and live.title != self.reference.document_title else None

    @property
    def grounding(self) -> str | None:
        return reference_grounding(self.reference)


def reference_grounding(ref: RunReference) -> str | None:
    """The receipt entry's ``document:<id>@<version>#<sha256>:L<start>-L<end>``."""
    return grounding_reference(ref.document_id, ref.version, ref.sha256, ref.line_start, ref.line_end)


# Each source page reads its answer's receipt, the receipt's documents with their packs, and which of the
# revisions it cites are still kept.
_receipt = KeptSelect(lambda run_id: Run(id=run_id).references())
_receipt_documents = KeptSelect(
    lambda run_id: (
        Document.select(Document, Pack)
        .join(Pack)
        .where(Document.id.in_(RunReference.select(RunReference.document_pk).where(RunReference.run == run_id)))
    )
)
_receipt_revisions_kept = KeptSelect(
    lambda run_id: (
        Revision.select(Revision.document, Revision.version)
        .join(
            RunReference,
            on=(RunReference.document_pk == Revision.document) & (RunReference.version == Revision.version),
        )
        .where(RunReference.run == run_id)
        .tuples()
    )
)


def run_sources(run: Run, user: User) -> list[Source]:
    """The run's receipt as shown to ``user``: text, figures, and how to open each document now."""
    references = _receipt.rows(run.id)
    cited = set(run.cited)
    documents = {d.id: d for d in _receipt_documents.rows(run.id)} if references else {}
    figure_ids = [f["figure_id"] for r in references for f in r.figures if f.get("figure_id")]
    kept_figures = (
        (
            {f.id for f in Figure.select(Figure.id).where(Figure.id.in_(figure_ids))}
            | {
                k.figure_id
                for k in ReceiptFigure.select(ReceiptFigure.figure_id).where(ReceiptFigure.figure_id.in_(figure_ids))
            }
        )
        if figure_ids
        else set()
    )
    kept_revisions = set(_receipt_revisions_kept.rows(run.id)) if references else set()
    sources = []
    for ref in references:
        document = documents.get(ref.document_pk)
        deleted = document is None or document.is_deleted
        sources.append(
            Source(
                reference=ref,
                cited=ref.n in cited,
                text=ref.text,
                figures=[
                    SourceFigure(f["number"], f.get("label"), f.get("figure_id") in kept_figures) for f in ref.figures
                ],
                document=None if deleted or not access.source_document_readable(user, document) else document,
                live_document=None if deleted else document,
                deleted=deleted,
                current_version=None if deleted else document.current_version,
                revision_kept=(ref.document_pk, ref.version) in kept_revisions,
            )
        )
    return sources


def answer_html(run: Run, sources_url: str = "") -> Markup:
    """The run's answer as its pages show it: a model's Markdown or the extractive answer's text
    (``grounding.writes_markdown``), each cited ``[n]`` a link to its source (``#source-n``, on ``sources_url``)."""
    return linked_answer(run.answer, run.cited, sources_url, writes_markdown(run.model))


def linked_answer(answer: str, cited: list[int], sources_url: str = "", markdown: bool = True) -> Markup:
    """``answer`` rendered sanitized (``render_answer``), each cited ``[n]`` a link to ``sources_url#source-n``."""
    return _linked_answer(answer, tuple(cited), sources_url, markdown)


# A conversation page renders up to 50 answers on every visit, and parsing Markdown costs about a
# millisecond an answer; a stored answer never changes, so the same inputs give the same HTML.
@lru_cache(maxsize=1024)
def _linked_answer(answer: str, cited: tuple[int, ...], sources_url: str, markdown: bool) -> Markup:
    return render_answer(answer, set(cited), lambda n: f"{sources_url}#source-{n}", markdown)


@dataclass
class RunCitation:
    """A run's source opened in the document viewer: the receipt's passage and where it is now."""

    run: Run
    reference: RunReference
    current_passage: Passage | None  # highlighted in place when the passage is still in the text
    current_version: int

    @property
    def changed(self) -> bool:
        return self.reference.version != self.current_version

    @property
    def same_passage(self) -> bool:
        return self.current_passage is not None and self.current_passage.id == self.reference.passage_id


def citation_for_viewer(
    user: User, run_id: int | None, n: int | None, document: Document, passages: list[Passage]
) -> RunCitation | None:
    """The receipt entry ``n`` of run ``run_id`` if ``user`` may see that run and it cites ``document``.

    Anything else (no such run, not visible, another document) gives None: the
    viewer then shows the document as if no run had been named.
    """
    if run_id is None or n is None:
        return None
    run = Run.get_or_none(Run.id == run_id)
    if run is None or not access.can_see_run(user, run):
        return None
    reference = RunReference.get_or_none((RunReference.run == run) & (RunReference.n == n))
    if reference is None or reference.document_pk != document.id or reference.text is None:
        return None
    current = next((p for p in passages if p.id == reference.passage_id), None)
    if current is None:
        current = next((p for p in passages if p.text == reference.text), None)
    return RunCitation(run, reference, current, document.current_version)


def run_list(user: User, agent_slug: str = ""):
    """The runs ``user`` may see (of one agent, when named), newest first, with who asked."""
    query = access.visible_runs(user).select_extend(User).join(User, JOIN.LEFT_OUTER, on=(Run.user == User.id))
    if agent_slug:
        query = query.where(Run.agent_slug == agent_slug)
    return query.order_by(Run.created_at.desc(), Run.id.desc())


def run_page(user: User, agent_slug: str, page: int) -> ListPage:
    """Page ``page`` of ``run_list``; past the end, the last page (as the Library and Answer feedback)."""
    return ListPage(run_list(user, agent_slug), RUNS_PER_PAGE, page)


def run_as_json(run: Run) -> dict:
    """The run as ``cairn ask --json`` prints it and the API returns it.

    ``references`` are every passage issued, ``document_citations`` those the answer
    cites; each carries its grounding reference (None only for a receipt written
    before hashes were kept whose revision is gone).
    """
    references = list(run.references())
    cited = set(run.cited)
    return {
        "run_id": run.id,
        "agent": run.agent_slug,
        "mode": run.mode,
        "status": run.status,
        "warnings": run.warnings,
        "answer": run.answer,
        "answer_format": "markdown" if writes_markdown(run.model) else "text",
        "answer_basis": run.answer_basis,
        "searched_packs": run.searched_packs,
        "absent_words": run.absent_words,
        "evidence_gap": run.evidence_gap,
        "references": [
            {
                "n": r.n,
                "passage_id": r.passage_id,
                "pack": r.pack_slug,
                "document_id": r.document_id,
                "document_title": r.document_title,
                "version": r.version,
                "sha256": r.sha256,
                "page": r.page,
                "heading_path": r.heading_path,
                "line_start": r.line_start,
                "line_end": r.line_end,
                "text": r.text,
                "grounding": reference_grounding(r),
            }
            for r in references
        ],
        "cited": run.cited,
        "document_citations": [
            {
                "n": r.n,
                "pack": r.pack_slug,
                "document_id": r.document_id,
                "version": r.version,
                "sha256": r.sha256,
                "line_start": r.line_start,
                "line_end": r.line_end,
                "grounding": reference_grounding(r),
            }
            for r in references
            if r.n in cited
        ],
    }
