"""Agents: creation, changes, pack grants and offering them to members, each change written to the audit log.

A new agent is a draft: members see it in the support chat only once an
administrator or builder offers it (``set_offered``).

A company pack is granted only to an agent that serves that company; the rule
is checked on every save, so changing an agent's company cannot leave it with
another company's pack.
"""

from __future__ import annotations

from peewee import JOIN, IntegrityError

from portal.audit import audit
from portal.companies import company_named
from portal.controls import shows_nothing
from portal.db import database, locking
from portal.errors import NotFound, Refused, too_long
from portal.meanwhile import refuse_if_changed
from portal.models import (
    GROUNDING_MODES,
    MAX_DESCRIPTION_CHARS,
    Agent,
    AgentGrant,
    AuditLog,
    Company,
    Pack,
    Run,
    User,
    utcnow,
)
from portal.packs.services import SLUG_RE, SLUG_RULE

MAX_NAME_CHARS = 255
MAX_INSTRUCTIONS_CHARS = 8_000

MODE_HELP = {
    "open": "receives the references and is not asked to cite them",
    "preferred": "asked to cite [n]; the run still completes, with a warning, when no acceptable passage "
    "was found or the answer cites none",
    "required": "stops before the model is called when no acceptable passage was found; an answer that "
    "cites none of its references is not accepted",
}


def create_agent(
    actor: User | None,
    slug: str,
    name: str,
    mode: str,
    company_name: str | None = None,
    instructions: str = "",
    pack_slugs=(),
    seeded: bool = False,
    *,
    description: str = "",
    offered: bool = False,
    add_company: bool = False,
) -> Agent:
    """Create an agent with its grants (a draft unless ``offered``); refuse a bad slug, name, mode,
    description, a company that does not exist (unless ``add_company``: the command line and the seed)
    or a grant the company rule forbids."""
    slug = (slug or "").strip()
    if not SLUG_RE.match(slug):
        raise Refused("bad_slug", f"An agent slug has {SLUG_RULE}.")
    name, instructions = _checked_name(name), _checked_instructions(instructions)
    description = _checked_description(description)
    _check_mode(mode)
    with database().atomic():
        if Agent.get_or_none(Agent.slug == slug) is not None:
            raise _slug_taken(slug)
        company = company_named(company_name, add=add_company)
        packs = _grantable_packs(pack_slugs, company)
        try:
            with database().atomic():
                agent = Agent.create(
                    slug=slug,
                    name=name,
                    mode=mode,
                    company=company,
                    instructions=instructions,
                    description=description,
                    offered=offered,
                    seeded=seeded,
                )
        except IntegrityError:  # PostgreSQL: another builder's agent was committed after the check
            raise _slug_taken(slug) from None
        _grant(agent, packs)
        audit(
            actor,
            "agent.create",
            agent,
            {
                "slug": slug,
                "name": name,
                "mode": mode,
                "company": company.name if company else None,
                "instructions": instructions,
                "description": description,
                "offered": offered,
                "packs": [p.slug for p in packs],
            },
        )
    return agent


def update_agent(
    actor: User | None,
    agent: Agent,
    *,
    name: str,
    mode: str,
    company_name: str | None,
    instructions: str,
    pack_slugs,
    description: str | None = None,
    based_on: str | None = None,
    base: dict | None = None,
) -> Agent:
    """Save new settings and grants as given (grants not listed are revoked; ``description`` None: kept);
    audit what changed. ``based_on`` and ``base``: when the agent had last changed as the form showed it
    (``wording.edit_stamp``), and the values it showed (``FIELD_NAMES``, ``packs`` a set); ``ChangedMeanwhile``
    when it has changed since, so a form opened before another administrator's save does not silently undo it
    (its grants above all; ``portal.meanwhile``)."""
    name, instructions = _checked_name(name), _checked_instructions(instructions)
    description = None if description is None else _checked_description(description)
    _check_mode(mode)
    with database().atomic():
        # Locked: a second save at the same moment starts from this one's grants, not the same old ones.
        agent = _locked(agent)
        description = agent.description if description is None else description  # kept as it is now
        company = company_named(company_name)
        packs = _grantable_packs(pack_slugs, company)
        before = _settings(agent)
        old_packs = {p.slug for p in agent.granted_packs()}
        agent.name, agent.mode, agent.company, agent.instructions = name, mode, company, instructions
        agent.description = description
        after = _settings(agent)
        new_packs = {p.slug for p in packs}
        changed = {key: [before[key], after[key]] for key in before if before[key] != after[key]}
        granted, revoked = sorted(new_packs - old_packs), sorted(old_packs - new_packs)
        if not (changed or granted or revoked):
            return agent
        mine = {**_form_values(after), "packs": frozenset(new_packs)}
        current = {**_form_values(before), "packs": frozenset(old_packs)}
        refuse_if_changed("agent", agent.updated_at, based_on, base, mine, current, FIELD_NAMES)
        agent.updated_at = utcnow()
        agent.save()
        if revoked:
            AgentGrant.delete().where(
                (AgentGrant.agent == agent) & AgentGrant.pack.in_(Pack.select(Pack.id).where(Pack.slug.in_(revoked)))
            ).execute()
        _grant(agent, [p for p in packs if p.slug in granted])
        audit(
            actor,
            "agent.update",
            agent,
            {"slug": agent.slug, "changed": changed, "granted": granted, "revoked": revoked},
        )
    return agent


