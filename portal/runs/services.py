"""Asking an agent: retrieval over its granted packs, the grounded answer, the receipt.

``ask`` searches exactly the agent's granted packs (BM25 statistics from those
packs alone, at most 3 passages per document, "no evidence" when nothing
matches), issues up to 8 acceptable passages as numbered references, lets
``portal.answers.grounding`` apply the agent's mode, and stores the run with its
receipt (each issued passage exactly as issued), what its answer rests on and
the packs it searched, in one transaction.

A passage is acceptable when it shares a content term with the question. The
search analyzer keeps question words ("how", "do", "i", "what"), so a question
about something the packs never mention still matches passages through them;
those are the "nearest unrelated passages" SPEC 6 forbids, and are not issued.
"""

from __future__ import annotations

import functools
import json
import re
import time
from dataclasses import dataclass, field

from flask import current_app
from markupsafe import Markup, escape

from portal import access, storage
from portal.answers.extractive import STOPWORDS
from portal.answers.grounding import Outcome, answer_question
from portal.answers.model_client import ChatClient
from portal.answers.references import Reference
from portal.db import database
from portal.errors import Refused
from portal.models import Agent, Document, Figure, Pack, Passage, ReceiptFigure, Revision, Run, RunReference, User
from portal.search.analysis import analyze
from portal.search.index import IndexedPassage, indexed_text
from portal.search.service import SearchHit, search_packs

REFERENCES_PER_RUN = 8
# Hits read before the unacceptable ones are dropped, so up to 8 acceptable ones remain.
CANDIDATES_PER_RUN = 2 * REFERENCES_PER_RUN
MAX_QUESTION_CHARS = 2_000
PREVIEW_LINES = 6
PREVIEW_CHARS = 600

STATUS_LABELS = {
    "completed": "completed",
    "completed_with_warning": "completed with warning",
    "stopped": "stopped",
}

FIGURE_MARKER_RE = re.compile(r"\[Figure (\d+): ([^\]\n]*)\]")
_ITEM = r"\d{1,4}(?:\s*[-–]\s*\d{1,4})?"
_ANSWER_MARKER_RE = re.compile(rf"(?<!\w)\[\s*({_ITEM}(?:\s*[,;]\s*{_ITEM})*)\s*\](?!\()")
_CITE_LINK = Markup('<a class="cite" href="{url}#source-{n}">{text}</a>')


def checked_question(question: str) -> str:
    question = (question or "").strip()
    if not question:
        raise Refused("empty_question", "Ask a question: the text was empty.")
    if len(question) > MAX_QUESTION_CHARS:
        raise Refused("question_too_long", f"A question is at most {MAX_QUESTION_CHARS:,} characters; "
                                           f"this one has {len(question):,}.")
    return question


@functools.cache
def _stopword_terms() -> frozenset[str]:
    """The extractive answerer's stopwords as the search analyzer spells them (``doing`` → ``do``)."""
    return frozenset(analyze(" ".join(sorted(STOPWORDS))))


def content_terms(text: str) -> list[str]:
    """The search analyzer's terms of ``text`` without question words and other stopwords.

    The extractive answerer tokenizes with it too, so it matches sentences the
    way the index matches passages, minus the words that carry no subject.
    """
    stopwords = _stopword_terms()
    return [term for term in analyze(text) if term not in stopwords]


def acceptable_hits(question: str, hits: list[SearchHit], limit: int) -> list[SearchHit]:
    """The first ``limit`` hits sharing a content term with the question (in text, heading path or title)."""
    wanted = set(content_terms(question))
    accepted: list[SearchHit] = []
    for hit in hits if wanted else ():
        searched = indexed_text(IndexedPassage(hit.passage_id, hit.document_id, hit.pack, hit.text,
                                               hit.document_title, hit.heading_path))
        if wanted.intersection(content_terms(searched)):
            accepted.append(hit)
            if len(accepted) == limit:
                break
    return accepted


