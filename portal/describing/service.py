"""Describing a document's figures: a job that asks the vision model about one figure per step and
writes every description into one new revision at the end.

One figure per step lets the page show progress between calls (htmx asks for the next step);
without JavaScript the whole job runs in one request. Each call is a run owned by the
requester, with its cost; the monthly spend cap is checked before every call. A step is
claimed by moving ``done`` forward in the database, so two tabs never describe one figure twice.
"""

from __future__ import annotations

import datetime as dt
import time

from peewee import fn

from portal import storage
from portal.answers.model_client import ModelError
from portal.db import database, locking
from portal.describing import vision
from portal.documents import editing
from portal.documents.services import classification_policy
from portal.errors import Refused, VersionConflict
from portal.ingest.classify import classify
from portal.ingest.markers import figure_markers
from portal.models import DescribeJob, Document, Figure, Revision, Run, User, utcnow

MODE = "describe"  # Run.mode of a description call


def describable_figures(revision: Revision | None) -> list[Figure]:
    """The figures of ``revision`` that its text places (a marker): only those can get a description."""
    if revision is None:
        return []
    placed = {number for number, _label in figure_markers(revision.text)}
    figures = Figure.select().where(Figure.revision == revision).order_by(Figure.number)
    return [f for f in figures if f.number in placed]


def month_spent_microusd(now: dt.datetime | None = None) -> int:
    """What describing cost this calendar month (UTC), over every user: the cap is per deployment."""
    now = now or utcnow()
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    spent = (
        Run.select(fn.COALESCE(fn.SUM(Run.cost_microusd), 0))
        .where((Run.mode == MODE) & (Run.created_at >= start))
        .scalar()
    )
    return int(spent or 0)


NO_MODEL = "No vision model is configured (CAIRN_VISION_BASE_URL)"


def model_configured() -> bool:
    """Whether a vision model is set, so that Describe images can run (the document page asks before offering it)."""
    return vision.client() is not None


def start(document: Document, user: User) -> DescribeJob:
    """A new job over the current version's figures, or the document's job still running, which this request
    carries on (another tab's, or one whose page was reloaded or left: its steps claim figures one by one, so two
    pages stepping it describe each figure once; a second job would describe, and pay for, them all again).
    Refused (nothing called) when it cannot run."""
    with database().atomic():  # the document's row locked: two starts at once make one job
        locking(Document.select().where(Document.id == document.id)).get()
        running = (
            DescribeJob.select()
            .where((DescribeJob.document == document) & (DescribeJob.status == "running"))
            .order_by(DescribeJob.id)
            .first()
        )
        revision = Document.get_by_id(document.id).current_revision()
        if running is not None and running.base_version == revision.version:
            return _release_dead_claims(running) if abandoned(running) else running
        if running is not None:  # of an older version: its revision would conflict; it ends, and a new one starts
            _finish(running, stopped_early=False)
        figures = describable_figures(revision)
        if not figures:
            raise Refused("no_figures", "This document has no figures to describe.")
        if not model_configured():
            raise Refused("no_model", f"{NO_MODEL}, so nothing was described or written.")
        refusal = _cap_refusal()
        if refusal:
            raise Refused("cap_reached", refusal + " Nothing was described or written.")
        return DescribeJob.create(
            document=document, user=user, base_version=revision.version, figures=[f.number for f in figures]
        )


def _note(number: int, text: str) -> str:
    """A job's progress note about figure ``number``, as the page lists it: "Figure 2: described, 84 characters." """
    return f"Figure {number}: {text}"


def _noted_figure(note: str) -> int | None:
    """The figure a note of ``_note`` is about."""
    head, _colon, _text = note.partition(":")
    number = head.removeprefix("Figure ")
    return int(number) if number.isdigit() else None


def _release_dead_claims(job: DescribeJob) -> DescribeJob:
    """An abandoned job with its figures claimed by a killed request claimed no more: the figures without a result
    come after those with one, ``done`` counting these, so the next steps describe exactly what was never described
    (results may have come in out of order from several tabs)."""
    with database().atomic():
        fresh = locking(DescribeJob.select().where(DescribeJob.id == job.id)).get()
        if fresh.status != "running" or not abandoned(fresh):
            return fresh
        tried = {_noted_figure(note) for note in fresh.notes}
        fresh.figures = [n for n in fresh.figures if n in tried] + [n for n in fresh.figures if n not in tried]
        fresh.done, fresh.updated_at = len(tried), utcnow()
        fresh.save(only=[DescribeJob.figures, DescribeJob.done, DescribeJob.updated_at])
    return fresh


