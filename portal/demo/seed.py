"""Load the demo catalog (portal/demo/catalog.py, from the corpus and catalog.toml) into the database, idempotently.

Packs, users and the company are created when missing; every document goes
through the same upload service as a browser upload, so an unchanged document
makes no new revision. Seeded agents are created or returned to their catalog
settings (mode, grants, instructions).

What an administrator deliberately deleted stays deleted: a demo document whose
id is a tombstone and a seeded agent whose deletion is in the audit log are
skipped and reported, and the rest of the seed still runs.

The demo brings an administrator with a published password, so it is only for
a database with no users of its own: ``users_of_its_own`` lets the command
refuse a real deployment unless asked explicitly.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from portal.agents.services import create_agent, update_agent
from portal.auth.services import create_user
from portal.demo import catalog
from portal.documents.ids import document_id_for
from portal.documents.readers import ReaderAccess
from portal.documents.services import upload_file
from portal.errors import Refused
from portal.models import Agent, AuditLog, Document, Pack, User
from portal.packs.services import create_pack, edit_pack
from portal.search.service import batched_index_updates


@dataclass
class SeedReport:
    packs_created: list[str] = field(default_factory=list)
    users_created: list[str] = field(default_factory=list)
    documents_added: list[str] = field(default_factory=list)
    documents_updated: list[str] = field(default_factory=list)
    documents_unchanged: int = 0
    agents_created: list[str] = field(default_factory=list)
    agents_reset: list[str] = field(default_factory=list)
    documents_deleted: list[str] = field(default_factory=list)  # deleted by an administrator: not brought back
    agents_deleted: list[str] = field(default_factory=list)
    packs_deleted: list[str] = field(default_factory=list)  # deleted by an administrator: not brought back

    @property
    def changed(self) -> bool:
        return bool(
            self.packs_created
            or self.users_created
            or self.documents_added
            or self.documents_updated
            or self.agents_created
            or self.agents_reset
        )


def is_empty() -> bool:
    """Nothing of anyone's yet: no user and no pack (a fresh `cairn init` without an administrator)."""
    return not User.select().exists() and not Pack.select().exists()


def unfinished() -> bool:
    """Whether a demo seed was stopped before its end (killed): the database holds demo packs and users only, and a
    demo user or agent is still missing. ``cairn seed-demo --if-empty`` finishes it; a portal nobody could sign in
    to was left otherwise (the seed creates its users after its packs)."""
    if is_empty() or users_of_its_own():
        return False
    if Pack.select().where(Pack.slug.not_in([entry["slug"] for entry in catalog.PACKS])).exists():
        return False
    if any(User.by_email(entry["email"]) is None for entry in catalog.DEMO_USERS):
        return True
    present = {slug for (slug,) in Agent.select(Agent.slug).tuples()} | _deleted_agents()
    return any(entry["slug"] not in present for entry in catalog.AGENTS)


def users_of_its_own() -> list[str]:
    """E-mails of users the demo catalog did not make: their presence means a real deployment."""
    demo = [entry["email"] for entry in catalog.DEMO_USERS]
    return [u.email for u in User.select(User.email).where(User.email.not_in(demo)).order_by(User.email)]


def seed_demo() -> SeedReport:
    report = SeedReport()
    with batched_index_updates():
        for entry in catalog.PACKS:
            _seed_pack(entry, report)
    for entry in catalog.DEMO_USERS:
        if User.by_email(entry["email"]) is None:
            create_user(entry["email"], entry["password"], set(entry["roles"]), entry["company"])
            report.users_created.append(entry["email"])
    _seed_agents(report)
    return report


def _seed_pack(entry: dict, report: SeedReport) -> None:
    pack = Pack.get_or_none(Pack.slug == entry["slug"])
    if pack is not None and pack.is_deleted:  # deleted by an administrator: not brought back
        report.packs_deleted.append(pack.slug)
        return
    if pack is None:
        pack = create_pack(
            entry["slug"],
            entry["title"],
            entry["kind"],
            entry.get("company"),
            entry.get("description", ""),
            add_company=True,
            vocabulary=entry.get("vocabulary", ""),
        )
        report.packs_created.append(pack.slug)
    elif entry.get("vocabulary") and not pack.vocabulary and pack.updated_at is None:  # seeded before vocabularies
        pack = edit_pack(None, pack, pack.title, pack.description, entry["vocabulary"])
    with tempfile.TemporaryDirectory(prefix="cairn-seed-") as scratch:
        for document in entry["documents"]:
            path = catalog.build_document(document, Path(scratch))
            # The catalog's visibility, through the upload so the passages land in its index partition;
            # reader roles an administrator set stay.
            existing = Document.get_or_none((Document.pack == pack) & (Document.doc_id == document_id_for(path.name)))
            roles = tuple(existing.reader_role_names) if existing is not None else ()
            access = ReaderAccess(entry.get("visibility", "staff"), roles)
            outcome = upload_file(pack, path.name, path.read_bytes(), None, reader_access=access)
            if not outcome.accepted and outcome.refused.reason == "id_reused":
                report.documents_deleted.append(f"{pack.slug}/{document_id_for(path.name)}")
                continue
            if not outcome.accepted:
                raise Refused(
                    outcome.refused.reason, f"demo document {path.name} was refused: {outcome.refused.message}"
                )
            if outcome.unchanged:
                report.documents_unchanged += 1
            elif outcome.created:
                report.documents_added.append(f"{pack.slug}/{outcome.document.doc_id}")
            else:
                report.documents_updated.append(f"{pack.slug}/{outcome.document.doc_id}")


def _deleted_agents() -> set[str]:
    """The slugs of agents an administrator deleted: the seed does not bring them back."""
    return {row.detail.get("slug") for row in AuditLog.select(AuditLog.detail).where(AuditLog.action == "agent.delete")}


def _seed_agents(report: SeedReport) -> None:
    """Create missing catalog agents; return seeded ones to their catalog mode, leaving other edits alone."""
    deleted = _deleted_agents()
    for entry in catalog.AGENTS:
        agent = Agent.get_or_none(Agent.slug == entry["slug"])
        if agent is None and entry["slug"] in deleted:
            report.agents_deleted.append(entry["slug"])
        elif agent is None:
            create_agent(
                None,
                entry["slug"],
                entry["name"],
                entry["mode"],
                entry["company"],
                entry["instructions"],
                [slug for slug in entry["packs"] if slug not in report.packs_deleted],
                seeded=True,
                description=entry["description"],
                offered=True,  # the demo's agents are ready: members see them at once
                add_company=True,
            )
            report.agents_created.append(entry["slug"])
        elif agent.seeded and (agent.mode != entry["mode"] or not agent.description):
            update_agent(
                None,
                agent,
                name=agent.name,
                mode=entry["mode"],
                company_name=agent.company.name if agent.company_id else None,
                instructions=agent.instructions,
                pack_slugs=[p.slug for p in agent.granted_packs()],
                # one seeded before agents had descriptions gets its own; an edited one keeps its
                description=agent.description or entry["description"],
            )
            report.agents_reset.append(entry["slug"])
