"""Agents: settings, grants under the company rule, the audit log, the pages and the command line."""

from __future__ import annotations

import json
from html import unescape

import pytest
from bs4 import BeautifulSoup

from helpers import cli_runner
from portal import access
from portal.agents import services
from portal.errors import Refused
from portal.models import Agent, AgentGrant, AuditLog, Company, Run
from portal.packs.services import create_pack
from portal.runs.ask import ask

STAFF = ("PlatformAdmin", "AgentBuilder", "Auditor")
MANAGERS = ("PlatformAdmin", "AgentBuilder")


def _soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def acme_pack(app):
    return create_pack("acme-notes", "Acme notes", "company", "Acme Test Co", add_company=True)


@pytest.fixture
def globex_pack(app):
    return create_pack("globex-notes", "Globex notes", "company", "Globex", add_company=True)


@pytest.fixture
def helper(app, pack, users):
    return services.create_agent(
        users["PlatformAdmin"], "helper", "Helper", "preferred", None, "Answer briefly.", ["ops"]
    )


# --- services ----------------------------------------------------------------------


def test_create_agent_with_grants_and_an_audit_entry(app, pack, other_pack, users):
    agent = services.create_agent(
        users["AgentBuilder"], "ops-helper", "Ops helper", "required", None, "Be brief.", ["ops", "other"]
    )
    assert (agent.slug, agent.name, agent.mode, agent.company_id, agent.seeded) == (
        "ops-helper",
        "Ops helper",
        "required",
        None,
        False,
    )
    assert [p.slug for p in agent.granted_packs()] == ["ops", "other"]
    entry = AuditLog.get()
    assert (entry.actor_id, entry.action, entry.target_type, entry.target_id) == (
        users["AgentBuilder"].id,
        "agent.create",
        "agent",
        agent.id,
    )
    assert entry.detail["packs"] == ["ops", "other"] and entry.detail["mode"] == "required"
    assert entry.detail["by"] == users["AgentBuilder"].email
    assert services.agents_as_json([agent]) == [
        {
            "slug": "ops-helper",
            "name": "Ops helper",
            "mode": "required",
            "offered": False,
            "description": "",
            "company": None,
            "packs": ["ops", "other"],
        }
    ]


@pytest.mark.parametrize(
    "slug, name, mode, reason",
    [
        ("Bad Slug", "Name", "open", "bad_slug"),
        ("ok", "  ", "open", "bad_name"),
        ("ok", "Name", "strict", "bad_mode"),
    ],
)
def test_bad_settings_are_refused(app, slug, name, mode, reason):
    with pytest.raises(Refused) as refused:
        services.create_agent(None, slug, name, mode)
    assert refused.value.reason == reason
    assert Agent.select().count() == 0


def test_a_company_wider_than_its_column_is_refused_in_the_browser_not_a_server_error(app, pack, client_as):
    """The agent form's company is whatever the browser sends: PostgreSQL refused a name over 255 characters
    (a 500), SQLite stored a company nobody had named; the pack form refused it already."""
    companies = [c.name for c in Company.select()]  # the signed-in Member's
    for form in (
        {"slug": "wide", "name": "Wide", "mode": "open", "company": "c" * 256},
        {"slug": "helper-2", "name": "Wide", "mode": "open", "company": "c" * 256, "packs": ["ops"]},
    ):
        response = client_as("AgentBuilder").post("/agents/", data=form)
        assert response.status_code == 422, response.get_data(as_text=True)[-500:]
        refusal = "A company's name has at most 255 characters; this one has 256."
        assert refusal in unescape(response.get_data(as_text=True))
    assert (Agent.select().count(), [c.name for c in Company.select()]) == (0, companies)
    with pytest.raises(Refused, match="A company's name has at most 255 characters; this one has 256."):
        services.update_agent(
            None,
            services.create_agent(None, "narrow", "Narrow", "open"),
            name="Narrow",
            mode="open",
            company_name="c" * 256,
            instructions="",
            pack_slugs=[],
        )
    assert [c.name for c in Company.select()] == companies