def step(job: DescribeJob) -> DescribeJob:
    """Describe the job's next figure (one model call); after the last, write the revision.

    With every figure taken, the job ends when every result is in: the step adding the last one ends it, and a step
    finding them all in a job still running ends it for a request that could not (killed after its last result).
    While another request is still describing one of the last figures, a step only reports progress: ending the job
    then wrote a revision without the descriptions still to come, already paid for, and told every tab that
    nothing was written (found by a probe stepping one job from three tabs). A job unmoved for longer than a model
    call may take was left by a killed request (``abandoned``): the figures it took are described now.
    """
    with database().atomic():
        claimed = (
            DescribeJob.update(done=DescribeJob.done + 1, updated_at=utcnow())
            .where(
                (DescribeJob.id == job.id)
                & (DescribeJob.done == job.done)
                & (DescribeJob.done < len(job.figures))
                & (DescribeJob.status == "running")
            )
            .execute()
        )
    if not claimed:  # another request took this step, or the job ended
        fresh = DescribeJob.get_by_id(job.id)
        if fresh.status == "running" and len(fresh.notes) >= len(fresh.figures):
            return _finish(fresh, stopped_early=False)
        if fresh.waiting and abandoned(fresh):
            return step(_release_dead_claims(fresh))  # the figures a killed request took are described now
        return fresh
    number = job.figures[job.done]
    note, description, stop = _describe_one(job, number)
    fresh = _add_result(job, number, note, description)
    # The step adding the last result ends the job, not the step of the last figure: another request's step may
    # still be describing an earlier one, whose description the revision would go without.
    if stop or len(fresh.notes) >= len(fresh.figures):
        return _finish(fresh, stopped_early=stop and fresh.done < len(fresh.figures))
    return fresh


def _add_result(job: DescribeJob, number: int, note: str, description: str | None) -> DescribeJob:
    """Add one step's note (and description) to the job; the job as it then is.

    Under the job row's lock: two requests' steps ending together each wrote back the notes and descriptions
    as they had read them, and the later save dropped the earlier one's description."""
    with database().atomic():
        fresh = locking(DescribeJob.select().where(DescribeJob.id == job.id)).get()
        fresh.notes = [*fresh.notes, note]
        if description is not None:
            fresh.descriptions = {**fresh.descriptions, str(number): description}
        fresh.updated_at = utcnow()
        fresh.save(only=[DescribeJob.notes, DescribeJob.descriptions, DescribeJob.updated_at])
    return fresh


# How long past the vision model's timeout a step may still add its result: its request's own work around the call.
MOVE_MARGIN_SECONDS = 30


def abandoned(job: DescribeJob, now: dt.datetime | None = None) -> bool:
    """Whether a running job has not moved for longer than a model call may take: the request describing its last
    figure was killed (a live one has its answer, or its timeout, by then)."""
    limit = vision.timeout_seconds() + MOVE_MARGIN_SECONDS
    return job.status == "running" and ((now or utcnow()) - job.last_moved).total_seconds() > limit


WAIT_SECONDS = 0.5  # between looks at a job whose last figures another request is describing
STILL_RUNNING = (
    "The last figures are still being described by another request. Press Describe images again in a minute: it "
    "carries the job on, and describes any figure whose request was cut off."
)


def run_to_end(job: DescribeJob) -> DescribeJob:
    """Every remaining step in this request (the page without JavaScript). When another request (another tab) is
    describing the last figures, it waits for them, at most as long as a model call may take."""
    waited = 0.0
    while job.status == "running":
        job = step(job)
        if job.waiting:
            if vision.client() is None or waited > vision.timeout_seconds():
                return job  # that request was cut off: the job stays to be seen, nothing is lost
            time.sleep(WAIT_SECONDS)
            waited += WAIT_SECONDS
    return job