def model_client() -> ChatClient | None:
    """The configured OpenAI-compatible model, or None for the built-in extractive answerer."""
    config = current_app.config
    if not config.get("CAIRN_MODEL_BASE_URL"):
        return None
    return ChatClient(config["CAIRN_MODEL_BASE_URL"], config.get("CAIRN_MODEL_API_KEY") or "",
                      config["CAIRN_MODEL_NAME"], float(config["CAIRN_MODEL_TIMEOUT"]))


@dataclass
class _Issued:
    """A reference as issued, with what the receipt keeps besides it."""

    reference: Reference
    document_id: str
    figures: list[dict]


@dataclass
class Answered:
    """A question answered by an agent, not yet stored: what ``ask`` records as a run."""

    outcome: Outcome
    issued: list[_Issued]
    searched: list[dict]  # the packs searched, {"slug", "title"}, as they were at the time
    timings: dict[str, float]


def answer_for(agent: Agent, question: str, client: ChatClient | None) -> Answered:
    """Retrieval over the agent's granted packs and the grounded answer, stored nowhere.

    ``ask`` stores what this returns; ``cairn eval``'s regression cases call it with no model.
    """
    started = time.perf_counter()
    packs = list(agent.granted_packs())
    hits = issued_hits(agent, question, packs)
    issued = _issue(hits) if hits else []
    retrieval_ms = _elapsed_ms(started)
    outcome = answer_question(agent.mode, question, agent.instructions, [i.reference for i in issued],
                              no_evidence=not issued, client=client, tokenize=content_terms)
    timings = {"retrieval_ms": retrieval_ms}
    timings.update((k, v) for k, v in outcome.timings.items() if k != "total_ms")
    timings["answer_ms"] = outcome.timings.get("total_ms", 0.0)
    timings["total_ms"] = _elapsed_ms(started)
    return Answered(outcome, issued, [{"slug": p.slug, "title": p.title} for p in packs], timings)


def ask(agent: Agent, user: User | None, question: str) -> Run:
    """Answer ``question`` as ``agent`` for ``user`` (None: the command line) and store the run."""
    question = checked_question(question)
    answered = answer_for(agent, question, model_client())
    outcome = answered.outcome
    with database().atomic():
        run = Run.create(agent=agent, agent_slug=agent.slug, agent_name=agent.name, user=user, question=question,
                         answer=outcome.answer, status=outcome.status, mode=agent.mode, model=outcome.model,
                         model_called=outcome.called_model, warnings_json=json.dumps(outcome.warnings),
                         timings_json=json.dumps(answered.timings), cited_json=json.dumps(outcome.cited),
                         answer_basis=outcome.basis, searched_packs_json=json.dumps(answered.searched))
        rows = [_receipt_row(run, item) for item in answered.issued]
        if rows:
            RunReference.insert_many(rows).execute()
    return run


def issued_hits(agent: Agent, question: str, packs: list[Pack] | None = None) -> list[SearchHit]:
    """The passages ``agent`` is given for ``question`` now: its top 8 acceptable hits, best first.

    ``packs``: its granted packs, when the caller has already read them.
    """
    packs = list(agent.granted_packs()) if packs is None else packs
    results = search_packs(packs, question, limit=CANDIDATES_PER_RUN)
    return acceptable_hits(question, results.hits, REFERENCES_PER_RUN)


