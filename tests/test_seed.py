"""The demo seed: counts, kinds, keyword lines, figures, idempotence, agent modes, demo sign-ins."""

from __future__ import annotations

from collections import Counter

import pytest

from helpers import login
from portal.agents.services import update_agent
from portal.demo import catalog
from portal.demo.seed import is_empty, seed_demo
from portal.models import MAX_DESCRIPTION_CHARS, Agent, Document, Figure, Pack, Revision, User

CORPUS_COUNTS = {
    "company-ams-incident-digests": 30,
    "company-solution-design-fds": 7,
    "company-change-and-downtime-calendar": 6,
    "sap-operations-runbooks": 12,
}


@pytest.fixture
def seeded(app):
    assert is_empty()
    report = seed_demo()
    assert not is_empty()
    return report


def test_packs_documents_and_kinds(seeded):
    packs = {p.slug: p for p in Pack.select()}
    assert len(packs) == 11
    counts = Counter(d.pack.slug for d in Document.select().where(Document.deleted_at.is_null()))
    assert {slug: counts[slug] for slug in CORPUS_COUNTS} == CORPUS_COUNTS
    singles = [slug for slug in packs if slug not in CORPUS_COUNTS]
    assert len(singles) == 7 and all(counts[slug] == 1 for slug in singles)
    assert sum(CORPUS_COUNTS.values()) == 55
    company = {slug for slug, p in packs.items() if p.kind == "company"}
    assert company == {
        "company-ams-incident-digests",
        "company-solution-design-fds",
        "company-change-and-downtime-calendar",
    }
    assert {packs[s].company.name for s in company} == {catalog.COMPANY["name"]}
    assert packs["sap-operations-runbooks"].kind == "generic"
    kinds = Counter(d.kind for d in Document.select())
    assert kinds["docx"] >= 1 and kinds["pdf"] >= 1


def test_every_document_ends_with_a_keyword_line(seeded):
    for document in Document.select():
        lines = [line for line in document.current_revision().text.splitlines() if line.strip()]
        assert lines[-1].startswith("Keywords:"), (document.doc_id, lines[-1])


def test_word_and_pdf_documents_have_figures_originals_and_pages(seeded):
    for kind in ("docx", "pdf"):
        document = Document.get(Document.kind == kind)
        revision = document.current_revision()
        assert revision.original_path and Figure.select().where(Figure.revision == revision).count() >= 1
    pdf_document = Document.get(Document.kind == "pdf")
    pdf = pdf_document.current_revision()
    assert pdf.pages >= 2 and pdf.text.startswith("Page 1\n")
    assert pdf_document.title == "Worked examples: triaging SAP interface incidents"  # the PDF's own title


def test_agents_modes_and_grants(seeded):
    agents = list(Agent.select())
    assert len(agents) == len(catalog.AGENTS) and all(a.seeded for a in agents)
    assert all(a.offered for a in agents)  # the demo's agents are in the chat at once, not drafts
    assert all(0 < len(a.description) <= MAX_DESCRIPTION_CHARS for a in agents)
    modes = Counter(a.mode for a in agents)
    assert modes["preferred"] == 10 and modes["open"] == len(agents) - 10
    for agent in agents:
        for pack in agent.granted_packs():
            if pack.kind == "company":
                assert agent.company_id == pack.company_id


def test_reseeding_changes_nothing_but_returns_agents_to_their_modes(seeded):
    revisions = Revision.select().count()
    again = seed_demo()
    assert not again.changed and again.documents_unchanged == 62
    assert Revision.select().count() == revisions
    agent = Agent.get(Agent.slug == "sap-runbook-guide")
    kept_packs = [p.slug for p in agent.granted_packs()][:1]
    update_agent(
        None,
        agent,
        name="Renamed guide",
        mode="required",
        company_name=None,
        instructions=agent.instructions,
        pack_slugs=kept_packs,
    )
    third = seed_demo()
    assert third.agents_reset == ["sap-runbook-guide"]
    agent = Agent.get(Agent.slug == "sap-runbook-guide")
    assert agent.mode == "preferred"
    assert agent.name == "Renamed guide" and [p.slug for p in agent.granted_packs()] == kept_packs


