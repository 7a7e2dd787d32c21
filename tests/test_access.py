"""The access matrix: every route × every role. A "no" is the same 404 as a missing thing."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path
from types import SimpleNamespace as NS

import pytest
from flask_login import AnonymousUserMixin

from portal import access
from portal.access import ACTIONS
from portal.documents import services
from portal.models import ROLES, Document, User
from portal.search.service import batched_index_updates

# The route matrix takes who may do what from the table, so the two cannot drift apart.
STAFF = tuple(r for r in ROLES if r in ACTIONS["packs.read"])
ADMIN_ONLY = tuple(r for r in ROLES if r in ACTIONS["documents.write"])

# (method, path, data, roles allowed, status when allowed)
ROUTES = [
    ("GET", "/packs/", None, STAFF, 200),
    ("GET", "/packs/ops", None, STAFF, 200),
    ("GET", "/packs/ops/search?q=backlog", None, STAFF, 200),
    ("GET", "/packs/ops/documents/runbook", None, STAFF, 200),
    ("GET", "/packs/ops/documents/runbook?view=lines", None, STAFF, 200),
    ("GET", "/packs/ops/documents/runbook/edit", None, ADMIN_ONLY, 200),
    ("POST", "/packs/", {"slug": "new-pack", "title": "New", "kind": "generic"}, ADMIN_ONLY, 303),
    (
        "POST",
        "/packs/ops/documents/runbook/edit",
        {"text": "# Changed\n\ntext\n", "expected_version": "1"},
        ADMIN_ONLY,
        303,
    ),
    ("POST", "/packs/ops/documents/runbook/delete", {"expected_version": "1"}, ADMIN_ONLY, 303),
    (
        "POST",
        "/packs/ops/documents/runbook/access",
        {"expected_version": "1", "visibility": "shared"},
        ADMIN_ONLY,
        303,
    ),
    # The Library is every reader's (SPEC 2); the staff-only runbook opens there for staff alone.
    ("GET", "/library/", None, tuple(r for r in ROLES if r in ACTIONS["library.read"]), 200),
    ("GET", "/library/?q=backlog", None, tuple(r for r in ROLES if r in ACTIONS["library.read"]), 200),
    ("GET", "/library/ops/runbook", None, STAFF, 200),
    ("GET", "/library/ops/for-auditors", None, ("PlatformAdmin", "Auditor"), 200),
    ("GET", "/library/ops/for-members", None, ADMIN_ONLY, 200),  # visibility staff: no member reads it
    ("POST", "/packs/ops/documents", "upload", ADMIN_ONLY, 200),
    ("POST", "/packs/ops/documents/runbook/new-version", "new-version", ADMIN_ONLY, 303),
    ("GET", "/packs/ops/documents/runbook?version=1", None, STAFF, 200),
    ("GET", "/packs/ops/documents/runbook?version=2", None, (), 404),
    ("GET", "/packs/ops/documents/for-auditors?version=1", None, ("PlatformAdmin", "Auditor"), 200),
    ("GET", "/packs/ops/edit", None, ADMIN_ONLY, 200),
    ("POST", "/packs/ops/edit", {"title": "Ops", "description": "Changed"}, ADMIN_ONLY, 303),
    ("GET", "/packs/ops/delete", None, ADMIN_ONLY, 200),
    ("POST", "/packs/ops/delete", {"generation": "4"}, ADMIN_ONLY, 303),  # the four uploads of ``seeded``
    # reader roles narrow reading to exact role matches; PlatformAdmin bypasses them (SPEC 2)
    ("GET", "/packs/ops/documents/for-auditors", None, ("PlatformAdmin", "Auditor"), 200),
    ("GET", "/packs/ops/documents/for-auditors?view=lines", None, ("PlatformAdmin", "Auditor"), 200),
    ("GET", "/packs/ops/documents/for-builders", None, ("PlatformAdmin", "AgentBuilder"), 200),
    ("GET", "/packs/ops/documents/for-members", None, ADMIN_ONLY, 200),
    (
        "POST",
        "/packs/ops/documents/for-members/edit",
        {"text": "# Changed\n\ntext\n", "expected_version": "1"},
        ADMIN_ONLY,
        303,
    ),
    # Help is for everyone signed in, whatever their roles (portal/help/views.py).
    ("GET", "/help/", None, ROLES, 200),
    ("GET", "/help/grounding", None, ROLES, 200),
    ("GET", "/help/classification", None, ROLES, 200),
    ("GET", "/help/no-evidence", None, ROLES, 200),
    ("GET", "/help/rating", None, ROLES, 200),
    ("GET", "/help/missing", None, (), 404),
    ("GET", "/packs/missing", None, (), 404),
    ("GET", "/packs/ops/documents/missing", None, (), 404),
]


RESTRICTED = {"for-auditors": "Auditor", "for-builders": "AgentBuilder", "for-members": "Member"}


@pytest.fixture
def seeded(app, pack, users):
    with batched_index_updates():  # one index write for the four documents
        services.upload_file(pack, "runbook.md", b"# Runbook\n\nClear the IDoc backlog first.\n", None)
        for doc_id, role in RESTRICTED.items():
            services.upload_file(pack, f"{doc_id}.md", f"# Only {role}\n\nThe IDoc backlog, {doc_id}.\n".encode(), None)
    for doc_id, role in RESTRICTED.items():
        Document.update(reader_role_names=[role]).where(Document.doc_id == doc_id).execute()


@pytest.mark.parametrize("role", ["PlatformAdmin", "AgentBuilder", "Auditor", "Member", None])
@pytest.mark.parametrize("method, path, data, allowed, ok_status", ROUTES, ids=[f"{r[0]} {r[1]}" for r in ROUTES])
def test_access_matrix(seeded, client_as, role, method, path, data, allowed, ok_status):
    client = client_as(role)
    if data == "upload":
        data = {"files": (io.BytesIO(b"# Added\n\nA new note.\n"), "added.md", "text/markdown")}
    elif data == "new-version":
        data = {"file": (io.BytesIO(b"# Runbook\n\nA second text.\n"), "runbook.md"), "expected_version": "1"}
    response = client.open(path, method=method, data=data)
    if role is None:
        assert response.status_code == 302 and "/login" in response.headers["Location"]
    elif role in allowed:
        assert response.status_code == ok_status, response.get_data(as_text=True)[:500]
    else:
        assert response.status_code == 404


def test_not_found_looks_the_same_for_hidden_and_missing(seeded, client_as):
    member = client_as("Member")
    hidden = member.get("/packs/ops").get_data(as_text=True)
    missing = member.get("/packs/missing").get_data(as_text=True)
    assert hidden == missing


def test_navigation_by_role(seeded, client_as):
    assert 'href="/packs/"' in client_as("Auditor").get("/packs/ops").get_data(as_text=True)
    member_home = client_as("Member").get("/", follow_redirects=True).get_data(as_text=True)
    assert 'href="/packs/"' not in member_home


def test_read_only_staff_see_no_write_controls(seeded, client_as):
    for role in ("AgentBuilder", "Auditor"):
        page = client_as(role).get("/packs/ops/documents/runbook").get_data(as_text=True)
        assert "Delete" not in page and "Edit text" not in page
        assert "Add documents" not in client_as(role).get("/packs/ops").get_data(as_text=True)
    assert "Edit text" in client_as("PlatformAdmin").get("/packs/ops/documents/runbook").get_data(as_text=True)


@pytest.mark.parametrize(
    ("role", "readable"),
    [
        ("PlatformAdmin", {"runbook", "for-auditors", "for-builders", "for-members"}),
        ("Auditor", {"runbook", "for-auditors"}),
        ("AgentBuilder", {"runbook", "for-builders"}),
    ],
)
def test_reader_roles_hide_documents_from_other_staff_in_the_list_and_in_search(seeded, client_as, role, readable):
    from bs4 import BeautifulSoup

    client = client_as(role)
    listed = BeautifulSoup(client.get("/packs/ops").get_data(as_text=True), "html.parser")
    assert {code.text for code in listed.select("#document-list code")} == readable
    found = client.get("/packs/ops/search?q=IDoc+backlog").get_data(as_text=True)
    shown = {doc_id for doc_id in ("runbook", *RESTRICTED) if f"/documents/{doc_id}" in found}
    assert shown == readable


def test_who_may_read_says_that_agents_quote_a_document_whoever_may_read_it(seeded, client_as):
    """A member opened a staff-only document from an answer while the page said only "Staff only" (found by a
    browser walkthrough; agents read by grant, decisions.md): the document page and the upload form say so."""
    from bs4 import BeautifulSoup

    admin = client_as("PlatformAdmin")
    page = BeautifulSoup(admin.get("/packs/ops/documents/runbook").get_data(as_text=True), "html.parser")
    assert (
        page.select_one("#reader-access-now")
        .get_text()
        .endswith("Agents granted this pack can still quote it, and the people they answer can open what they cite.")
    )
    assert "Agents granted the pack search all its documents" not in page.get_text()  # said once on the page
    # a member cannot open a cited document whose reader roles leave out Member (found by review)
    page = BeautifulSoup(admin.get("/packs/ops/documents/for-auditors").get_data(as_text=True), "html.parser")
    assert (
        page.select_one("#reader-access-now")
        .get_text()
        .endswith(
            "Agents granted this pack can still quote it; the members they answer cannot open it, since Member is not "
            "among its reader roles."
        )
    )
    upload_form = BeautifulSoup(admin.get("/packs/ops").get_data(as_text=True), "html.parser").select_one(
        ".reader-access"
    )
    assert "Agents granted the pack search all its documents" in upload_form.get_text()


def test_a_staff_member_with_several_roles_reads_by_any_of_them(seeded, app):
    from helpers import signed_in_client
    from portal.auth.services import create_user

    both = signed_in_client(app, create_user("both@example.test", "correct horse battery", {"AgentBuilder", "Auditor"}))
    assert both.get("/packs/ops/documents/for-auditors").status_code == 200
    assert both.get("/packs/ops/documents/for-builders").status_code == 200
    assert both.get("/packs/ops/documents/for-members").status_code == 404


# --- The table itself, for every set of roles -----------------------------------------

ROLE_SETS = [frozenset(c) for n in range(len(ROLES) + 1) for c in itertools.combinations(ROLES, n)]


def _user(roles, company=None, user_id=7) -> User:
    user = User(id=user_id, email="x@example.test", company=company)
    user.roles = set(roles)
    return user


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_can_admits_exactly_the_roles_in_the_table(action):
    assert not access.can(AnonymousUserMixin(), action)
    for roles in ROLE_SETS:
        for company in (None, 1):
            expected = bool(roles & ACTIONS[action]) and (company is not None or action not in access.COMPANY_ACTIONS)
            assert access.can(_user(roles, company), action) is expected, (roles, company)


def test_an_unknown_action_is_an_error_not_a_no():
    with pytest.raises(KeyError):
        access.can(_user({"PlatformAdmin"}), "packs.delete_everything")


# Today's answers were captured from access.py before it became a table
# (tests/resources/access_matrix.json); the table must give every one of them unchanged.
# Each predicate of that access.py, by the name it had, answered through today's API:
PREDICATES = {
    "can_read_packs": "packs.read",
    "can_manage_documents": "documents.write",
    "can_view_agents": "agents.read",
    "can_manage_agents": "agents.configure",
    "can_try_agents": "agents.try",
    "can_see_every_run": "runs.see_all",
    "can_use_chat": "chat.use",
    "can_review_feedback": "feedback.review",
}


def _answers(user) -> dict[str, bool]:
    row = {name: access.can(user, action) for name, action in PREDICATES.items()}
    for owner in (None, 7, 8):
        row[f"can_see_run owner={owner}"] = access.can_see_run(user, NS(user_id=owner))
        row[f"can_remove_case by={owner}"] = access.can_remove_case(user, NS(created_by_id=owner))
    if not user.is_authenticated:
        return row
    for roles in ROLE_SETS:
        document = Document(reader_role_names=[r for r in ROLES if r in roles])
        row[f"staff_role_admitted reader_roles={'+'.join(r for r in ROLES if r in roles)}"] = (
            access.staff_role_admitted(user, document)
        )
    for roles in ((), ("Member",), ("Auditor",), ("Auditor", "Member")):
        for visibility, redacted, pack_company in itertools.product(
            ("staff", "shared", "company"), (False, True), (None, 1, 2)
        ):
            document = NS(
                reader_roles=frozenset(roles),
                visibility=visibility,
                redacted=redacted,
                pack=NS(company_id=pack_company),
                current_version=2,
            )
            current = NS(version=2, original_path="original.docx")
            row[
                f"member_may_download {visibility} redacted={redacted} pack_company={pack_company} "
                f"reader_roles={'+'.join(roles)}"
            ] = access.member_may_download(user, document, current)
            # Only the current revision's original, and only one that was kept: never an older one's.
            older = NS(version=1, original_path="original.docx")
            assert not access.member_may_download(user, document, older)
            assert not access.member_may_download(user, document, NS(version=2, original_path=None))
    return row


def test_the_table_answers_exactly_as_the_access_rules_did_before_it():
    captured = json.loads((Path(__file__).parent / "resources" / "access_matrix.json").read_text())
    keys = captured["keys"]
    answers = {"anonymous": _answers(AnonymousUserMixin())}
    for roles in ROLE_SETS:
        for company in (None, 1):
            ordered = [r for r in ROLES if r in roles]
            answers[f"{'+'.join(ordered) or '-'}|company={company}"] = _answers(_user(roles, company))
    answers["(document)"] = {
        f"member_role_admitted {'+'.join(r for r in ROLES if r in roles)}": access.member_role_admitted(
            Document(reader_role_names=[r for r in ROLES if r in roles])
        )
        for roles in ROLE_SETS
    }
    now = {who: "".join("-" if k not in row else "1" if row[k] else "0" for k in keys) for who, row in answers.items()}
    assert now == captured["rows"]