def test_a_company_the_form_does_not_offer_is_refused_not_added(app, helper, client_as):
    """The form chooses among existing companies (one rule with the pack form, portal/companies.py); a crafted
    name used to add a company nobody set up. Only the command line and the seed add companies."""
    companies = [c.name for c in Company.select()]
    builder = client_as("AgentBuilder")
    created = builder.post("/agents/", data={"slug": "crafted", "name": "Crafted", "mode": "open", "company": "Evil"})
    saved = builder.post("/agents/helper", data={"name": "Helper", "mode": "open", "company": "Evil", "packs": ["ops"]})
    for response in (created, saved):
        assert response.status_code == 422, response.get_data(as_text=True)[-500:]
        assert "“Evil”, which is no existing company" in unescape(response.get_data(as_text=True))
    assert [c.name for c in Company.select()] == companies
    assert Agent.get(Agent.slug == "helper").company_id is None
    assert not Agent.select().where(Agent.slug == "crafted").exists()
    cli_runner(app)("agents", "create", "set-up", "--name", "Set up", "--mode", "open", "--company", "Evil")
    assert Agent.get(Agent.slug == "set-up").company.name == "Evil"


def test_duplicate_slug_and_unknown_pack_are_refused(app, helper):
    with pytest.raises(Refused, match="exists already"):
        services.create_agent(None, "helper", "Again", "open")
    with pytest.raises(Refused, match="No such pack: nope"):
        services.create_agent(None, "another", "Another", "open", pack_slugs=["nope"])
    assert Agent.select().count() == 1


def test_company_pack_goes_only_to_an_agent_serving_that_company(app, acme_pack, globex_pack):
    with pytest.raises(Refused) as no_company:
        services.create_agent(None, "shared", "Shared", "open", None, pack_slugs=["acme-notes"])
    assert no_company.value.reason == "company_pack"
    assert "Acme Test Co's own material" in no_company.value.message
    assert "this agent serves no company" in no_company.value.message
    with pytest.raises(Refused) as other_company:
        services.create_agent(None, "globex", "Globex helper", "open", "Globex", pack_slugs=["acme-notes"])
    assert "this agent serves Globex" in other_company.value.message
    assert Agent.select().count() == 0 and AgentGrant.select().count() == 0

    agent = services.create_agent(None, "acme", "Acme helper", "open", "Acme Test Co", pack_slugs=["acme-notes"])
    assert [p.slug for p in agent.granted_packs()] == ["acme-notes"]


def test_changing_the_company_cannot_keep_another_company_pack(app, acme_pack):
    agent = services.create_agent(None, "acme", "Acme helper", "open", "Acme Test Co", pack_slugs=["acme-notes"])
    with pytest.raises(Refused, match="only to an agent that serves Acme Test Co"):
        services.update_agent(
            None, agent, name="Acme helper", mode="open", company_name=None, instructions="", pack_slugs=["acme-notes"]
        )
    fresh = Agent.get_by_id(agent.id)
    assert fresh.company.name == "Acme Test Co" and [p.slug for p in fresh.granted_packs()] == ["acme-notes"]
    assert AuditLog.select().count() == 1  # only the creation


def test_update_audits_who_when_and_what(app, helper, other_pack, users):
    builder = users["AgentBuilder"]
    services.update_agent(
        builder,
        helper,
        name="Helper",
        mode="required",
        company_name=None,
        instructions="Answer in one sentence.",
        pack_slugs=["other"],
    )
    fresh = Agent.get_by_id(helper.id)
    assert fresh.mode == "required" and [p.slug for p in fresh.granted_packs()] == ["other"]
    newest = services.history(fresh)[0]
    assert newest.actor_id == builder.id and newest.action == "agent.update" and newest.created_at is not None
    assert newest.detail["changed"]["mode"] == ["preferred", "required"]
    assert newest.detail["granted"] == ["other"] and newest.detail["revoked"] == ["ops"]
    assert (
        services.describe_change(newest) == "instructions changed; mode: preferred → required; granted other; "
        "revoked ops"
    )
    before = AuditLog.select().count()
    services.update_agent(
        builder,
        fresh,
        name="Helper",
        mode="required",
        company_name=None,
        instructions="Answer in one sentence.",
        pack_slugs=["other"],
    )
    assert AuditLog.select().count() == before  # nothing changed, nothing recorded


