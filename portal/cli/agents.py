"""``cairn agents create|list`` and ``cairn ask`` (a question asked as the browser asks it)."""

from __future__ import annotations

import json

import click

from portal.cli.support import app_context, echo_listing, fail, say
from portal.models import GROUNDING_MODES


@click.group()
def agents():
    """Manage agents."""


@agents.command("create")
@click.argument("slug")
@click.option("--name", required=True)
@click.option("--mode", required=True, type=click.Choice(GROUNDING_MODES), help="Grounding mode.")
@click.option("--company", default=None, help="The company the agent serves (default: none).")
@click.option("--grant", "grants", multiple=True, metavar="PACK", help="A pack to grant; repeat for several.")
@click.option("--instructions", default="", help="Instructions sent to the model before the references.")
@click.option("--description", default="", help="One short line members read when they choose the agent.")
@click.option("--offer", is_flag=True, help="Offer it to members at once (default: a draft members do not see).")
def agents_create(slug, name, mode, company, grants, instructions, description, offer):
    """Create an agent with its pack grants (a company pack only for an agent serving that company)."""
    from portal.agents.services import create_agent
    from portal.errors import Refused

    app_context()
    try:
        agent = create_agent(
            None,
            slug,
            name,
            mode,
            company,
            instructions,
            grants,
            description=description,
            offered=offer,
            add_company=True,  # the command line sets a deployment up
        )
    except Refused as refusal:
        fail(refusal.message)
    packs = ", ".join(p.slug for p in agent.granted_packs()) or "no packs"
    state = "offered" if agent.offered else "draft"
    say(f"created agent {agent.slug} ({agent.mode}; {packs}; {state})")


@agents.command("offer")
@click.argument("slug")
@click.option("--withdraw", is_flag=True, help="Take it back to a draft instead.")
def agents_offer(slug, withdraw):
    """Offer the agent SLUG to members in the support chat (or, with --withdraw, take it back)."""
    from portal.agents.services import set_offered
    from portal.models import Agent

    app_context()
    agent = Agent.get_or_none(Agent.slug == slug)
    if agent is None:
        fail(f"no such agent: {slug}")
    agent = set_offered(None, agent, not withdraw)
    say(f"{agent.slug}: {'offered to members' if agent.offered else 'a draft, not offered'}")


@agents.command("list")
@click.option("--json", "as_json", is_flag=True)
def agents_list(as_json):
    """List agents with their mode, company and granted packs."""
    from portal.agents.services import agents_as_json
    from portal.models import Agent

    app_context()
    echo_listing(
        agents_as_json(Agent.select().order_by(Agent.slug)),
        as_json,
        lambda row: (
            f"{row['slug']:30} {row['mode']:9} {'offered' if row['offered'] else 'draft':7} "
            f"{', '.join(row['packs']) or '-'}  {row['name']}"
        ),
    )


@click.command()
@click.argument("agent")
@click.argument("question")
@click.option("--json", "as_json", is_flag=True)
def ask(agent, question, as_json):
    """Ask AGENT (its slug) a QUESTION; the run is stored like one asked in the browser."""
    from portal.errors import Refused
    from portal.models import Agent
    from portal.runs.ask import ask as ask_agent
    from portal.runs.services import run_as_json

    app_context(check_every_index=True)
    found = Agent.get_or_none(Agent.slug == agent)
    if found is None:
        fail(f"no such agent: {agent}")
    try:
        run = ask_agent(found, None, question)
    except Refused as refusal:
        fail(refusal.message)
    record = run_as_json(run)
    if as_json:
        say(json.dumps(record))
        return
    say(record["answer"])
    if record["answer_basis"] == "no_evidence":
        searched = ", ".join(p["title"] for p in record["searched_packs"]) or "no pack (none is granted)"
        say(f"searched: {searched}")
    if record["warnings"]:
        say("")
        for warning in record["warnings"]:
            say(f"warning: {warning}")
    if record["references"]:
        say("")
        for ref in record["references"]:
            where = f"page {ref['page']}" if ref["page"] else f"v{ref['version']}"
            mark = "*" if ref["n"] in record["cited"] else " "
            say(f"{mark}[{ref['n']}] {ref['document_id']} {where} (passage {ref['passage_id']})")
    say(f"\nrun {record['run_id']}: {record['status']} ({record['mode']} mode)")