def _describe_one(job: DescribeJob, number: int) -> tuple[str, str | None, bool]:
    """(progress note, description or None, whether the job must stop) for figure ``number``."""
    refusal = _cap_refusal()
    if refusal:
        return _note(number, f"not described. {refusal}"), None, True
    client = vision.client()
    if client is None:
        return _note(number, "not described: no vision model is configured."), None, True
    document = job.document
    figure = (
        Figure.select()
        .join(Revision)
        .where((Revision.document == document) & (Revision.version == job.base_version) & (Figure.number == number))
        .first()
    )
    gone = _note(number, f"not described: version {job.base_version} is no longer kept."), None, True
    if figure is None:  # the version was purged meanwhile; the write would conflict anyway
        return gone
    try:
        image = storage.read(figure.path)
    except FileNotFoundError:  # purged or deleted after the row was read: its files went after that commit
        return gone
    started = time.monotonic()
    try:
        completion = vision.describe(client, image, document.title, figure.label)
    except ModelError as error:
        failed = [f"vision model call failed ({error.summary})"]
        _record_run(job, number, client.model, "", "stopped", failed, 0, started)
        return _note(number, f"not described: {error.summary}."), None, False
    cost = vision.cost_microusd(completion)
    text, cut = vision.clean(completion.text)
    warnings = [f"the answer was cut to {vision.MAX_DESCRIPTION_CHARS:,} characters"] if cut else []
    verdict = classify(text, document.title, document.doc_id, classification_policy())
    if verdict.decision == "block":
        kinds = ", ".join(verdict.deciding_kinds) or "content the policy blocks"
        warnings.append(f"not written: the description contains {kinds}")
        _record_run(job, number, client.model, text, "completed_with_warning", warnings, cost, started)
        return _note(number, f"not written: the description contains {kinds}."), None, False
    if verdict.decision == "redact":
        text = verdict.redacted_text
        warnings.append("redacted: " + ", ".join(verdict.deciding_kinds))
    status = "completed_with_warning" if warnings else "completed"
    _record_run(job, number, client.model, text, status, warnings, cost, started)
    extra = f" ({'; '.join(warnings)})" if warnings else ""
    return _note(number, f"described, {len(text):,} characters{extra}."), text, False


def _record_run(job, number, model, answer, status, warnings, cost, started) -> Run:
    document = job.document
    return Run.create(
        agent=None,
        agent_slug="describe-images",
        agent_name="Describe images",
        user=job.user_id,
        question=f"Describe figure {number} of {document.doc_id} (version {job.base_version}).",
        answer=answer,
        status=status,
        mode=MODE,
        model=model,
        model_called=True,
        warnings=warnings,
        timings={"model_ms": round((time.monotonic() - started) * 1000, 1)},
        cited=[],
        searched_packs=[],
        cost_microusd=cost,
    )


def _cap_refusal() -> str:
    """Why the next call may not be made ("" when it may): the monthly cap is reached."""
    cap = vision.monthly_cap_microusd()
    spent = month_spent_microusd()
    if spent >= cap:
        return (
            f"The monthly spend cap for describing figures (${cap / 1e6:,.2f}) is reached: ${spent / 1e6:,.2f} spent."
        )
    return ""


def _finish(job: DescribeJob, stopped_early: bool) -> DescribeJob:
    descriptions = {int(number): text for number, text in job.descriptions.items()}
    status, message, revision = "nothing_written", "", None
    if not descriptions:
        message = "No description was written: no figure got one."
    else:
        document = Document.get_by_id(job.document_id)
        try:
            revision = editing.add_figure_descriptions(document, descriptions, job.base_version, job.user)
        except VersionConflict as conflict:
            # Written already, by a request that could not end the job (killed) or that ended it first.
            revision = editing.figure_descriptions_revision(document, descriptions, job.base_version)
            message = (
                f"The document changed while its figures were described (it is now version {conflict.current}); "
                "nothing was written. Describe again to describe the new version."
            )
        except Refused as refusal:
            message = f"Nothing was written: {refusal.message}"
        if revision is not None:
            status = "written"
            message = f"Version {revision.version} holds {len(descriptions)} of {len(job.figures)} figure descriptions."
    if stopped_early:
        message += " Describing stopped before the last figure."
    # Only a running job ends: one another request ended meanwhile keeps that request's outcome.
    DescribeJob.update(status=status, message=message.strip(), finished_at=utcnow()).where(
        (DescribeJob.id == job.id) & (DescribeJob.status == "running")
    ).execute()
    return DescribeJob.get_by_id(job.id)