def set_offered(actor: User | None, agent: Agent, offered: bool) -> Agent:
    """Offer the agent to members (its company's, or every company's when it serves none) or take it
    back to a draft; audited. Conversations with a withdrawn agent stay readable but cannot go on."""
    with database().atomic():
        agent = _locked(agent)
        if agent.offered != offered:
            agent.offered, agent.updated_at = offered, utcnow()
            agent.save(only=[Agent.offered, Agent.updated_at])
            audit(actor, "agent.offer" if offered else "agent.withdraw", agent, {"slug": agent.slug})
    # The row as this transaction left it: reading it again after the commit could meet a deletion
    # that was waiting on the lock (a 500 on PostgreSQL).
    return agent


def delete_agent(actor: User | None, agent: Agent) -> None:
    """Delete an agent and its grants; its runs stay, naming it by the slug and name they kept."""
    with database().atomic():
        agent = _locked(agent)
        detail = {"slug": agent.slug, "name": agent.name, "packs": [p.slug for p in agent.granted_packs()]}
        audit(actor, "agent.delete", agent, detail)
        Agent.delete().where(Agent.id == agent.id).execute()


def _locked(agent: Agent) -> Agent:
    """The agent's row, locked until the change's transaction ends; ``NotFound`` when another administrator
    deleted it after this request found it (the 404 the request would get a moment later), never a 500."""
    locked = locking(Agent.select().where(Agent.id == agent.id)).first()
    if locked is None:
        raise NotFound(agent.slug)
    return locked


def history(agent: Agent) -> list[AuditLog]:
    """The agent's audit entries, newest first."""
    return list(
        AuditLog.select(AuditLog, User)
        .join(User, JOIN.LEFT_OUTER, on=(AuditLog.actor == User.id))
        .where((AuditLog.target_type == "agent") & (AuditLog.target_id == agent.id))
        .order_by(AuditLog.created_at.desc(), AuditLog.id.desc())
    )


def describe_change(entry: AuditLog) -> str:
    """One line saying what an audit entry changed, for people."""
    detail = entry.detail
    if entry.action == "agent.create":
        packs = ", ".join(detail.get("packs") or []) or "no packs"
        return f"created in {detail.get('mode')} mode, granted {packs}"
    if entry.action == "agent.delete":
        return "deleted"
    if entry.action == "agent.offer":
        return "offered to members"
    if entry.action == "agent.withdraw":
        return "taken back to a draft: no longer offered to members"
    parts = []
    for key, (old, new) in sorted((detail.get("changed") or {}).items()):
        if key in ("instructions", "description"):
            parts.append(f"{key} changed")
        else:
            parts.append(f"{key}: {old or 'none'} → {new or 'none'}")
    if detail.get("granted"):
        parts.append("granted " + ", ".join(detail["granted"]))
    if detail.get("revoked"):
        parts.append("revoked " + ", ".join(detail["revoked"]))
    return "; ".join(parts) or "updated"


# --- What the agent pages list ----------------------------------------------------------


def all_agents() -> list[Agent]:
    return list(Agent.select().order_by(Agent.name))


def grants_by_agent(agents: list[Agent]) -> dict[int, list[Pack]]:
    """Each of ``agents``' granted packs by slug, in one query (the agents list, the chat's other agents)."""
    grants: dict[int, list[Pack]] = {a.id: [] for a in agents}
    if not agents:
        return grants
    query = AgentGrant.select(AgentGrant, Pack).join(Pack).where(AgentGrant.agent.in_(list(grants)))
    for grant in query.order_by(Pack.slug):
        grants[grant.agent_id].append(grant.pack)
    return grants


def grantable_packs() -> list[Pack]:
    """Every pack the agent form offers, company packs first."""
    return list(Pack.live().order_by(Pack.kind.desc(), Pack.title))


