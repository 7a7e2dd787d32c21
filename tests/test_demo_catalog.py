"""The demo catalog derived from the corpus seeds exactly what the hand-written catalog seeded.

``resources/demo_seed_snapshot.json`` was captured from the seed of the catalog as it stood before
packs and titles were derived from the corpus folders (portal/demo/catalog.py, commit cbd3b2f).
"""

from __future__ import annotations

import json
from pathlib import Path

from portal.demo import catalog
from portal.demo.seed import seed_demo
from portal.models import Agent, Document, Pack, User

SNAPSHOT = Path(__file__).parent / "resources" / "demo_seed_snapshot.json"


def seeded_snapshot() -> dict:
    """What a seed put in the database, in a stable order (no row ids, no timestamps)."""
    return {
        "packs": [
            [p.slug, p.title, p.description, p.kind, p.company.name if p.company else None]
            for p in Pack.select().order_by(Pack.slug)
        ],
        "documents": [
            [d.pack.slug, d.doc_id, d.title, d.visibility, d.kind]
            for d in Document.select().join(Pack).order_by(Pack.slug, Document.doc_id)
        ],
        "agents": [
            [
                a.slug,
                a.name,
                a.company.name if a.company else None,
                a.mode,
                a.instructions,
                [p.slug for p in a.granted_packs()],
            ]
            for a in Agent.select().order_by(Agent.slug)
        ],
        "users": [
            [u.email, sorted(u.roles), u.company.name if u.company else None]
            for u in User.select().order_by(User.email)
        ],
    }


def catalog_snapshot() -> dict:
    """The catalog's own data, in its own order (the seed's order); agents' descriptions (issue 13) and packs'
    vocabularies came later."""
    agents = [{key: value for key, value in agent.items() if key != "description"} for agent in catalog.AGENTS]
    packs = [{key: value for key, value in pack.items() if key != "vocabulary"} for pack in catalog.PACKS]
    return {"packs": packs, "agents": agents, "users": catalog.DEMO_USERS, "company": catalog.COMPANY}


def test_the_seed_makes_the_same_packs_documents_agents_and_users(app):
    seed_demo()
    assert seeded_snapshot() == json.loads(SNAPSHOT.read_text())["seeded"]


def test_the_catalog_is_the_same_data_in_the_same_order():
    assert json.loads(json.dumps(catalog_snapshot())) == json.loads(SNAPSHOT.read_text())["catalog"]
    assert all(agent["description"] for agent in catalog.AGENTS)
