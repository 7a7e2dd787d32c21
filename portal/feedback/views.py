"""Rating an answer (Members), and Answer feedback under Build: the review list, CSV, triage, regression cases."""

from __future__ import annotations

from flask import Blueprint, Response, flash, redirect, request, url_for
from flask_login import current_user, login_required

from portal import access
from portal.chat.views import answer_address
from portal.errors import NotFound, Refused
from portal.feedback import regressions, review, services
from portal.feedback.forms import read_filters
from portal.feedback.sorting import DEFAULT_SORT, SORT_COLUMNS
from portal.ingest import limits
from portal.models import Agent, Feedback, Run, utcnow
from portal.numbers import form_number, query_page
from portal.packs.services import all_packs
from portal.rendering import render, wants_fragment
from portal.runs.services import STATUS_LABELS, answer_html

bp = Blueprint("feedback", __name__)

EXPECTED_SOURCE_HITS = 10


# --- Rating (the answer's owner) ----------------------------------------------------------


@bp.route("/chat/answers/<int:run_id>/feedback")
@login_required
def rating(run_id: int):
    """The rating widget; ``?rating=not_helpful`` opens the reasons form (a page of its own without JS)."""
    run = access.answer_for_member(current_user, run_id)
    feedback = services.rating_of(current_user, run)
    choosing = request.args.get("rating") == "not_helpful"
    form = {"reasons": feedback.reasons if feedback else [], "note": feedback.note if feedback else ""}
    return _rating(run, feedback, choosing, form)


@bp.route("/chat/answers/<int:run_id>/feedback", methods=["POST"])
@login_required
def rate(run_id: int):
    run = access.answer_for_member(current_user, run_id)
    form = {
        "rating": request.form.get("rating", ""),
        "reasons": request.form.getlist("reasons"),
        "note": request.form.get("note", ""),
    }
    try:
        feedback = services.rate_answer(current_user, run, form["rating"], form["reasons"], form["note"])
    except Refused as refusal:
        return _rating(run, services.rating_of(current_user, run), True, form, refusal.message, 422)
    if not wants_fragment():
        flash("Thank you: your rating was saved.")
        return redirect(answer_address(run), code=303)
    return _rating(run, feedback, False, form, saved=True)


def _rating(
    run: Run,
    feedback: Feedback | None,
    choosing: bool,
    form: dict,
    error: str | None = None,
    status: int = 200,
    saved: bool = False,
):
    return render(
        "feedback/rate.html",
        "feedback/_rating.html",
        status=status,
        run=run,
        answer_html=answer_html(run, url_for("chat.sources", run_id=run.id)),
        feedback=feedback,
        choosing=choosing,
        form=form,
        error=error,
        saved=saved,
        reasons=services.REASONS,
        max_note_chars=services.MAX_NOTE_CHARS,
    )


# --- Answer feedback (reviewers) --------------------------------------------------------------


def _reviewer():
    if not access.can(current_user, "feedback.review"):
        raise NotFound("feedback")


@bp.route("/feedback/")
@login_required
def index():
    _reviewer()
    form = read_filters(request.args)
    filters = form.filters()
    results = review.ReviewPage(filters, query_page())
    cases = regressions.cases_by_feedback(results.items)
    response = render(
        "feedback/index.html",
        "feedback/_results.html",
        form=form,
        filters=filters,
        results=results,
        agents=review.agents_with_feedback(),
        statuses=services.STATUSES,
        excerpt=review.answer_excerpt,
        reason_labels=review.reason_labels,
        cases=cases,
        case_summaries=regressions.case_summaries(current_user, (case for listed in cases.values() for case in listed)),
        sort_columns=SORT_COLUMNS,
        default_sort=DEFAULT_SORT,
    )
    if wants_fragment():  # the address bar shows the filters as a clean, shareable link
        response.headers["HX-Push-Url"] = url_for("feedback.index", **filters.args(results.get_page()))
    return response


@bp.route("/feedback/export.csv")
@login_required
def export():
    _reviewer()
    filters = read_filters(request.args).filters()
    name = f"answer-feedback-{utcnow():%Y%m%d-%H%M}.csv"
    # A byte-order mark, so spreadsheet programs read the file as UTF-8.
    return Response(
        "\ufeff" + review.export_csv(current_user, filters),
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"},
    )


@bp.route("/feedback/<int:feedback_id>")
@login_required
def show(feedback_id: int):
    feedback = access.feedback_for(current_user, feedback_id)
    return _item_page(feedback)