def test_deleting_an_agent_keeps_its_runs(app, helper, users):
    from portal.documents.services import upload_file

    upload_file(helper.granted_packs()[0], "spool.md", b"# Spool\n\nDelete old spool requests with RSPO1041.\n", None)
    run = ask(helper, users["AgentBuilder"], "How are old spool requests deleted?")
    services.delete_agent(users["PlatformAdmin"], helper)
    kept = Run.get_by_id(run.id)
    assert kept.agent_id is None and (kept.agent_slug, kept.agent_name) == ("helper", "Helper")
    assert AuditLog.select().where(AuditLog.action == "agent.delete").get().detail["packs"] == ["ops"]
    assert AgentGrant.select().count() == 0


# --- pages -------------------------------------------------------------------------

ROUTES = [
    ("GET", "/agents/", None, STAFF, 200),
    ("GET", "/agents/new", None, MANAGERS, 200),
    ("POST", "/agents/", {"slug": "new-agent", "name": "New", "mode": "open", "packs": ["ops"]}, MANAGERS, 303),
    ("GET", "/agents/helper", None, STAFF, 200),
    ("POST", "/agents/helper", {"name": "Helper", "mode": "required", "packs": ["ops"]}, MANAGERS, 303),
    ("POST", "/agents/helper/offer", {"offered": "1"}, MANAGERS, 303),
    ("POST", "/agents/helper/delete", None, MANAGERS, 303),
    ("GET", "/agents/helper/try", None, STAFF, 200),
    ("POST", "/agents/helper/try", {"question": "spool requests"}, STAFF, 303),
    ("GET", "/agents/missing", None, (), 404),
    ("GET", "/agents/missing/try", None, (), 404),
]


@pytest.mark.parametrize("role", ["PlatformAdmin", "AgentBuilder", "Auditor", "Member", None])
@pytest.mark.parametrize("method, path, data, allowed, ok_status", ROUTES, ids=[f"{r[0]} {r[1]}" for r in ROUTES])
def test_access_matrix(helper, client_as, role, method, path, data, allowed, ok_status):
    response = client_as(role).open(path, method=method, data=data)
    if role is None:
        assert response.status_code == 302 and "/login" in response.headers["Location"]
    elif role in allowed:
        assert response.status_code == ok_status, response.get_data(as_text=True)[:500]
    else:
        assert response.status_code == 404


def test_builder_creates_an_agent_in_the_browser(app, pack, client_as):
    response = client_as("AgentBuilder").post(
        "/agents/",
        data={
            "slug": "runbook-helper",
            "name": "Runbook helper",
            "mode": "required",
            "company": "",
            "instructions": "Cite every step.",
            "packs": ["ops"],
        },
    )
    assert response.status_code == 303 and response.headers["Location"].endswith("/agents/runbook-helper")
    agent = Agent.get(Agent.slug == "runbook-helper")
    assert agent.mode == "required" and [p.slug for p in agent.granted_packs()] == ["ops"]
    page = _soup(client_as("AgentBuilder").get("/agents/runbook-helper"))
    assert page.select_one("input[name=mode][value=required]").has_attr("checked")
    assert page.select_one("input[name=packs][value=ops]").has_attr("checked")
    history = page.select(".history li")
    assert len(history) == 1 and "agentbuilder@example.test" in history[0].text and "created" in history[0].text


def test_company_rule_in_the_browser_names_the_reason_and_keeps_the_form(app, acme_pack, client_as):
    response = client_as("PlatformAdmin").post(
        "/agents/",
        data={"slug": "shared", "name": "Shared helper", "mode": "open", "company": "", "packs": ["acme-notes"]},
    )
    assert response.status_code == 422
    page = _soup(response)
    assert "Acme Test Co's own material" in page.select_one(".error").text
    assert page.select_one("#name")["value"] == "Shared helper"
    assert page.select_one("input[name=packs][value=acme-notes]").has_attr("checked")
    assert Agent.select().count() == 0


def test_auditor_sees_agents_read_only(app, helper, client_as):
    page = _soup(client_as("Auditor").get("/agents/helper"))
    assert page.select_one("form.agent-form") is None
    assert "Delete agent" not in page.text
    assert page.select_one(".settings") is not None and "preferred" in page.select_one(".settings").text
    listing = _soup(client_as("Auditor").get("/agents/"))
    assert listing.select_one("a[href='/agents/new']") is None
    assert listing.select_one("a[href='/agents/helper/try']") is not None