def _issue(hits: list[SearchHit]) -> list[_Issued]:
    """Number the hits 1..n as references, each with its document's key and its figures."""
    rows = {p.id: p for p in (Passage.select(Passage.id, Passage.revision, Revision.id, Revision.document)
                              .join(Revision).where(Passage.id.in_([h.passage_id for h in hits])))}
    revision_ids = {row.revision.id for row in rows.values()}
    figures = {(f.revision_id, f.number): f.id for f in
               Figure.select(Figure.id, Figure.revision, Figure.number).where(Figure.revision.in_(revision_ids))}
    issued = []
    for hit in hits:
        row = rows.get(hit.passage_id)
        if row is None:  # deleted between the search and now: not issued
            continue
        reference = Reference(
            n=len(issued) + 1, passage_id=hit.passage_id, document_id=row.revision.document_id,
            document_title=hit.document_title, pack=hit.pack, pack_title=hit.pack_title, version=hit.version,
            page=hit.page, heading_path=hit.heading_path, line_start=hit.line_start, line_end=hit.line_end,
            text=hit.text)
        marked = [{"number": int(number), "label": label,
                   "figure_id": figures.get((row.revision.id, int(number)))}
                  for number, label in FIGURE_MARKER_RE.findall(hit.text)]
        issued.append(_Issued(reference, hit.document_id, marked))
    return issued


def _receipt_row(run: Run, item: _Issued) -> dict:
    ref = item.reference
    return {"run": run.id, "n": ref.n, "passage_id": ref.passage_id, "pack_slug": ref.pack,
            "pack_title": ref.pack_title, "document_pk": ref.document_id, "document_id": item.document_id,
            "document_title": ref.document_title, "version": ref.version, "page": ref.page,
            "heading_path": ref.heading_path, "line_start": ref.line_start, "line_end": ref.line_end,
            "text": ref.text, "figures_json": json.dumps(item.figures)}


def forget_document_text(document_pk: int) -> None:
    """A document was deleted: its receipts keep their place and numbers but lose its text and figures.

    The kept figures' files go with the document's folder."""
    RunReference.update(text=None).where(RunReference.document_pk == document_pk).execute()
    ReceiptFigure.delete().where(ReceiptFigure.document_pk == document_pk).execute()
    for row in RunReference.select().where((RunReference.document_pk == document_pk)
                                           & (RunReference.figures_json != "[]")):
        row.figures_json = json.dumps([{"number": f["number"], "label": None, "figure_id": None}
                                       for f in row.figures])
        row.save(only=[RunReference.figures_json])


def keep_cited_figures(document_pk: int, figures: list[Figure], folder: str) -> list[str]:
    """Before ``figures`` go with their purged revision, copy those a receipt cites to ``folder``.

    The receipt outlives later edits (SPEC 7), images included; only deleting the
    document takes them. Returns the paths written.
    """
    if not figures:
        return []
    cited = {entry.get("figure_id") for row in RunReference.select(RunReference.figures_json)
             .where((RunReference.document_pk == document_pk) & (RunReference.figures_json != "[]"))
             for entry in row.figures}
    written = []
    for figure in figures:
        if figure.id not in cited:
            continue
        path = f"{folder}/figure-{figure.id}.webp"
        storage.write(path, storage.read(figure.path))
        written.append(path)
        ReceiptFigure.create(figure_id=figure.id, document_pk=document_pk, path=path, width=figure.width,
                             height=figure.height)
    return written


def cited_figure_path(reference: RunReference, number: int) -> str | None:
    """The file of figure ``number`` of a receipt entry: its revision's, else the copy the receipt kept."""
    entry = next((f for f in reference.figures if f["number"] == number), None)
    figure_id = entry.get("figure_id") if entry else None
    if figure_id is None:
        return None
    found = (Figure.select(Figure.path).join(Revision)
             .where((Figure.id == figure_id) & (Revision.document == reference.document_pk)).first())
    if found is None:
        found = ReceiptFigure.get_or_none((ReceiptFigure.figure_id == figure_id)
                                          & (ReceiptFigure.document_pk == reference.document_pk))
    return found.path if found else None


def _elapsed_ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)


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
    preview: str | None  # the first lines when the passage is long enough to collapse
    figures: list[SourceFigure] = field(default_factory=list)
    document: Document | None = None  # the live document the viewer may open for this user
    deleted: bool = False
    current_version: int | None = None
    passage_ordinal: int | None = None  # set when the passage is still in the current revision

    @property
    def changed(self) -> bool:
        return self.current_version is not None and self.current_version != self.reference.version