@bp.route("/feedback/<int:feedback_id>/triage", methods=["POST"])
@login_required
def update_triage(feedback_id: int):
    feedback = access.feedback_for(current_user, feedback_id)
    form = request.form
    try:
        services.triage(current_user, feedback, form.get("status", ""), form.get("reviewer_note"), form.get("seen"))
    except Refused as refusal:
        changed = refusal.reason == "changed"  # shown as it is now, with what the reviewer chose kept
        return _item_page(
            Feedback.get_by_id(feedback.id) if changed else feedback,
            "feedback/_triaged.html",
            triage_error=refusal.message,
            triage_form=form,
            status=409 if changed else 422,
        )
    if not wants_fragment():
        flash("Triage saved.")
        return redirect(url_for("feedback.show", feedback_id=feedback.id), code=303)
    return _item_page(Feedback.get_by_id(feedback.id), "feedback/_triaged.html", triage_saved=True)


@bp.route("/feedback/<int:feedback_id>/cases", methods=["POST"])
@login_required
def record_case(feedback_id: int):
    feedback = access.feedback_for(current_user, feedback_id)
    form = request.form
    try:
        if form.get("kind") == "no_evidence":
            regressions.record_no_evidence_case(current_user, feedback)
        else:
            document = regressions.document_by_name(current_user, form.get("pack", ""), form.get("doc_id", ""))
            regressions.record_regression_case(
                current_user, feedback, document.id, form_number("passage_id", optional=True)
            )
    except Refused as refusal:
        return _item_page(feedback, "feedback/_cases.html", case_error=refusal.message, case_form=form, status=422)
    if not wants_fragment():
        flash("Regression case recorded: `cairn eval` now checks it.")
        return redirect(url_for("feedback.show", feedback_id=feedback.id) + "#cases", code=303)
    return _item_page(feedback, "feedback/_cases.html", case_saved=True)


@bp.route("/feedback/<int:feedback_id>/cases/<int:case_id>/delete", methods=["POST"])
@login_required
def delete_case(feedback_id: int, case_id: int):
    feedback = access.feedback_for(current_user, feedback_id)
    regressions.delete_regression_case(access.case_for(current_user, feedback, case_id))
    if not wants_fragment():
        flash("Regression case removed.")
        return redirect(url_for("feedback.show", feedback_id=feedback.id) + "#cases", code=303)
    return _item_page(feedback, "feedback/_cases.html")


def _item_page(feedback: Feedback, fragment: str | None = None, status: int = 200, **extra):
    """The feedback item; ``?q=`` searches for the source that should have answered (``scope``: agent or all)."""
    run = feedback.run
    # Not ``run.agent``: the run read here may still name an agent deleted since (a case refused for that
    # reason shows this page), and the page then searches every pack.
    agent = Agent.get_or_none(Agent.id == run.agent_id) if run.agent_id else None
    agent_packs = list(agent.granted_packs()) if agent else []
    every_pack = all_packs()
    scope = "all" if request.values.get("scope") == "all" or not agent_packs else "agent"
    query = request.values.get("q")  # a search kept across recording one of its results
    candidates = None
    if query is not None and query.strip():
        packs = agent_packs if scope == "agent" else every_pack
        candidates = access.search_for_reader(
            current_user, packs, query[: limits.MAX_SEARCH_CHARS], limit=EXPECTED_SOURCE_HITS
        )
    cases = regressions.regression_cases_of(feedback)
    context = {
        "feedback": feedback,
        "run": run,
        "answer_html": answer_html(run, url_for("runs.show", run_id=run.id)),
        "history": services.triage_history(feedback),
        "seen": services.seen_state(feedback),
        "reopened_note": services.REOPENED_NOTE,
        "cases": cases,
        "case_passages": regressions.passages_of(cases),
        "cases_unchecked": regressions.unchecked_reasons(cases),
        "cases_hidden": regressions.hidden_from(current_user, cases),
        "hidden_source": regressions.HIDDEN_SOURCE,
        "statuses": services.STATUSES,
        "reason_labels": review.reason_labels(feedback),
        "case_kinds": regressions.CASE_KINDS,
        "max_note_chars": services.MAX_NOTE_CHARS,
        "status_labels": STATUS_LABELS,
        "agent_packs": agent_packs,
        "granted_slugs": {pack.slug for pack in agent_packs},
        "scope": scope,
        "query": run.question if query is None else query,
        "candidates": candidates,
        "triage_form": {},
        "case_form": {},
    }
    context.update(extra)
    fragment = fragment or ("feedback/_cases.html" if request.args.get("q") is not None else None)
    return render("feedback/show.html", fragment, status=status, **context)
