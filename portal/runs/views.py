"""Run records: the list, one run with its sources, and the thumbnails of its figures."""

from __future__ import annotations

import io

from flask import Blueprint, request, send_file
from flask_login import current_user, login_required
from peewee import JOIN

from portal import access, storage
from portal.errors import NotFound
from portal.models import Agent, Run, RunReference, User
from portal.numbers import query_page
from portal.rendering import render
from portal.runs import services

bp = Blueprint("runs", __name__, url_prefix="/runs")

RUNS_PER_PAGE = 50


@bp.route("/")
@login_required
def index():
    query = (access.visible_runs(current_user).select_extend(User)
             .join(User, JOIN.LEFT_OUTER, on=(Run.user == User.id)))
    agent_slug = request.args.get("agent", "")
    if agent_slug:
        query = query.where(Run.agent_slug == agent_slug)
    page_number = query_page()
    runs = list(query.order_by(Run.created_at.desc(), Run.id.desc())
                .limit(RUNS_PER_PAGE + 1).offset((page_number - 1) * RUNS_PER_PAGE))
    agents = list(Agent.select().order_by(Agent.name)) if access.can_view_agents(current_user) else []
    return render("runs/index.html", runs=runs[:RUNS_PER_PAGE], more=len(runs) > RUNS_PER_PAGE, page_number=page_number,
                  agent_slug=agent_slug, agents=agents, status_labels=services.STATUS_LABELS)


@bp.route("/<int:run_id>")
@login_required
def show(run_id: int):
    run = access.run_for_viewing(current_user, run_id)
    return render("runs/show.html", run=run, sources=services.run_sources(run, current_user),
                  answer_html=services.linked_answer(run.answer, run.cited), status_labels=services.STATUS_LABELS)


@bp.route("/<int:run_id>/sources/<int:n>/figures/<int:number>.webp")
@login_required
def figure(run_id: int, n: int, number: int):
    """A figure the run was given, until its document is deleted; same checks as the run record."""
    run = access.run_for_viewing(current_user, run_id)
    reference = RunReference.get_or_none((RunReference.run == run) & (RunReference.n == n))
    path = services.cited_figure_path(reference, number) if reference else None
    if path is None:
        raise NotFound(number)
    response = send_file(io.BytesIO(storage.read(path)), mimetype="image/webp", max_age=3600)
    response.headers["Cache-Control"] = "private, max-age=3600"
    return response