def test_demo_sign_ins_work(seeded, app):
    for entry in catalog.DEMO_USERS:
        user = User.by_email(entry["email"])
        assert set(entry["roles"]) == set(user.roles)
        response = login(app.test_client(), entry["email"], entry["password"])
        assert response.status_code == 302, entry["email"]


def test_runbooks_name_no_company_system(seeded):
    for document in Document.select().join(Pack).where(Pack.slug == "sap-operations-runbooks"):
        text = document.current_revision().text
        assert not any(sid in text.split() for sid in catalog.COMPANY_SYSTEM_IDS), document.doc_id
        assert catalog.COMPANY["short_name"] not in text


def test_reseeding_skips_what_an_administrator_deleted_and_still_resets_the_agents(seeded):
    from portal.agents.services import delete_agent
    from portal.documents.editing import delete_document

    document = Document.get(Document.doc_id == "change-request-guide")
    delete_document(document, document.current_version)
    delete_agent(None, Agent.get(Agent.slug == "change-request-helper"))
    agent = Agent.get(Agent.slug == "sap-runbook-guide")
    update_agent(
        None,
        agent,
        name=agent.name,
        mode="required",
        company_name=None,
        instructions=agent.instructions,
        pack_slugs=[p.slug for p in agent.granted_packs()],
    )
    again = seed_demo()
    assert again.documents_deleted == [f"{document.pack.slug}/change-request-guide"]
    assert again.agents_deleted == ["change-request-helper"]
    assert again.agents_reset == ["sap-runbook-guide"] and not again.agents_created
    assert Agent.get(Agent.slug == "sap-runbook-guide").mode == "preferred"
    assert Agent.get_or_none(Agent.slug == "change-request-helper") is None
    assert Document.get_by_id(document.id).is_deleted


def test_a_database_with_its_own_administrator_is_not_empty_and_not_the_demos(app):
    from portal.auth.services import create_user
    from portal.demo.seed import users_of_its_own

    assert is_empty() and users_of_its_own() == []
    create_user("owner@example.test", "long enough password", {"PlatformAdmin"})
    assert not is_empty()
    assert users_of_its_own() == ["owner@example.test"]


def test_the_demo_member_reads_the_shared_and_company_documents_in_the_library(seeded):
    """The catalog's visibility reaches the index partitions, so the member's Library search finds them."""
    from portal import access
    from portal.library.services import search_library

    member = User.get(User.email == "member@demo.cairn.test")
    readable = {(d.pack.slug, d.visibility) for d in access.library_documents(member)}
    assert ("sap-glossary", "shared") in readable
    assert any(visibility == "company" for _, visibility in readable)
    assert not any(visibility == "staff" for _, visibility in readable)
    found = search_library(member, "glossary")
    assert found.hits and {h.pack for h in found.hits} <= {slug for slug, _ in readable}


def test_re_seeding_fills_a_demo_pack_s_vocabulary_once_and_never_one_an_administrator_emptied(app):
    from portal.models import Pack
    from portal.packs.services import edit_pack

    seed_demo()
    runbooks = Pack.get(Pack.slug == "sap-operations-runbooks")
    assert "invoice => billing" in runbooks.vocabulary
    Pack.update(vocabulary="").where(Pack.id == runbooks.id).execute()  # seeded before packs had vocabularies
    seed_demo()
    assert "invoice => billing" in Pack.get_by_id(runbooks.id).vocabulary

    edit_pack(None, Pack.get_by_id(runbooks.id), runbooks.title, runbooks.description, "")  # emptied on purpose
    seed_demo()
    assert Pack.get_by_id(runbooks.id).vocabulary == ""
