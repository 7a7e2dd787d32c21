"""Run records: the list, one run with its sources, and the thumbnails of its figures."""

from __future__ import annotations

from flask import Blueprint, request
from flask_login import current_user, login_required

from portal import access
from portal.agents.services import all_agents
from portal.documents.downloads import send_figure
from portal.errors import NotFound
from portal.numbers import query_page
from portal.rendering import render
from portal.runs import services

bp = Blueprint("runs", __name__, url_prefix="/runs")


@bp.route("/")
@login_required
def index():
    agent_slug = request.args.get("agent", "")
    listing = services.run_page(current_user, agent_slug, query_page())
    agents = all_agents() if access.can(current_user, "agents.read") else []
    return render(
        "runs/index.html",
        listing=listing,
        agent_slug=agent_slug,
        agents=agents,
        status_labels=services.STATUS_LABELS,
    )


@bp.route("/<int:run_id>")
@login_required
def show(run_id: int):
    run = access.run_for(current_user, run_id)
    return render(
        "runs/show.html",
        run=run,
        sources=services.run_sources(run, current_user),
        answer_html=services.answer_html(run),
        status_labels=services.STATUS_LABELS,
    )


@bp.route("/<int:run_id>/sources/<int:n>/figures/<int:number>.webp")
@login_required
def figure(run_id: int, n: int, number: int):
    """A figure the run was given, until its document is deleted; same checks as the run record."""
    run = access.run_for(current_user, run_id)
    path = services.cited_figure_path(run, n, number)
    if path is None:
        raise NotFound(number)
    return send_figure(path)