def test_navigation_shows_agents_to_staff_only(app, helper, client_as):
    for role in STAFF:
        assert 'href="/agents/"' in client_as(role).get("/agents/").get_data(as_text=True)
    assert 'href="/agents/"' not in client_as("Member").get("/", follow_redirects=True).get_data(as_text=True)


# --- command line ------------------------------------------------------------------


@pytest.fixture
def cli(app):
    return cli_runner(app)


def test_cli_creates_and_lists_agents(cli):
    cli("packs", "create", "runbooks", "--title", "Runbooks")
    cli("packs", "create", "acme-fds", "--title", "Acme specs", "--kind", "company", "--company", "Acme")
    cli(
        "agents",
        "create",
        "acme-helper",
        "--name",
        "Acme helper",
        "--mode",
        "required",
        "--company",
        "Acme",
        "--grant",
        "runbooks",
        "--grant",
        "acme-fds",
        "--description",
        "Acme's own questions.",
        "--offer",
    )
    cli("agents", "create", "generic", "--name", "Generic", "--mode", "open")
    refused = cli(
        "agents", "create", "wrong", "--name", "Wrong", "--mode", "preferred", "--grant", "acme-fds", ok=False
    )
    assert refused.returncode == 2 and "only to an agent that serves Acme" in refused.stderr
    assert json.loads(cli("agents", "list", "--json").stdout) == [
        {
            "slug": "acme-helper",
            "name": "Acme helper",
            "mode": "required",
            "offered": True,
            "description": "Acme's own questions.",
            "company": "Acme",
            "packs": ["acme-fds", "runbooks"],
        },
        {
            "slug": "generic",
            "name": "Generic",
            "mode": "open",
            "offered": False,
            "description": "",
            "company": None,
            "packs": [],
        },
    ]
    assert "acme-helper" in cli("agents", "list").stdout
    assert "offered to members" in cli("agents", "offer", "generic").stdout
    assert Agent.get(Agent.slug == "generic").offered
    assert "a draft" in cli("agents", "offer", "generic", "--withdraw").stdout
    assert not Agent.get(Agent.slug == "generic").offered
    assert cli("agents", "offer", "missing", ok=False).returncode == 2


# --- drafts and offering ----------------------------------------------------------------

# Who looks at the chat: a Member of the agent's company, a Member of another company, a user whose
# roles do not include Member (each staff role, and an Auditor of the same company), and a Member who
# is also an Auditor.
CHAT_USERS = {
    "member": ({"Member"}, "Acme Test Co"),
    "other company": ({"Member"}, "Globex"),
    "admin": ({"PlatformAdmin"}, None),
    "builder": ({"AgentBuilder"}, None),
    "auditor": ({"Auditor"}, None),
    "auditor of acme": ({"Auditor"}, "Acme Test Co"),
    "member and auditor": ({"Member", "Auditor"}, "Acme Test Co"),
}


@pytest.fixture
def chat_users(app):
    from portal.auth.services import create_user

    return {
        who: create_user(f"{who.replace(' ', '-')}@example.test", "correct horse battery", roles, company)
        for who, (roles, company) in CHAT_USERS.items()
    }


@pytest.mark.parametrize("serves", ["Acme Test Co", None])
@pytest.mark.parametrize("offered", [False, True])
@pytest.mark.parametrize("who", sorted(CHAT_USERS))
def test_a_draft_is_seen_by_no_member_and_an_offered_agent_by_the_members_it_serves(
    app, pack, chat_users, serves, offered, who
):
    from helpers import signed_in_client

    services.create_agent(None, "desk", "Desk", "open", serves, "", ["ops"], description="Ops questions.")
    if offered:
        services.set_offered(None, Agent.get(Agent.slug == "desk"), True)
    user = chat_users[who]
    expected = offered and "Member" in user.roles and serves in (None, user.company.name if user.company else None)
    client = signed_in_client(app, user)
    chat = client.get("/chat/")
    listed = chat.status_code == 200 and _soup(chat).select_one("input[name=agent][value=desk]") is not None
    assert listed is expected
    assert (client.get("/chat/agents/desk").status_code == 200) is expected
    started = client.post("/chat/", data={"agent": "desk", "question": "spool requests"})
    assert started.status_code == (303 if expected else 404)


