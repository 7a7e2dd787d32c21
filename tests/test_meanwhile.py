"""A form saved after someone else's change keeps both changes for its person to check (``portal.meanwhile``)."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from portal.agents.services import create_agent, set_offered, update_agent
from portal.meanwhile import merged
from portal.models import Agent, AgentGrant, Pack
from portal.packs import views as packs_views
from portal.packs.services import create_pack, edit_pack


def test_each_field_keeps_the_change_made_to_it_and_a_set_keeps_both():
    base = {"title": "Ops", "description": "old", "mode": "open", "packs": frozenset({"a", "b"})}
    mine = {"title": "Ops desk", "description": "old", "mode": "required", "packs": frozenset({"a", "c"})}
    current = {"title": "Ops", "description": "new", "mode": "open-ish", "packs": frozenset({"a", "b", "d"})}
    merge = merged(base, mine, current)
    assert merge.form == {"title": "Ops desk", "description": "new", "mode": "required", "packs": {"a", "c", "d"}}
    assert (merge.theirs, merge.both) == (["description"], ["mode", "packs"])
    # the same change made by both is no conflict
    assert merged(base, mine, {**current, "mode": "required"}).both == ["packs"]


def _fields(response) -> tuple[BeautifulSoup, dict]:
    page = BeautifulSoup(response.get_data(as_text=True), "html.parser")
    hidden = {}
    for field in page.select("form input[type=hidden]"):
        hidden.setdefault(field["name"], []).append(field.get("value", ""))
    return page, hidden


def test_a_pack_form_refused_after_another_save_shows_their_description_and_keeps_this_title(app, client_as):
    create_pack("ops", "Operations", "generic", description="Runbooks")
    admin = client_as("PlatformAdmin")
    _, opened = _fields(admin.get("/packs/ops/edit"))
    edit_pack(None, Pack.get(Pack.slug == "ops"), "Operations", "Runbooks and notes", "sticker => label")

    form = {**opened, "title": "Ops desk", "description": "Runbooks", "vocabulary": ""}
    response = admin.post("/packs/ops/edit", data=form)
    page, again = _fields(response)
    assert response.status_code == 409
    assert "They changed its description and vocabulary: the form below shows theirs." in page.select_one(
        "[role=alert]"
    ).get_text(" ", strip=True)
    assert page.select_one("#title")["value"] == "Ops desk"
    assert page.select_one("#description").get_text() == "Runbooks and notes"
    assert page.select_one("#vocabulary").get_text() == "sticker => label"
    assert Pack.get(Pack.slug == "ops").title == "Operations"  # nothing saved

    saved = admin.post(
        "/packs/ops/edit",
        data={**again, "title": "Ops desk", "description": "Runbooks and notes", "vocabulary": "sticker => label"},
    )
    assert saved.status_code == 303
    pack = Pack.get(Pack.slug == "ops")
    assert (pack.title, pack.description, pack.vocabulary) == ("Ops desk", "Runbooks and notes", "sticker => label")


def test_a_rename_from_an_older_agent_form_keeps_the_grant_made_meanwhile(app, client_as):
    create_pack("ops", "Operations", "generic")
    create_pack("glossary", "Glossary", "generic")
    agent = create_agent(None, "desk", "Desk", "open", None, "", ["ops"])
    admin = client_as("PlatformAdmin")
    _, opened = _fields(admin.get("/agents/desk"))
    update_agent(
        None, agent, name="Desk", mode="required", company_name=None, instructions="", pack_slugs=["ops", "glossary"]
    )

    form = {**opened, "name": "Night desk", "mode": "open", "instructions": "", "description": "", "packs": ["ops"]}
    response = admin.post("/agents/desk", data=form)
    page, again = _fields(response)
    assert response.status_code == 409
    message = page.select_one("[role=alert]").get_text(" ", strip=True)
    assert "They changed its grounding mode and granted packs: the form below shows theirs." in message
    assert page.select_one("#name")["value"] == "Night desk"
    assert page.select_one("input[name=mode][value=required]").has_attr("checked")
    assert page.select_one("input[name=packs][value=glossary]").has_attr("checked")

    checked = [box["value"] for box in page.select("input[name=packs][checked]")]
    saved = admin.post("/agents/desk", data={**again, "name": "Night desk", "mode": "required", "packs": checked})
    assert saved.status_code == 303
    assert sorted(g.pack.slug for g in AgentGrant.select().where(AgentGrant.agent == agent)) == ["glossary", "ops"]


@pytest.mark.parametrize("path", ["/packs/ops/edit", "/agents/desk"])
def test_an_edit_form_carries_what_it_shows(app, client_as, path):
    create_pack("ops", "Operations <b>&amp;</b>", "generic", vocabulary="a => b\nc => d")
    create_agent(None, "desk", "Desk", "open", None, "line one\nline two", ["ops"])
    _, hidden = _fields(client_as("PlatformAdmin").get(path))
    if path.startswith("/packs"):  # a pack never changed since it was made; an agent has its time of making
        assert hidden["based_on"] == [""]
        assert hidden["base_title"] == ["Operations <b>&amp;</b>"] and hidden["base_vocabulary"] == ["a => b\nc => d"]
    else:
        assert hidden["based_on"][0].startswith("20")
        assert hidden["base_instructions"] == ["line one\nline two"] and hidden["base_packs"] == ["ops"]


def test_a_change_the_form_does_not_show_is_no_conflict(app, client_as):
    """Offering the agent meanwhile moves its time of change, but saving the form undoes nothing of it."""
    create_pack("ops", "Operations", "generic")
    agent = create_agent(None, "desk", "Desk", "open", None, "", ["ops"])
    admin = client_as("PlatformAdmin")
    _, opened = _fields(admin.get("/agents/desk"))
    set_offered(None, agent, True)

    form = {**opened, "name": "Night desk", "mode": "open", "instructions": "", "description": "", "packs": ["ops"]}
    assert admin.post("/agents/desk", data=form).status_code == 303
    assert Agent.get_by_id(agent.id).name == "Night desk" and Agent.get_by_id(agent.id).offered


def test_the_refused_page_is_based_on_the_row_the_refusal_read(app, client_as, monkeypatch):
    """A third save landing between the refusal and its page must still be caught by the next save."""
    create_pack("ops", "Operations", "generic", description="Runbooks")
    admin = client_as("PlatformAdmin")
    _, opened = _fields(admin.get("/packs/ops/edit"))
    edit_pack(None, Pack.get(Pack.slug == "ops"), "Operations", "Second", None)

    rendered = packs_views._edit_page

    def third_save_first(*args, **kwargs):  # the third save commits while the refused page is being made
        edit_pack(None, Pack.get(Pack.slug == "ops"), "Operations", "Third", None)
        return rendered(*args, **kwargs)

    monkeypatch.setattr(packs_views, "_edit_page", third_save_first)
    response = admin.post("/packs/ops/edit", data={**opened, "title": "Ops desk", "description": "Runbooks"})
    monkeypatch.undo()
    page, again = _fields(response)
    assert response.status_code == 409 and page.select_one("#description").get_text() == "Second"

    saved = admin.post("/packs/ops/edit", data={**again, "title": "Ops desk", "description": "Second"})
    assert saved.status_code == 409  # "Third" is not undone unseen
    assert Pack.get(Pack.slug == "ops").description == "Third"


def test_a_form_without_a_field_keeps_its_value_through_a_refusal(app, client_as):
    create_pack("ops", "Operations", "generic", vocabulary="sticker => label")
    admin = client_as("PlatformAdmin")
    _, opened = _fields(admin.get("/packs/ops/edit"))
    edit_pack(None, Pack.get(Pack.slug == "ops"), "Operations", "Changed", None)
    response = admin.post("/packs/ops/edit", data={**opened, "title": "Ops", "description": ""})  # no vocabulary
    page, _ = _fields(response)
    assert response.status_code == 409
    assert page.select_one("#vocabulary").get_text() == "sticker => label"


def test_the_refused_page_names_the_pack_as_the_other_person_renamed_it(app, client_as):
    create_pack("ops", "Operations", "generic")
    admin = client_as("PlatformAdmin")
    _, opened = _fields(admin.get("/packs/ops/edit"))
    edit_pack(None, Pack.get(Pack.slug == "ops"), "Night operations", "", None)
    page, _ = _fields(admin.post("/packs/ops/edit", data={**opened, "title": "Operations", "description": "Mine"}))
    assert page.select_one("title").get_text().startswith("Edit Night operations")
    assert page.select_one("#title")["value"] == "Night operations"  # theirs: this person left it as shown