def recent_runs(agent: Agent, limit: int) -> list[Run]:
    return list(Run.select().where(Run.agent == agent).order_by(Run.created_at.desc(), Run.id.desc()).limit(limit))


def run_of(agent: Agent, run_id: int) -> Run | None:
    """Run ``run_id`` when it was put to ``agent``."""
    return Run.get_or_none((Run.id == run_id) & (Run.agent == agent))


def agents_as_json(agents) -> list[dict]:
    """``[{"slug", "name", "mode", "offered", "description", "company", "packs": [slugs]}]``
    (the CLI's ``agents list --json``)."""
    return [
        {
            "slug": a.slug,
            "name": a.name,
            "mode": a.mode,
            "offered": a.offered,
            "description": a.description,
            "company": a.company.name if a.company_id else None,
            "packs": [p.slug for p in a.granted_packs()],
        }
        for a in agents
    ]


# The fields of the agent's form, as a message names them.
FIELD_NAMES = {
    "name": "name",
    "mode": "grounding mode",
    "company": "company",
    "instructions": "instructions",
    "description": "description",
    "packs": "granted packs",
}


def form_values(agent: Agent) -> dict:
    """The agent's settings as its form shows them (the company by name, "" for none), its grants a set."""
    return {**_form_values(_settings(agent)), "packs": frozenset(p.slug for p in agent.granted_packs())}


def _form_values(settings: dict) -> dict:
    return {**settings, "company": settings["company"] or ""}


def _settings(agent: Agent) -> dict:
    return {
        "name": agent.name,
        "mode": agent.mode,
        "instructions": agent.instructions,
        "description": agent.description,
        "company": Company.get_by_id(agent.company_id).name if agent.company_id else None,
    }


def _slug_taken(slug: str) -> Refused:
    return Refused("slug_taken", f"An agent {slug!r} exists already.")


def _checked_name(name: str) -> str:
    name = (name or "").strip()
    if shows_nothing(name):
        raise Refused("bad_name", "An agent needs a name.")
    if len(name) > MAX_NAME_CHARS:
        raise too_long("bad_name", "An agent's name", MAX_NAME_CHARS, len(name))
    return name


def _checked_instructions(instructions: str) -> str:
    instructions = (instructions or "").replace("\r\n", "\n").strip()
    if len(instructions) > MAX_INSTRUCTIONS_CHARS:
        raise too_long("instructions_too_long", "The instructions text", MAX_INSTRUCTIONS_CHARS, len(instructions))
    return instructions


def _checked_description(description: str) -> str:
    description = " ".join((description or "").split())
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise too_long("description_too_long", "A description", MAX_DESCRIPTION_CHARS, len(description))
    return description


def _check_mode(mode: str) -> None:
    if mode not in GROUNDING_MODES:
        raise Refused("bad_mode", "The grounding mode is open, preferred or required.")


def _grantable_packs(pack_slugs, company: Company | None) -> list[Pack]:
    """The packs named, each checked against the company rule; a missing one is refused by name.

    Called in the save's transaction: the packs stay live until it commits (``FOR SHARE``), so a pack's
    deletion either came first (the pack is missing here) or waits and then revokes the new grant. Read
    without the lock, a deletion committed meanwhile left the agent a grant of the deleted pack (PostgreSQL)."""
    slugs = sorted({s.strip() for s in pack_slugs if s and s.strip()})
    packs = {p.slug: p for p in locking(Pack.live().where(Pack.slug.in_(slugs)), shared=True)} if slugs else {}
    missing = [s for s in slugs if s not in packs]
    if missing:
        raise Refused("unknown_pack", f"No such pack: {', '.join(missing)}.")
    for pack in packs.values():
        refuse_company_grant(pack, company)
    return [packs[s] for s in slugs]


def refuse_company_grant(pack: Pack, company: Company | None) -> None:
    """A company pack goes only to an agent serving that company."""
    if pack.kind != "company" or (company is not None and pack.company_id == company.id):
        return
    if pack.company_id is None:  # stored before company names were checked for visible characters
        raise Refused(
            "company_pack",
            f"The pack {pack.slug!r} is a company pack that names no company: it can be granted to no agent until "
            "it names one.",
        )
    owner = pack.company.name
    serves = f"this agent serves {company.name}" if company else "this agent serves no company"
    raise Refused(
        "company_pack",
        f"The pack {pack.slug!r} is {owner}'s own material: it can be granted only "
        f"to an agent that serves {owner}, and {serves}.",
    )


def _grant(agent: Agent, packs: list[Pack]) -> None:
    for pack in packs:
        AgentGrant.create(agent=agent, pack=pack)