def test_a_new_agent_is_a_draft_until_a_builder_offers_it_and_the_chat_shows_its_description(
    app, pack, client_as, users
):
    created = client_as("AgentBuilder").post(
        "/agents/",
        data={"slug": "desk", "name": "Desk", "mode": "open", "description": "Runbook questions, step by step."},
    )
    assert created.status_code == 303
    services.update_agent(
        None,
        Agent.get(Agent.slug == "desk"),
        name="Desk",
        mode="open",
        company_name=None,
        instructions="",
        pack_slugs=["ops"],
    )
    page = _soup(client_as("AgentBuilder").get("/agents/desk"))
    assert page.select_one("h1 .badge-draft").text == "draft"
    assert "desk" not in [a.slug for a in access.agents_offered_to(users["Member"])]
    assert client_as("Member").get("/chat/agents/desk").status_code == 404

    assert client_as("AgentBuilder").post("/agents/desk/offer", data={"offered": "1"}).status_code == 303
    chat = _soup(client_as("Member").get("/chat/"))
    choice = chat.select_one("input[name=agent][value=desk]").find_parent("label")
    assert choice.select_one(".agent-description").text == "Runbook questions, step by step."
    listing = _soup(client_as("Auditor").get("/agents/"))
    assert listing.select_one(".badge-offered").text == "offered"
    assert [e.action for e in services.history(Agent.get(Agent.slug == "desk"))][0] == "agent.offer"
    assert "offered to members" in _soup(client_as("Auditor").get("/agents/desk")).select(".history li")[0].text

    assert client_as("PlatformAdmin").post("/agents/desk/offer", data={"offered": "0"}).status_code == 303
    assert client_as("Member").get("/chat/agents/desk").status_code == 404
    assert not Agent.get(Agent.slug == "desk").offered


def test_taking_the_last_pack_from_an_offered_agent_says_members_no_longer_see_it(app, pack, client_as):
    """Only "Saved." was said, and the agent silently left the members' chat (found by a browser walkthrough)."""
    services.create_agent(None, "desk", "Desk", "open", None, "", ["ops"], offered=True)
    builder = client_as("AgentBuilder")
    form = {"name": "Desk", "mode": "open", "instructions": ""}
    page = _soup(builder.post("/agents/desk", data=form, follow_redirects=True))
    assert page.select_one(".flash").text.strip() == (
        "Saved. Desk is offered but has no pack: members do not see it until a pack is granted."
    )
    page = _soup(builder.post("/agents/desk", data={**form, "packs": ["ops"]}, follow_redirects=True))
    assert page.select_one(".flash").text.strip() == "Saved."


def test_an_offered_agent_without_a_pack_is_badged_as_not_shown_to_members(app, pack, client_as, users):
    """Members never see an agent that can only answer "no evidence": the badge says so, not "offered"."""
    services.create_agent(None, "idle", "Idle", "open", None, "", [], offered=True)
    for address in ("/agents/", "/agents/idle"):
        badge = _soup(client_as("AgentBuilder").get(address)).select_one(".badge-draft, .badge-offered")
        assert badge.text == "offered, not shown: no pack granted", address
    assert client_as("Member").get("/chat/agents/idle").status_code == 404
    services.update_agent(
        None,
        Agent.get(Agent.slug == "idle"),
        name="Idle",
        mode="open",
        company_name=None,
        instructions="",
        pack_slugs=["ops"],
    )
    assert _soup(client_as("AgentBuilder").get("/agents/idle")).select_one("h1 .badge-offered").text == "offered"
    assert client_as("Member").get("/chat/agents/idle").status_code == 200


def test_a_description_is_one_short_line(app, pack):
    with pytest.raises(Refused) as refused:
        services.create_agent(None, "desk", "Desk", "open", description="x" * 301)
    assert refused.value.reason == "description_too_long" and "300" in refused.value.message
    agent = services.create_agent(None, "desk", "Desk", "open", description="  Two\n  lines  ")
    assert agent.description == "Two lines"