def run_sources(run: Run, user: User) -> list[Source]:
    """The run's receipt as shown to ``user``: text, figures, and how to open each document now."""
    references = list(run.references())
    cited = set(run.cited)
    documents = {d.id: d for d in Document.select().where(
        Document.id.in_({r.document_pk for r in references}))} if references else {}
    still_current = {p.id: p.ordinal for p in (
        Passage.select(Passage.id, Passage.ordinal).join(Revision).join(Document)
        .where(Passage.id.in_([r.passage_id for r in references])
               & (Revision.version == Document.current_version)))} if references else {}
    figure_ids = [f["figure_id"] for r in references for f in r.figures if f.get("figure_id")]
    kept_figures = ({f.id for f in Figure.select(Figure.id).where(Figure.id.in_(figure_ids))}
                    | {k.figure_id for k in ReceiptFigure.select(ReceiptFigure.figure_id)
                       .where(ReceiptFigure.figure_id.in_(figure_ids))}) if figure_ids else set()
    readable: dict[int, Document | None] = {}
    sources = []
    for ref in references:
        document = documents.get(ref.document_pk)
        deleted = document is None or document.is_deleted
        if not deleted and ref.document_pk not in readable:
            readable[ref.document_pk] = access.source_document_for_reading(user, ref.document_pk)
        sources.append(Source(
            reference=ref, cited=ref.n in cited, text=ref.text, preview=passage_preview(ref.text),
            figures=[SourceFigure(f["number"], f.get("label"), f.get("figure_id") in kept_figures)
                     for f in ref.figures],
            document=None if deleted else readable[ref.document_pk], deleted=deleted,
            current_version=None if deleted else document.current_version,
            passage_ordinal=still_current.get(ref.passage_id)))
    return sources


def passage_preview(text: str | None) -> str | None:
    """The first 6 lines (at most 600 characters) of a passage longer than that; None for a short one."""
    if text is None:
        return None
    lines = text.split("\n")
    if len(lines) <= PREVIEW_LINES and len(text) <= PREVIEW_CHARS:
        return None
    preview = "\n".join(lines[:PREVIEW_LINES])
    if len(preview) > PREVIEW_CHARS:
        cut = preview[:PREVIEW_CHARS]
        preview = (cut.rsplit(None, 1)[0] if " " in cut else cut).rstrip()
    return preview.rstrip() + " …"


def linked_answer(answer: str, cited: list[int], sources_url: str = "") -> Markup:
    """The answer as HTML, each cited ``[n]`` a link to its source (``#source-n``, on ``sources_url``)."""
    issued = set(cited)

    def link(match: re.Match) -> str:
        items = re.split(r"(\s*[,;]\s*)", match.group(1).strip())
        out = []
        for item in items:
            numbers = [int(x) for x in re.findall(r"\d+", item)]
            if numbers and numbers[0] in issued:
                out.append(_CITE_LINK.format(url=sources_url, n=numbers[0], text=Markup(item)))
            else:
                out.append(item)
        return "[" + "".join(out) + "]"

    # ``item`` comes from the already escaped answer, so it is Markup; the URL is escaped by ``format``.
    return Markup(_ANSWER_MARKER_RE.sub(link, str(escape(answer))))


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


def citation_for_viewer(user: User, run_id: int | None, n: int | None, document: Document,
                        passages: list[Passage]) -> RunCitation | None:
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


def run_as_json(run: Run) -> dict:
    """The run as ``cairn ask --json`` prints it."""
    return {
        "run_id": run.id, "agent": run.agent_slug, "mode": run.mode, "status": run.status,
        "warnings": run.warnings, "answer": run.answer, "answer_basis": run.answer_basis,
        "searched_packs": run.searched_packs,
        "references": [{"n": r.n, "passage_id": r.passage_id, "document_id": r.document_id,
                        "version": r.version, "page": r.page, "text": r.text} for r in run.references()],
        "cited": run.cited,
    }
