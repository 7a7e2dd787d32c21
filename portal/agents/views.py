"""Agent pages: the list, create, edit (with grants and history), delete, and the try page."""

from __future__ import annotations

from flask import Blueprint, flash, redirect, request, url_for
from flask_login import current_user, login_required

from portal import access
from portal.agents import services
from portal.companies import company_names
from portal.errors import NotFound, Refused
from portal.meanwhile import ChangedMeanwhile, shown_base
from portal.models import MAX_DESCRIPTION_CHARS, Agent, Run
from portal.numbers import query_number
from portal.rendering import render, wants_fragment
from portal.runs import services as runs
from portal.runs.ask import ask as ask_run
from portal.wording import edit_stamp

bp = Blueprint("agents", __name__, url_prefix="/agents")

RECENT_RUNS = 10


@bp.route("/")
@login_required
def index():
    if not access.can(current_user, "agents.read"):
        raise NotFound("agents")
    agents = services.all_agents()
    return render("agents/index.html", agents=agents, grants=services.grants_by_agent(agents))


@bp.route("/new")
@login_required
def new():
    if not access.can(current_user, "agents.configure"):
        raise NotFound("agents")
    return _form_page("agents/new.html", None, {"mode": "preferred"}, set())


@bp.route("/", methods=["POST"])
@login_required
def create():
    if not access.can(current_user, "agents.configure"):
        raise NotFound("agents")
    form = request.form
    try:
        agent = services.create_agent(
            current_user,
            form.get("slug", ""),
            form.get("name", ""),
            form.get("mode", ""),
            form.get("company") or None,
            form.get("instructions", ""),
            form.getlist("packs"),
            description=form.get("description", ""),
        )
    except Refused as refusal:
        return _form_page("agents/new.html", None, form, set(form.getlist("packs")), refusal.message, 422)
    flash(f"Created agent {agent.name} as a draft: members do not see it until it is offered.")
    return redirect(url_for("agents.show", slug=agent.slug), code=303)


@bp.route("/<slug>")
@login_required
def show(slug: str):
    agent = access.agent_for(current_user, slug)
    shown = services.form_values(agent)
    return _form_page(
        "agents/show.html", agent, shown, set(shown["packs"]), based_on=edit_stamp(agent.updated_at), base=shown
    )


@bp.route("/<slug>", methods=["POST"])
@login_required
def update(slug: str):
    agent = access.agent_for(current_user, slug, "agents.configure")
    form = request.form
    base = shown_base(form, services.FIELD_NAMES.keys() - {"packs"}, sets=("packs",))
    try:
        services.update_agent(
            current_user,
            agent,
            name=form.get("name", ""),
            mode=form.get("mode", ""),
            company_name=form.get("company") or None,
            instructions=form.get("instructions", ""),
            pack_slugs=form.getlist("packs"),
            description=form.get("description"),
            based_on=form.get("based_on"),
            base=base,
        )
    except ChangedMeanwhile as refusal:  # both changes in the form, based on the row the refusal read
        agent.name = refusal.current["name"]  # the heading names the agent as it now is (never saved from here)
        return _form_page(
            "agents/show.html",
            agent,
            refusal.form,
            set(refusal.form["packs"]),
            refusal.message,
            409,
            refusal.based_on,
            refusal.current,
        )
    except Refused as refusal:
        return _form_page(
            "agents/show.html",
            agent,
            form,
            set(form.getlist("packs")),
            refusal.message,
            422,
            form.get("based_on"),
            base,
        )
    if agent.offered and not agent.granted_packs().exists():
        # the badge says "offered, not shown"; the one who just took its last pack away is told why it went
        flash(f"Saved. {agent.name} is offered but has no pack: members do not see it until a pack is granted.")
    else:
        flash("Saved.")
    return redirect(url_for("agents.show", slug=slug), code=303)


@bp.route("/<slug>/offer", methods=["POST"])
@login_required
def offer(slug: str):
    """Offer the agent to members, or take it back to a draft (``offered`` = 1 or 0)."""
    agent = access.agent_for(current_user, slug, "agents.configure")
    offered = request.form.get("offered") == "1"
    services.set_offered(current_user, agent, offered)
    flash(f"{agent.name} is offered to members." if offered else f"{agent.name} is a draft: members no longer see it.")
    return redirect(url_for("agents.show", slug=slug), code=303)


@bp.route("/<slug>/delete", methods=["POST"])
@login_required
def delete(slug: str):
    agent = access.agent_for(current_user, slug, "agents.configure")
    services.delete_agent(current_user, agent)
    flash(f"Deleted agent {agent.name}; its runs are kept.")
    return redirect(url_for("agents.index"), code=303)


@bp.route("/<slug>/try")
@login_required
def try_agent(slug: str):
    agent = access.agent_for(current_user, slug, "agents.try")
    run = _shown_run(agent, query_number("run"))
    return _try_page(agent, run, question=run.question if run else "")


@bp.route("/<slug>/try", methods=["POST"])
@login_required
def ask(slug: str):
    agent = access.agent_for(current_user, slug, "agents.try")
    question = request.form.get("question", "")
    try:
        run = ask_run(agent, current_user, question)
    except Refused as refusal:
        return _try_page(agent, None, question=question, error=refusal.message, status=422)
    if not wants_fragment():
        return redirect(url_for("agents.try_agent", slug=slug, run=run.id), code=303)
    response = _try_page(agent, run, question=question)
    response.headers["HX-Push-Url"] = url_for("agents.try_agent", slug=slug, run=run.id)
    return response


def _try_page(agent: Agent, run: Run | None, question: str, error: str | None = None, status: int = 200):
    return render(
        "agents/try.html",
        "agents/_try_result.html",
        status=status,
        agent=agent,
        run=run,
        question=question,
        error=error,
        packs=list(agent.granted_packs()),
        sources=runs.run_sources(run, current_user) if run else [],
        answer_html=runs.answer_html(run) if run else None,
        status_labels=runs.STATUS_LABELS,
    )


def _shown_run(agent: Agent, run_id: int | None) -> Run | None:
    """The run named in ``?run=`` when it is this agent's and the user may see it."""
    if run_id is None:
        return None
    run = services.run_of(agent, run_id)
    return run if run is not None and access.can_see_run(current_user, run) else None


def _form_page(
    template: str,
    agent: Agent | None,
    form,
    selected_packs: set[str],
    error: str | None = None,
    status: int = 200,
    based_on: str | None = None,
    base: dict | None = None,
):
    """The new-agent or agent page with its form; ``based_on`` and ``base``: when the agent had last changed as
    the form shows it, and the values it shows, carried back with a save (``services.update_agent``)."""
    context = {
        "agent": agent,
        "based_on": based_on,
        "base": base or {},
        "form": form,
        "selected_packs": selected_packs,
        "error": error,
        "packs": services.grantable_packs(),
        "companies": company_names(),
        "modes": services.MODE_HELP,
        "max_description_chars": MAX_DESCRIPTION_CHARS,
    }
    if agent is not None:
        context["granted_packs"] = [p.slug for p in agent.granted_packs()]  # as saved, whatever the form holds
        context["history"] = [(entry, services.describe_change(entry)) for entry in services.history(agent)]
        context["recent_runs"] = services.recent_runs(agent, RECENT_RUNS)
        context["status_labels"] = runs.STATUS_LABELS
    return render(template, status=status, **context)
