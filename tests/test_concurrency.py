"""Concurrent writers over real HTTP: a conflict is a clear refusal, never a 500.

The app is served by werkzeug on a loopback port from a thread; each person is
a requests session signed in through the login form; their requests are
released together by a barrier, several rounds, and the tests check the status
codes and what the database holds afterwards. Runs on SQLite and, with
CAIRN_TEST_DATABASE_URL, on PostgreSQL.
"""

from __future__ import annotations

import io
import sqlite3
import threading
from collections.abc import Callable
from html import unescape
from types import SimpleNamespace

import pytest
import requests
from bs4 import BeautifulSoup
from peewee import OperationalError

from helpers import (
    FIXTURES_DIR,
    PASSWORD,
    POSTGRES_URL,
    SPOOL,
    migrated_app,
    require_shared_fixtures,
    serve_in_thread,
    signed_in_client,
)
from portal import db
from portal.agents.services import create_agent
from portal.api.tokens import create_token
from portal.auth.services import UserError, create_user
from portal.chat.services import start_conversation
from portal.describing import service as describing
from portal.documents import editing, revisions
from portal.documents import services as documents
from portal.errors import VersionConflict
from portal.feedback.regressions import why_unchecked
from portal.feedback.services import rate_answer, triage_history
from portal.models import (
    REVISIONS_KEPT,
    Agent,
    AgentGrant,
    AuditLog,
    Company,
    Conversation,
    DescribeJob,
    Document,
    Feedback,
    Pack,
    RegressionCase,
    Revision,
    Run,
    RunReference,
    User,
)
from portal.packs.services import create_pack
from resources.make_fixtures import image_bytes
from tests.fake_openai import FakeOpenAI

ROUNDS = 5
RATERS = 20
CONFLICT = "This document changed while you were working"
CONCURRENT_UPLOAD = "was stored by another upload a moment ago"


@pytest.fixture
def server(app):
    yield from serve_in_thread(app)


def signed_in(server: str, email: str) -> requests.Session:
    session = requests.Session()
    response = session.post(f"{server}/login", data={"email": email, "password": PASSWORD}, allow_redirects=False)
    assert response.status_code == 302, response.text
    return session


def together(requests_to_send: list[Callable[[], requests.Response]]) -> list[requests.Response]:
    """Send each request from its own thread, all released at the same moment."""
    barrier = threading.Barrier(len(requests_to_send))
    responses: list[requests.Response | BaseException | None] = [None] * len(requests_to_send)

    def send(number: int) -> None:
        barrier.wait()
        try:
            responses[number] = requests_to_send[number]()
        except BaseException as error:  # reported below, with the others
            responses[number] = error

    threads = [threading.Thread(target=send, args=(n,)) for n in range(len(requests_to_send))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    failed = [r for r in responses if not isinstance(r, requests.Response)]
    assert not failed, failed
    return responses


def post_together(sessions: list[requests.Session], address: str, forms: list[dict]) -> list[requests.Response]:
    """Each session posts its form to ``address`` (redirects not followed), all released at the same moment."""
    return together(
        [
            lambda session=session, form=form: session.post(address, data=form, allow_redirects=False)
            for session, form in zip(sessions, forms)
        ]
    )


@pytest.fixture
def admins(app, server, users):
    second = create_user("second-admin@example.test", PASSWORD, {"PlatformAdmin"})
    return [signed_in(server, users["PlatformAdmin"].email), signed_in(server, second.email)]


def test_two_admins_saving_the_same_version_get_one_save_and_one_conflict(server, admins, pack):
    document = documents.upload_file(pack, "notes.md", b"# Notes\n\nFirst text.\n", None).document
    address = f"{server}/packs/{pack.slug}/documents/{document.doc_id}/edit"
    for round_number in range(ROUNDS):
        version = Document.get_by_id(document.id).current_version
        texts = [f"# Notes\n\nRound {round_number}, saved by admin {n}.\n" for n in range(2)]
        responses = post_together(admins, address, [{"text": text, "expected_version": str(version)} for text in texts])

        assert sorted(r.status_code for r in responses) == [303, 409], [r.text[:300] for r in responses]
        loser = next(r for r in responses if r.status_code == 409)
        assert CONFLICT in loser.text
        winner = texts[[r.status_code for r in responses].index(303)]
        fresh = Document.get_by_id(document.id)
        assert fresh.current_version == version + 1
        assert fresh.current_revision().text == winner


def test_two_admins_retitling_one_document_at_once_leave_an_audit_trail_that_adds_up(server, admins, pack):
    """A new title alone makes no revision, so both saves at the same version are kept (the later one's title
    stays); each audited its change from the title its request had read before its transaction, so both said
    "from" the same old title. Now every entry starts where the one before it ended."""
    text = "# Notes\n\nFirst text.\n"
    document = documents.upload_file(pack, "notes.md", text.encode(), None).document
    address = f"{server}/packs/{pack.slug}/documents/{document.doc_id}/edit"
    for round_number in range(RACE_ROUNDS):
        titles = [f"Notes {round_number} by admin {n}" for n in range(2)]
        forms = [{"title": title, "text": text, "expected_version": "1"} for title in titles]
        responses = post_together(admins, address, forms)

        assert [r.status_code for r in responses] == [303, 303], [r.text[:300] for r in responses]
        entries = AuditLog.select().where(AuditLog.action == "document.retitle").order_by(AuditLog.id)
        trail = [(entry.detail["from"], entry.detail["to"]) for entry in entries]
        assert all(before[1] == after[0] for before, after in zip(trail, trail[1:])), trail
        assert trail[-1][1] == Document.get_by_id(document.id).title


def test_two_admins_retitling_from_the_same_page_get_one_save_and_one_conflict_that_keeps_the_title(
    server, admins, pack
):
    """The edit page says which title it showed (``title_based_on``): a title keeps the version, so the version
    check let the second of two retitles overwrite the first silently (found by a race probe)."""
    text = "# Notes\n\nFirst text.\n"
    document = documents.upload_file(pack, "notes.md", text.encode(), None).document
    address = f"{server}/packs/{pack.slug}/documents/{document.doc_id}/edit"
    for round_number in range(RACE_ROUNDS):
        shown = Document.get_by_id(document.id).title
        titles = [f"Notes {round_number} by admin {n}" for n in range(2)]
        forms = [{"title": title, "title_based_on": shown, "text": text, "expected_version": "1"} for title in titles]
        responses = post_together(admins, address, forms)

        assert sorted(r.status_code for r in responses) == [303, 409], [r.text[:300] for r in responses]
        loser = responses[[r.status_code for r in responses].index(409)]
        winner = titles[[r.status_code for r in responses].index(303)]
        assert Document.get_by_id(document.id).title == winner
        page = BeautifulSoup(loser.text, "html.parser")
        assert f"Someone gave this document the title “{winner}”" in page.get_text()
        assert page.select_one("input[name=title]")["value"] != winner  # the loser's title is kept to save again
        assert page.select_one("input[name=title_based_on]")["value"] == winner


def test_an_edit_and_a_delete_of_the_same_version_leave_one_outcome_whole(server, admins, pack):
    """Either the document is deleted with nothing of it left, or it is live at the edit's version."""
    for round_number in range(ROUNDS):
        document = documents.upload_file(pack, f"notes-{round_number}.md", b"# Notes\n\nFirst text.\n", None).document
        address = f"{server}/packs/{pack.slug}/documents/{document.doc_id}"
        edit, delete = together(
            [
                lambda address=address: admins[0].post(
                    f"{address}/edit",
                    data={"text": "# Notes\n\nEdited.\n", "expected_version": "1"},
                    allow_redirects=False,
                ),
                lambda address=address: admins[1].post(
                    f"{address}/delete", data={"expected_version": "1"}, allow_redirects=False
                ),
            ]
        )
        fresh = Document.get_by_id(document.id)
        kept = Revision.select().where(Revision.document == document.id).count()
        deleted = delete.headers.get("Location", "").endswith(f"/packs/{pack.slug}")
        edited = edit.status_code == 303
        assert (edited, deleted) in ((True, False), (False, True)), (edit.status_code, delete.headers)
        if deleted:
            assert edit.status_code in (404, 409) and fresh.is_deleted and kept == 0
        else:
            assert not fresh.is_deleted and (fresh.current_version, kept) == (2, 2)


def test_two_admins_deleting_one_document_get_one_deletion_and_one_plain_word_that_it_is_gone(server, admins, pack):
    """The loser asked to delete: it lands on the pack, told someone else deleted the document first. Before, it got
    the document's 404 page saying "you edited version 1. Nothing was saved", or a bare 404 (found by a race probe).
    """
    for round_number in range(RACE_ROUNDS):
        document = documents.upload_file(pack, f"gone-{round_number}.md", b"# Gone\n\nSoon.\n", None).document
        address = f"{server}/packs/{pack.slug}/documents/{document.doc_id}/delete"
        responses = post_together(admins, address, [{"expected_version": "1"}] * 2)
        assert [r.status_code for r in responses] == [303, 303], [r.text[:300] for r in responses]
        assert all(r.headers["Location"].endswith(f"/packs/{pack.slug}") for r in responses)
        pages = [admin.get(f"{server}/packs/{pack.slug}").text for admin in admins]
        assert sum("Deleted Gone." in page for page in pages) == 1
        assert sum("Someone else deleted this document first" in page for page in pages) == 1
        assert Document.get_by_id(document.id).is_deleted
    # asked again later (a second tab, the back button): the same word, never a 404
    again = admins[0].post(address, data={"expected_version": "1"})
    assert again.status_code == 200 and "Someone else deleted this document first" in again.text


@pytest.mark.parametrize("change", ["edit", "upload"])
def test_a_document_changed_while_its_pack_is_deleted_is_one_outcome_never_a_500(server, admins, change):
    """Either the change comes first (the deletion is refused: the pack changed since its confirmation) or the
    deletion does (the change is a 404 or a conflict), never a 500, and nothing is left of a deleted pack."""
    for round_number in range(RACE_ROUNDS):
        pack = create_pack(f"ops-{round_number}", "Ops", "generic")
        documents.upload_file(pack, "notes.md", b"# Notes\n\nFirst text.\n", None)
        generation = Pack.get_by_id(pack.id).index_generation
        address = f"{server}/packs/{pack.slug}/documents"
        if change == "edit":
            send = lambda address=address: admins[0].post(  # noqa: E731
                f"{address}/notes/edit",
                data={"text": "# Notes\n\nEdited.\n", "expected_version": "1"},
                allow_redirects=False,
            )
        else:
            send = lambda address=address: admins[0].post(  # noqa: E731
                address, files={"files": ("notes.md", b"# Notes\n\nUploaded.\n", "text/markdown")}
            )
        changed, deleted = together(
            [
                send,
                lambda pack=pack, generation=generation: admins[1].post(
                    f"{server}/packs/{pack.slug}/delete", data={"generation": str(generation)}, allow_redirects=False
                ),
            ]
        )

        statuses = (changed.status_code, deleted.status_code)
        assert 500 not in statuses, [r.text[:300] for r in (changed, deleted)]
        if Pack.get_by_id(pack.id).is_deleted:
            assert deleted.status_code == 303 and changed.status_code in (404, 409, 422), statuses
            assert not Document.select().where((Document.pack == pack) & Document.deleted_at.is_null()).exists()
            if changed.status_code == 404:  # deleted before the change looked, or while it was being saved
                assert "Not found" in changed.text or "This pack was deleted by someone else" in changed.text
        else:
            assert deleted.status_code == 409 and changed.status_code in (200, 303), statuses


def test_a_change_saved_into_a_pack_deleted_meanwhile_says_so(app, pack):
    """An upload that found its pack live and was saving when the pack's deletion committed was answered "Not
    found: there is nothing here" (attack probe); it is told the pack was deleted meanwhile and nothing stored."""
    from portal.errors import NotFound, PackDeleted
    from portal.models import PendingIndexUpdate
    from portal.packs.deletion import delete_pack
    from portal.search.service import record_index_change

    delete_pack(None, pack, Pack.get_by_id(pack.id).index_generation)
    with pytest.raises(PackDeleted) as deleted:
        record_index_change(pack.id, "notes")
    assert isinstance(deleted.value, NotFound) and "nothing of the change was stored" in deleted.value.message
    assert not PendingIndexUpdate.select().where(PendingIndexUpdate.pack == pack.id).exists()


def test_a_deleted_document_gives_no_version_to_claim(app, pack):
    """A deletion keeps the version number: the claim itself needs the document live (a PostgreSQL
    writer whose own check ran before the delete committed reaches it)."""
    document = documents.upload_file(pack, "notes.md", b"# Notes\n\nFirst text.\n", None).document
    editing.delete_document(document, 1)
    with pytest.raises(VersionConflict) as conflict:
        revisions.claim_next_version(document, 1)
    assert conflict.value.current == 0 and "no longer exists" in str(conflict.value)
    assert Document.get_by_id(document.id).current_version == 1


def test_a_document_deleted_just_after_its_reader_access_changed_answers_the_change_never_a_500(server, users, pack):
    """An API write of the same text with new reader access is that change alone; its answer read the document
    and its current revision again after the commit (and after the index update), and a deletion of the new
    version committed in between: no current revision, a 500 (SQLite and PostgreSQL). The answer is now the
    change as its transaction left it."""
    token = create_token(users["PlatformAdmin"], "race")[1]
    writer, deleter = requests.Session(), requests.Session()
    for api in (writer, deleter):
        api.headers["Authorization"] = f"Bearer {token}"
    text = "# Notes\n\nFirst text.\n"

    def change(address: str, answered: threading.Event) -> requests.Response:
        try:
            return writer.put(address, json={"expected_version": 1, "text": text, "visibility": "shared"})
        finally:
            answered.set()

    def delete_version_2(address: str, change_answered: threading.Event) -> requests.Response:
        """Delete version 2 as soon as it is there: asked again after each refusal (version 1 still, or version 2
        not yet committed when the deletion read it) until the change has answered, so the deletion lands just
        after the change's commit, rather than nearly always coming first and being refused."""
        while True:
            last_time = change_answered.is_set()
            response = deleter.delete(address, json={"expected_version": 2})
            if last_time or response.status_code != 409:
                return response

    for round_number in range(RACE_ROUNDS):
        doc_id = f"notes-{round_number}"
        documents.upload_file(pack, f"{doc_id}.md", text.encode(), None)
        address = f"{server}/api/v1/packs/{pack.slug}/documents/{doc_id}"
        answered = threading.Event()
        changed, deleted = together(
            [
                lambda address=address, answered=answered: change(address, answered),
                lambda address=address, answered=answered: delete_version_2(address, answered),
            ]
        )

        assert (changed.status_code, deleted.status_code) == (200, 200), changed.text[:300]
        assert (changed.json()["version"], changed.json()["visibility"]) == (2, "shared")
        assert Document.get(Document.doc_id == doc_id).is_deleted


def test_two_uploads_of_the_same_new_file_make_one_document_never_a_500(server, admins, pack):
    """Overlapping, the later one is refused; one after the other, the later one is version 2."""
    address = f"{server}/packs/{pack.slug}/documents"
    for round_number in range(ROUNDS):
        name = f"runbook-{round_number}.md"
        contents = [f"# Runbook {round_number}\n\nWritten by admin {n}.\n".encode() for n in range(2)]
        responses = together(
            [
                lambda session=session, content=content, name=name: session.post(
                    address, files={"files": (name, content, "text/markdown")}, allow_redirects=False
                )
                for session, content in zip(admins, contents)
            ]
        )

        statuses = sorted(r.status_code for r in responses)
        assert statuses in ([200, 200], [200, 422]), [r.text[:300] for r in responses]
        stored = list(Document.select().where((Document.pack == pack) & (Document.doc_id == f"runbook-{round_number}")))
        assert len(stored) == 1
        revisions = Revision.select().where(Revision.document == stored[0]).count()
        if statuses == [200, 422]:
            assert CONCURRENT_UPLOAD in next(r for r in responses if r.status_code == 422).text
            assert (stored[0].current_version, revisions) == (1, 1)
        else:
            assert (stored[0].current_version, revisions) == (2, 2)


@pytest.mark.parametrize("name_exists", [False, True])
def test_an_upload_overtaken_between_its_checks_and_its_transaction_is_refused(app, pack, monkeypatch, name_exists):
    """The other upload commits exactly while this one splits its passages (after reading the document)."""
    if name_exists:
        documents.upload_file(pack, "runbook.md", b"# Runbook\n\nFirst version.\n", None)
    split_passages = documents.split_passages

    def overtaken(text, kind):
        monkeypatch.setattr(documents, "split_passages", split_passages)
        assert documents.upload_file(pack, "runbook.md", b"# Runbook\n\nThe other upload.\n", None).accepted
        return split_passages(text, kind)

    monkeypatch.setattr(documents, "split_passages", overtaken)
    outcome = documents.upload_file(pack, "runbook.md", b"# Runbook\n\nThis upload.\n", None)

    assert outcome.refused.reason == "conflict" and CONCURRENT_UPLOAD in outcome.refused.message
    stored = Document.get(Document.doc_id == "runbook")
    assert stored.current_version == (2 if name_exists else 1)
    assert "The other upload." in stored.current_revision().text


def test_twenty_members_rating_their_answers_at_once_all_succeed(app, server, pack):
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    members = [create_user(f"member{n}@example.test", PASSWORD, {"Member"}, "Acme Test Co") for n in range(RATERS)]
    answers = [start_conversation(member, agent, "How do I delete old spool requests?")[1] for member in members]
    sessions = [signed_in(server, member.email) for member in members]

    for round_number in range(3):
        forms = [
            {"rating": "helpful"}
            if (n + round_number) % 2
            else {"rating": "not_helpful", "reasons": ["incorrect"], "note": f"round {round_number}"}
            for n in range(RATERS)
        ]
        responses = together(
            [
                lambda session=session, run=run, form=form: session.post(
                    f"{server}/chat/answers/{run.id}/feedback", data=form, allow_redirects=False
                )
                for session, run, form in zip(sessions, answers, forms)
            ]
        )

        assert [r.status_code for r in responses] == [303] * RATERS, [
            r.text[:300] for r in responses if r.status_code != 303
        ]
        saved = {f.run_id: f.rating for f in Feedback.select()}
        assert saved == {run.id: form["rating"] for run, form in zip(answers, forms)}


TRIAGE_ROUNDS = 30
REOPENED = "The rating changed after review, so it is new again."


def test_a_rating_changed_while_a_reviewer_triages_it_never_undoes_the_triage(server, admins, pack, users):
    """On PostgreSQL the rating read the row, the triage committed, and the rating's save wrote back the
    status and reviewer note it had read: the triage vanished from the row though its history kept it
    (about one round in three). Each round both are sent at once; afterwards the row says what the
    newest entry of the history as listed says, and keeps the newest reviewer note."""
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    member = users["Member"]
    run = start_conversation(member, agent, "How do I delete old spool requests?")[1]
    feedback = rate_answer(member, run, "not_helpful", ["incorrect"])
    rater = signed_in(server, member.email)

    for round_number in range(TRIAGE_ROUNDS):
        rating = {"rating": "not_helpful", "reasons": ["incorrect"], "note": f"round {round_number}"}
        review = {"status": ("resolved", "in_review")[round_number % 2], "reviewer_note": f"r{round_number}"}
        responses = together(
            [
                lambda rating=rating: rater.post(
                    f"{server}/chat/answers/{run.id}/feedback", data=rating, allow_redirects=False
                ),
                lambda review=review: admins[0].post(
                    f"{server}/feedback/{feedback.id}/triage", data=review, allow_redirects=False
                ),
            ]
        )

        assert [r.status_code for r in responses] == [303, 303], [r.text[:300] for r in responses]
        stored = Feedback.get_by_id(feedback.id)
        history = triage_history(stored)  # newest first, as the page lists it
        newest_review = next(entry for entry in history if entry.note != REOPENED)
        assert (stored.status, stored.reviewer_note, stored.note) == (
            history[0].status,
            newest_review.note,
            f"round {round_number}",
        ), round_number


# --- The same thing made twice at once (a double click, two people) -----------------------------
# Without a lock each request checked that nothing stood in its way, then wrote: the later insert
# answered a 500 (a duplicate key), or both wrote and left what the rules forbid. A window of
# microseconds: each test releases several rounds together.

RACE_ROUNDS = 10


def test_two_admins_creating_the_same_pack_get_one_pack_and_one_refusal(server, admins):
    for round_number in range(RACE_ROUNDS):
        slug = f"ops-{round_number}"
        responses = together(
            [
                lambda session=session, slug=slug: session.post(
                    f"{server}/packs/", data={"slug": slug, "title": "Ops", "kind": "generic"}, allow_redirects=False
                )
                for session in admins
            ]
        )
        assert sorted(r.status_code for r in responses) == [303, 422], [r.text[:300] for r in responses]
        assert f"A pack {slug!r} exists already." in unescape(next(r for r in responses if r.status_code == 422).text)
        assert Pack.select().where(Pack.slug == slug).count() == 1


def test_two_builders_creating_the_same_agent_get_one_agent_and_one_refusal(server, admins, pack):
    """On PostgreSQL the later insert met the unique slug: a 500 (SQLite's immediate transactions queue them)."""
    for round_number in range(RACE_ROUNDS):
        slug = f"desk-{round_number}"
        form = {"slug": slug, "name": "Desk", "mode": "open", "packs": [pack.slug]}
        responses = together(
            [
                lambda session=session, form=form: session.post(f"{server}/agents/", data=form, allow_redirects=False)
                for session in admins
            ]
        )
        assert sorted(r.status_code for r in responses) == [303, 422], [r.text[:300] for r in responses]
        assert f"An agent {slug!r} exists already." in unescape(next(r for r in responses if r.status_code == 422).text)
        assert AgentGrant.select().join(Agent).where(Agent.slug == slug).count() == 1


def test_two_set_up_commands_creating_the_same_user_get_one_user_and_one_refusal(app):
    """``cairn users create`` hashes the password between its check for the e-mail and its insert (scrypt: a
    fifth of a second), so two provisioning runs at once both passed the check and the later insert met the
    unique e-mail: an IntegrityError traceback instead of "exists already", after the later one's new company
    was added. Each pair is released together by a barrier, several rounds, on both databases."""
    for round_number in range(RACE_ROUNDS):
        email = f"new-{round_number}@example.test"
        company = f"New Co {round_number}"
        barrier = threading.Barrier(2)
        outcomes: list = [None, None]

        def create(number: int, email=email, company=company, barrier=barrier, outcomes=outcomes) -> None:
            barrier.wait()
            try:
                outcomes[number] = create_user(email, PASSWORD, {"Member"}, company)
            except Exception as error:  # noqa: BLE001 - asserted on below
                outcomes[number] = error
            finally:
                db.database().close()

        threads = [threading.Thread(target=create, args=(n,)) for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)

        created = [o for o in outcomes if isinstance(o, User)]
        refused = [o for o in outcomes if isinstance(o, UserError)]
        assert (len(created), len(refused)) == (1, 1), outcomes
        assert str(refused[0]) == f"A user {email} exists already."
        assert User.select().where(User.email == email).count() == 1
        assert Company.select().where(Company.name == company).count() == 1


AGENT_CHANGES = {
    "save": ("", {"name": "Renamed", "mode": "open", "instructions": "", "packs": []}),
    "offer": ("/offer", {"offered": "1"}),
    "delete": ("/delete", {}),
}


@pytest.mark.parametrize("change", AGENT_CHANGES)
def test_an_agent_deleted_while_another_builder_changes_it_is_a_404_never_a_500(server, admins, pack, change):
    """The second request found the agent, then its service read it again after the deletion committed:
    ``.get()`` raised a 500, and a second deletion was audited as a deletion of its own."""
    suffix, form = AGENT_CHANGES[change]
    for round_number in range(RACE_ROUNDS):
        slug = f"desk-{round_number}"
        create_agent(None, slug, "Desk", "preferred", None, "", ["ops"], offered=False)
        responses = together(
            [
                lambda slug=slug: admins[0].post(f"{server}/agents/{slug}/delete", allow_redirects=False),
                lambda slug=slug: admins[1].post(f"{server}/agents/{slug}{suffix}", data=form, allow_redirects=False),
            ]
        )

        codes = [r.status_code for r in responses]
        assert codes[1] in (303, 404) and 500 not in codes, [r.text[:300] for r in responses]
        assert codes.count(303) >= 1 and Agent.get_or_none(Agent.slug == slug) is None
        deletions = [a for a in AuditLog.select().where(AuditLog.action == "agent.delete") if a.detail["slug"] == slug]
        assert len(deletions) == 1, round_number


def test_a_row_that_vanished_between_two_reads_of_one_request_answers_404_never_500(app, users, caplog):
    """Every read again after a commit can meet another person's deletion (``set_offered`` did); whichever
    one is left answers what the request would have got a moment later, and says so in the log."""
    agent = create_agent(None, "desk", "Desk", "preferred", None, "", [], offered=False)

    def read_twice():
        Agent.get_by_id(agent.id)
        Agent.delete().where(Agent.id == agent.id).execute()  # another person's deletion commits meanwhile
        return Agent.get_by_id(agent.id).name

    app.add_url_rule("/read-twice", view_func=read_twice)
    response = app.test_client().get("/read-twice")

    assert response.status_code == 404 and "There is nothing here" in response.text
    assert "a row vanished meanwhile" in caplog.text


def test_two_builders_granting_the_same_pack_at_once_both_save(server, admins, pack, other_pack):
    """Each save replaces the grants as its form lists them; on PostgreSQL both inserted the new grant and
    the later one met the unique (agent, pack): a 500. Now the later save starts from the earlier one's grants."""
    for round_number in range(RACE_ROUNDS):
        agent = create_agent(None, f"desk-{round_number}", "Desk", "open", None, "", [pack.slug])
        forms = [{"name": "Desk", "mode": "open", "packs": [pack.slug, other_pack.slug]}] * 2
        responses = together(
            [
                lambda session=session, form=form, agent=agent: session.post(
                    f"{server}/agents/{agent.slug}", data=form, allow_redirects=False
                )
                for session, form in zip(admins, forms)
            ]
        )
        assert [r.status_code for r in responses] == [303, 303], [r.text[:300] for r in responses]
        granted = sorted(g.pack.slug for g in AgentGrant.select().where(AgentGrant.agent == agent))
        assert granted == sorted([pack.slug, other_pack.slug])
        updates = AuditLog.select().where((AuditLog.target_id == agent.id) & (AuditLog.action == "agent.update"))
        assert [entry.detail["granted"] for entry in updates] == [[other_pack.slug]]  # the later save changed nothing


def test_two_admins_retitling_one_pack_at_once_leave_an_audit_trail_that_adds_up(server, admins, pack):
    """Each save audited the change from the title its request had read before its transaction: two saves at
    once both said "from" the same old title (the later one's "from" was never the title it replaced). Now each
    save reads the pack locked in its transaction: every entry starts where the one before it ended."""
    for round_number in range(RACE_ROUNDS):
        titles = [f"Ops {round_number} by admin {n}" for n in range(2)]
        responses = together(
            [
                lambda session=session, title=title: session.post(
                    f"{server}/packs/{pack.slug}/edit", data={"title": title, "description": ""}, allow_redirects=False
                )
                for session, title in zip(admins, titles)
            ]
        )

        assert [r.status_code for r in responses] == [303, 303], [r.text[:300] for r in responses]
        entries = AuditLog.select().where(AuditLog.action == "pack.update").order_by(AuditLog.id)
        trail = [entry.detail["changed"]["title"] for entry in entries]
        assert all(before[1] == after[0] for before, after in zip(trail, trail[1:])), trail
        assert trail[-1][1] == Pack.get_by_id(pack.id).title


CHANGED_MEANWHILE = "after you opened this form. Nothing was saved."


def _form_fields(session: requests.Session, address: str) -> dict:
    """The hidden fields of the edit form at ``address`` as a person's browser holds them."""
    page = BeautifulSoup(session.get(address).text, "html.parser")
    return {field["name"]: field.get("value", "") for field in page.select("form input[type=hidden]")}


def test_two_admins_saving_one_pack_form_get_one_save_and_one_refusal_that_keeps_the_text(server, admins, pack):
    """Both opened the form before either saved: the later save undid the earlier one silently (its title and
    vocabulary). Now it is refused, nothing of it is stored, and its page keeps what was typed."""
    address = f"{server}/packs/{pack.slug}/edit"
    for round_number in range(RACE_ROUNDS):
        opened = [_form_fields(session, address) for session in admins]
        forms = [
            {
                **fields,
                "title": f"Ops {round_number} by {n}",
                "description": "",
                "vocabulary": f"r{round_number} => {n}",
            }
            for n, fields in enumerate(opened)
        ]
        responses = together(
            [
                lambda session=session, form=form: session.post(address, data=form, allow_redirects=False)
                for session, form in zip(admins, forms)
            ]
        )

        assert sorted(r.status_code for r in responses) == [303, 409], [r.text[:300] for r in responses]
        winner, loser = (forms[[r.status_code for r in responses].index(code)] for code in (303, 409))
        refused = BeautifulSoup(responses[[r.status_code for r in responses].index(409)].text, "html.parser")
        assert CHANGED_MEANWHILE in refused.select_one("[role=alert]").get_text()
        assert refused.select_one("input#title")["value"] == loser["title"]
        fresh = Pack.get_by_id(pack.id)
        assert (fresh.title, fresh.vocabulary) == (winner["title"], winner["vocabulary"])
        # the refused page's form is based on the change its person has now been told of: saving it again saves
        again = {field["name"]: field.get("value", "") for field in refused.select("form input[type=hidden]")}
        session = admins[[r.status_code for r in responses].index(409)]
        assert session.post(address, data={**loser, **again}, allow_redirects=False).status_code == 303
        assert Pack.get_by_id(pack.id).title == loser["title"]


def test_two_builders_saving_one_agent_form_never_lose_a_grant_silently(server, admins, pack, other_pack):
    """One builder granted a pack while another, on a form opened before, renamed the agent: the rename revoked
    the grant without a word. Now the later save is refused and names what differs."""
    agent = create_agent(None, "desk", "Desk", "open", None, "", [])
    address = f"{server}/agents/{agent.slug}"
    for round_number in range(RACE_ROUNDS):
        opened = [_form_fields(session, address) for session in admins]
        granted = {
            **opened[0],
            "name": "Desk",
            "mode": "required",
            "packs": [pack.slug, other_pack.slug][: round_number % 2 + 1],
        }
        renamed = {**opened[1], "name": f"Desk {round_number}", "mode": "open", "packs": []}
        responses = together(
            [
                lambda form=form, session=session: session.post(address, data=form, allow_redirects=False)
                for session, form in zip(admins, (granted, renamed))
            ]
        )

        assert sorted(r.status_code for r in responses) == [303, 409], [r.text[:300] for r in responses]
        saved = (granted, renamed)[[r.status_code for r in responses].index(303)]
        fresh = Agent.get_by_id(agent.id)
        grants = sorted(g.pack.slug for g in AgentGrant.select().where(AgentGrant.agent == agent))
        assert (fresh.name, fresh.mode, grants) == (saved["name"], saved["mode"], sorted(saved["packs"]))
        assert CHANGED_MEANWHILE in responses[[r.status_code for r in responses].index(409)].text


@pytest.mark.parametrize("change", ["create", "save"])
def test_a_pack_deleted_while_a_builder_grants_it_leaves_no_grant_of_a_deleted_pack(server, admins, change):
    """The agent's save read the pack live, the pack's deletion revoked its grants and committed, then the save
    inserted its grant (PostgreSQL): the agent kept a grant of a deleted pack, searched by every question.
    Now the grant comes first (and the deletion revokes it) or the save is refused: no such pack."""
    create_agent(None, "desk", "Desk", "open", None, "", [])
    for round_number in range(RACE_ROUNDS):
        pack = create_pack(f"ops-{round_number}", "Ops", "generic")
        form = {"name": "Desk", "mode": "open", "packs": [pack.slug]}
        if change == "create":
            form["slug"] = f"desk-{round_number}"
        address = f"{server}/agents/" if change == "create" else f"{server}/agents/desk"
        saved, deleted = together(
            [
                lambda form=form, address=address: admins[0].post(address, data=form, allow_redirects=False),
                lambda pack=pack: admins[1].post(
                    f"{server}/packs/{pack.slug}/delete", data={"generation": "0"}, allow_redirects=False
                ),
            ]
        )

        assert (saved.status_code in (303, 422), deleted.status_code) == (True, 303), saved.text[:300]
        if saved.status_code == 422:
            assert f"No such pack: {pack.slug}." in saved.text
        granted = AgentGrant.select().join(Pack).where(Pack.deleted_at.is_null(False))
        assert [(g.agent.slug, g.pack.slug) for g in granted] == [], round_number


@pytest.fixture
def rated_answers(app, pack, users):
    """Not helpful ratings of answers, one per round, each waiting for its regression case."""
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    member = users["Member"]
    return [
        rate_answer(
            member,
            start_conversation(member, agent, "How do I delete old spool requests?")[1],
            "not_helpful",
            ["incorrect"],
        )
        for _ in range(RACE_ROUNDS)
    ]


@pytest.mark.parametrize("second_kind", ["expected_source", "no_evidence"])
def test_two_reviewers_recording_cases_for_one_answer_at_once_keep_the_case_rules(
    server, admins, rated_answers, second_kind
):
    """The same case twice records it once; an expected source and "no evidence" together are refused
    (one of them names the other). Both used to be stored."""
    forms = [
        {"kind": "expected_source", "pack": "ops", "doc_id": "spool-overflow"},
        {"kind": "expected_source", "pack": "ops", "doc_id": "spool-overflow"}
        if second_kind == "expected_source"
        else {"kind": "no_evidence"},
    ]
    for feedback in rated_answers:
        responses = together(
            [
                lambda session=session, form=form, feedback=feedback: session.post(
                    f"{server}/feedback/{feedback.id}/cases", data=form, allow_redirects=False
                )
                for session, form in zip(admins, forms)
            ]
        )
        cases = list(RegressionCase.select().where(RegressionCase.feedback == feedback))
        assert len(cases) == 1, [(c.kind, c.document_id) for c in cases]
        statuses = sorted(r.status_code for r in responses)
        if second_kind == "expected_source":
            assert statuses == [303, 303]
        else:
            assert statuses == [303, 422]
            assert "remove it first" in next(r for r in responses if r.status_code == 422).text


@pytest.mark.parametrize("kind", ["expected_source", "no_evidence"])
def test_a_case_recorded_while_its_agent_is_deleted_is_kept_or_refused_never_a_500(server, admins, pack, users, kind):
    """The case's agent was read before the case's transaction: a deletion committed in between made the
    insert's reference to it fail (a 500 on SQLite and PostgreSQL). Now the case is recorded before the
    deletion (it keeps the agent's slug, as runs do) or refused by name after it."""
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    member = users["Member"]
    form = {"kind": kind, "pack": "ops", "doc_id": "spool-overflow"}
    for round_number in range(RACE_ROUNDS):
        slug = f"desk-{round_number}"
        agent = create_agent(
            None, slug, "Desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
        )
        run = start_conversation(member, agent, "How do I delete old spool requests?")[1]
        feedback = rate_answer(member, run, "not_helpful", ["incorrect"])
        case, deletion = together(
            [
                lambda feedback=feedback: admins[0].post(
                    f"{server}/feedback/{feedback.id}/cases", data=form, allow_redirects=False
                ),
                lambda slug=slug: admins[1].post(f"{server}/agents/{slug}/delete", allow_redirects=False),
            ]
        )

        assert (case.status_code in (303, 422), deletion.status_code) == (True, 303), case.text[:300]
        cases = list(RegressionCase.select().where(RegressionCase.feedback == feedback))
        if case.status_code == 422:
            assert "was deleted, so there is no agent" in unescape(case.text) and cases == []
        else:
            assert [(c.agent_id, c.agent_slug) for c in cases] == [(None, slug)], round_number
        assert Agent.get_or_none(Agent.slug == slug) is None


def test_a_case_recorded_while_its_pack_is_deleted_is_kept_as_not_checkable_or_refused_never_a_500(
    server, admins, users
):
    """A reviewer records a document of a pack another administrator deletes at that moment: the case is
    recorded first (then it says it cannot be checked: the pack was deleted) or refused by name after the
    deletion; never a 500, and never a case recorded after its pack was gone."""
    member = users["Member"]
    for round_number in range(RACE_ROUNDS):
        pack = create_pack(f"ops-{round_number}", "Ops", "generic")
        documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
        agent = create_agent(
            None, f"desk-{round_number}", "Desk", "preferred", "Acme Test Co", "", [pack.slug], add_company=True
        )
        feedback = rate_answer(
            member,
            start_conversation(member, agent, "How do I delete old spool requests?")[1],
            "not_helpful",
            ["other"],
        )
        form = {"kind": "expected_source", "pack": pack.slug, "doc_id": "spool-overflow"}
        generation = str(Pack.get_by_id(pack.id).index_generation)
        case, deletion = together(
            [
                lambda feedback=feedback, form=form: admins[0].post(
                    f"{server}/feedback/{feedback.id}/cases", data=form, allow_redirects=False
                ),
                lambda pack=pack, generation=generation: admins[1].post(
                    f"{server}/packs/{pack.slug}/delete", data={"generation": generation}, allow_redirects=False
                ),
            ]
        )

        assert (case.status_code in (303, 422), deletion.status_code) == (True, 303), case.text[:300]
        cases = list(RegressionCase.select().where(RegressionCase.feedback == feedback))
        if case.status_code == 422:
            assert cases == [], round_number
            assert "Nothing was saved." in unescape(case.text)
        else:
            deleted_at = Pack.get_by_id(pack.id).deleted_at
            assert [c.created_at <= deleted_at for c in cases] == [True], round_number
            assert why_unchecked(cases[0]) == f"the pack {pack.slug} was deleted"


def test_a_write_lock_held_past_the_busy_timeout_is_a_503_that_says_to_try_again(tmp_path, monkeypatch):
    """Another writer holding SQLite's lock longer than the busy timeout (a loaded machine: seen in the upload
    race above) made "database is locked" a 500, in HTML even for the API. It is a 503 naming the cause."""
    if POSTGRES_URL:
        pytest.skip("SQLite's write lock; PostgreSQL's row locks wait")
    monkeypatch.setitem(db.SQLITE_PRAGMAS, "busy_timeout", 50)  # milliseconds: not ten seconds of waiting
    with migrated_app(tmp_path / "data") as app:
        admin = create_user("admin@example.test", PASSWORD, {"PlatformAdmin"})
        client = signed_in_client(app, admin)
        token = create_token(admin, "busy")[1]
        other_writer = sqlite3.connect(tmp_path / "data" / "cairn.db", isolation_level=None)
        other_writer.execute("BEGIN IMMEDIATE")
        try:
            page = client.post("/packs/", data={"slug": "ops", "title": "Ops", "kind": "generic"})
            api = client.put(
                "/api/v1/packs/ops/documents/notes",
                json={"expected_version": 0, "text": "# Notes\n"},
                headers={"Authorization": f"Bearer {token}"},
            )
        finally:
            other_writer.rollback()
            other_writer.close()
        assert (page.status_code, page.headers.get("Retry-After")) == (503, "5")
        assert "busy with another change" in page.get_data(as_text=True)
        assert (api.status_code, api.json["error"]["code"]) == (503, "busy")
        assert Pack.select().count() == 0
        assert client.post("/packs/", data={"slug": "ops", "title": "Ops", "kind": "generic"}).status_code == 303


def test_a_batch_upload_that_meets_a_held_write_lock_says_so_for_each_file_it_could_not_store(tmp_path, monkeypatch):
    """Each file of a batch is its own transaction: a 503 for the batch would hide the lines of the files
    already stored. The files the lock kept out are refused one by one, "busy"; the page answers 422."""
    if POSTGRES_URL:
        pytest.skip("SQLite's write lock; PostgreSQL's row locks wait")
    monkeypatch.setitem(db.SQLITE_PRAGMAS, "busy_timeout", 50)
    with migrated_app(tmp_path / "data") as app:
        admin = create_user("admin@example.test", PASSWORD, {"PlatformAdmin"})
        client = signed_in_client(app, admin)
        assert client.post("/packs/", data={"slug": "ops", "title": "Ops", "kind": "generic"}).status_code == 303
        files = [(io.BytesIO(b"# One\n\nFirst.\n"), "one.md"), (io.BytesIO(b"# Two\n\nSecond.\n"), "two.md")]
        other_writer = sqlite3.connect(tmp_path / "data" / "cairn.db", isolation_level=None)
        other_writer.execute("BEGIN IMMEDIATE")
        try:
            page = client.post("/packs/ops/documents", data={"files": files}, content_type="multipart/form-data")
        finally:
            other_writer.rollback()
            other_writer.close()
        assert page.status_code == 422
        html = page.get_data(as_text=True)
        assert html.count('data-reason="busy"') == 2 and "one.md" in html and "two.md" in html
        assert Document.select().count() == 0


# --- A file sent while its document is deleted or its revision purged ------------------------------
# A download checks the rows first, then opens the file; a deletion or a purge committed in between has
# removed the file by then. Each test holds the download at that moment (after its checks, before the
# file is opened), makes the change from another request, then lets the download go on.


@pytest.fixture
def held_download(monkeypatch):
    """Downloads wait at ``reached`` until the test sets ``release``, then send the file."""
    from portal.documents import downloads

    send_stored = downloads._send_stored
    reached, release = threading.Event(), threading.Event()

    def held(*args, **kwargs):
        reached.set()
        assert release.wait(60), "the download was never released"
        return send_stored(*args, **kwargs)

    monkeypatch.setattr(downloads, "_send_stored", held)
    return SimpleNamespace(reached=reached, release=release)


def _download_held_while(session: requests.Session, address: str, held, change: Callable[[], None]):
    sent: dict = {}
    thread = threading.Thread(target=lambda: sent.update(response=session.get(address, allow_redirects=False)))
    thread.start()
    try:
        while not held.reached.wait(0.1):  # until the download has passed its checks (or answered without a file)
            assert thread.is_alive(), f"the download answered before its file: {sent['response'].status_code}"
        change()
    finally:
        held.release.set()
        thread.join(60)
    return sent["response"]


def test_an_original_sent_while_its_document_is_deleted_is_a_404_never_a_500(server, admins, pack, held_download):
    document = documents.upload_file(pack, "lamp.png", image_bytes(120, 80), None).document
    address = f"{server}/packs/{pack.slug}/documents/{document.doc_id}"

    def delete():
        deleted = admins[1].post(f"{address}/delete", data={"expected_version": "1"}, allow_redirects=False)
        assert deleted.headers["Location"].endswith(f"/packs/{pack.slug}")

    response = _download_held_while(admins[0], f"{address}/original", held_download, delete)

    assert response.status_code == 404, response.text[:500]
    assert "There is nothing here" in response.text


def test_an_older_original_sent_while_its_revision_is_purged_is_a_404_never_a_500(server, admins, pack, held_download):
    document = documents.upload_file(pack, "lamp.png", image_bytes(120, 80), None).document
    address = f"{server}/packs/{pack.slug}/documents/{document.doc_id}"

    def purge_version_1():
        for version in range(2, REVISIONS_KEPT + 2):  # the upload making version 11 purges version 1
            upload = documents.upload_file(pack, "lamp.png", image_bytes(120, 80 + version), None)
            assert upload.revision.version == version
        assert not Revision.select().where((Revision.document == document.id) & (Revision.version == 1)).exists()

    response = _download_held_while(admins[0], f"{address}/original?version=1", held_download, purge_version_1)

    assert response.status_code == 404, response.text[:500]


# --- A change made while a question is being answered ---------------------------------------------
# The answer is stored after the model replies (the database is not locked meanwhile), so a change
# an administrator commits in that time must not break the store, nor be undone by it.


@pytest.fixture
def slow_model(app):
    """A model that answers only when the test releases it, so a change can be made while it works."""
    with FakeOpenAI() as fake:
        app.config.update(
            CAIRN_MODEL_BASE_URL=fake.base_url, CAIRN_MODEL_API_KEY="sk-test", CAIRN_MODEL_NAME="fake-gpt"
        )
        fake.reply_after(60, "Run RSPO1041 [1].")
        yield fake
        app.config["CAIRN_MODEL_BASE_URL"] = None


@pytest.fixture
def asking(app, server, pack, users):
    """The Member's first chat question to the Acme desk, sent from a thread; the model is called before
    it returns, so the test changes things while the answer is worked out."""
    spool = documents.upload_file(pack, "spool-overflow.md", SPOOL, None).document
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    member = signed_in(server, users["Member"].email)
    sent: dict = {}

    def ask(model: FakeOpenAI):
        thread = threading.Thread(
            target=lambda: sent.update(
                response=member.post(
                    f"{server}/chat/",
                    data={"agent": agent.slug, "question": "How do I delete old spool requests?"},
                    allow_redirects=False,
                )
            )
        )
        thread.start()
        assert _called(model), "the question never reached the model"
        return thread

    def answered(model: FakeOpenAI, thread: threading.Thread) -> requests.Response:
        model.reset()  # releases the held reply
        thread.join(60)
        return sent["response"]

    return SimpleNamespace(ask=ask, answered=answered, agent=agent, document=spool, member=member)


def _called(model: FakeOpenAI) -> bool:
    released = threading.Event()
    for _ in range(600):  # up to a minute: the search and the evidence check come first
        if model.requests:
            return True
        released.wait(0.1)
    return False


def test_an_agent_deleted_while_it_answers_keeps_the_answer_as_its_runs_are_kept(server, admins, slow_model, asking):
    thread = asking.ask(slow_model)
    deleted = admins[0].post(f"{server}/agents/{asking.agent.slug}/delete", allow_redirects=False)
    assert deleted.status_code == 303
    response = asking.answered(slow_model, thread)

    assert response.status_code == 303, response.text[:500]
    run = Run.get()
    assert (run.agent_id, run.agent_slug, run.answer) == (None, "acme-desk", "Run RSPO1041 [1].")
    conversation = Conversation.get()
    assert (conversation.agent_id, conversation.agent_slug) == (None, "acme-desk")
    assert asking.member.get(f"{server}{response.headers['Location']}").status_code == 200


def _assert_cited_text_forgotten(server, asking, response):
    assert response.status_code == 303, response.text[:500]
    run = Run.get()
    reference = RunReference.get(RunReference.run == run)
    assert reference.document_id == "spool-overflow"
    assert reference.text is None  # as for a receipt stored before the deletion
    sources = asking.member.get(f"{server}/chat/answers/{run.id}/sources")
    assert sources.status_code == 200 and "Passage unavailable for this source." in sources.text
    assert "RSPO1041 to delete old spool" not in sources.text
    opened = asking.member.get(f"{server}/chat/answers/{run.id}/sources/1/document", allow_redirects=False)
    assert opened.status_code == 404


def test_a_document_deleted_while_an_answer_cites_it_leaves_no_text_in_the_receipt(
    server, admins, slow_model, asking, pack
):
    thread = asking.ask(slow_model)
    deleted = admins[0].post(
        f"{server}/packs/{pack.slug}/documents/{asking.document.doc_id}/delete",
        data={"expected_version": "1"},
        allow_redirects=False,
    )
    assert deleted.status_code == 303 and Document.get_by_id(asking.document.id).is_deleted

    _assert_cited_text_forgotten(server, asking, asking.answered(slow_model, thread))


def test_a_pack_deleted_while_an_answer_cites_it_leaves_no_text_in_the_receipt(
    server, admins, slow_model, asking, pack
):
    thread = asking.ask(slow_model)
    generation = Pack.get_by_id(pack.id).index_generation
    deleted = admins[0].post(
        f"{server}/packs/{pack.slug}/delete", data={"generation": str(generation)}, allow_redirects=False
    )
    assert deleted.status_code == 303 and Pack.get_by_id(pack.id).is_deleted

    _assert_cited_text_forgotten(server, asking, asking.answered(slow_model, thread))


# --- Two requests stepping one describe job (a second tab, a retried step) -------------------------


def test_two_steps_of_one_describe_job_ending_together_keep_both_descriptions(app, server, admins, pack, users):
    """Each step claims its own figure, so both call the vision model. Each then wrote back the job's notes and
    descriptions as it had read them (the one saving second could drop the other's, paid for and never
    written), and each step that saw every figure taken wrote the revision: the step of the last figure wrote
    it without the other figure's description, or both tried and the job said nothing was written beside a
    revision that was. Now each result is added under the job's lock, and the step adding the last one ends it.

    The second step is sent once the first has claimed its figure (the model holds both calls), and the model
    answers both at once. Meanwhile a third tab's step finds every figure taken and no result in: it only says it
    waits (it ended the job, writing nothing, and the two descriptions to come were dropped; found by a probe)."""
    require_shared_fixtures()
    admin = users["PlatformAdmin"]
    data = (FIXTURES_DIR / "pandoc_inline_images.docx").read_bytes()
    word = documents.upload_file(pack, "pandoc_inline_images.docx", data, admin).document
    with FakeOpenAI() as vision:
        app.config.update(
            CAIRN_VISION_BASE_URL=vision.base_url,
            CAIRN_VISION_API_KEY="vision-key",
            CAIRN_VISION_MODEL="fake-vision",
            CAIRN_VISION_TIMEOUT=60.0,
        )
        third_tab = signed_in(server, admin.email)
        try:
            for round_number in range(RACE_ROUNDS):
                job = describing.start(Document.get_by_id(word.id), admin)
                address = f"{server}/packs/{pack.slug}/documents/{word.doc_id}/describe/jobs/{job.id}"
                vision.reply_after(60, f"A valve, round {round_number}.")
                responses: list = [None, None]
                steps = [
                    threading.Thread(target=_post_step, args=(session, address, responses, n))
                    for n, session in enumerate(admins)
                ]
                for number, step in enumerate(steps, start=1):
                    step.start()
                    assert _asked(vision, number), f"step {number} never reached the model"
                waiting = third_tab.post(address, headers={"HX-Request": "true"}, allow_redirects=False)
                assert waiting.status_code == 200 and "Waiting for the last 2 of 2 figures" in waiting.text
                assert 'hx-trigger="load delay:1s"' in waiting.text  # it looks again in a second
                assert DescribeJob.get_by_id(job.id).status == "running"
                vision.reset()  # both answers at once
                for step in steps:
                    step.join(60)

                assert [r.status_code for r in responses] == [200, 200], [r.text[:300] for r in responses]
                job = DescribeJob.get_by_id(job.id)
                assert (job.status, len(job.notes), sorted(job.descriptions)) == ("written", 2, ["1", "2"]), (
                    job.status,
                    job.notes,
                    job.message,
                )
                text = Document.get_by_id(word.id).current_revision().text
                for number in (1, 2):
                    assert f"Figure {number} description: A valve, round {round_number}." in text, round_number
        finally:
            app.config["CAIRN_VISION_BASE_URL"] = None


def _post_step(session: requests.Session, address: str, responses: list, n: int) -> None:
    responses[n] = session.post(address, headers={"HX-Request": "true"}, allow_redirects=False)


def _asked(model: FakeOpenAI, calls: int) -> bool:
    """Whether ``calls`` requests reached the model, waiting up to a minute for them."""
    waiting = threading.Event()
    for _ in range(600):
        if len(model.requests) >= calls:
            return True
        waiting.wait(0.1)
    return False


# --- Writers taking turns (SQLite) ---------------------------------------------------------------
# Every writing transaction waits for its turn outside SQLite (portal.db._WriterTurn). A turn must end
# with its transaction however that ends, and never outlive the process holding it.

_HOLD_A_TURN = """
import sys, time
from portal.db import open_database
database = open_database(sys.argv[1])
database.begin()
database.execute_sql("INSERT INTO t (v) VALUES ('killed')")
print("holding", flush=True)
time.sleep(600)
"""


@pytest.fixture
def scratch_database(tmp_path, monkeypatch):
    if POSTGRES_URL:
        pytest.skip("SQLite's write lock; PostgreSQL's row locks wait")

    def open_scratch(busy_timeout_ms: int = 10_000):
        monkeypatch.setitem(db.SQLITE_PRAGMAS, "busy_timeout", busy_timeout_ms)
        database = db.open_database(f"sqlite:///{tmp_path / 'turns.db'}")
        database.execute_sql("CREATE TABLE IF NOT EXISTS t (v TEXT)")
        return database

    return open_scratch


def _write_in_thread(database, value: str) -> Callable[[], BaseException | None]:
    """Write ``value`` in a transaction of a new thread; the returned call waits for it and gives its error."""
    outcome: list[BaseException | None] = []

    def write():
        try:
            with database.atomic():
                database.execute_sql("INSERT INTO t (v) VALUES (?)", (value,))
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - handed to the test to assert on
            outcome.append(error)
        finally:
            database.close()

    thread = threading.Thread(target=write)
    thread.start()

    def result():
        thread.join()
        return outcome[0]

    return result


def _values(database) -> list[str]:
    return sorted(v for (v,) in database.execute_sql("SELECT v FROM t").fetchall())


def test_a_writer_killed_in_its_turn_gives_the_turn_back_and_keeps_nothing(scratch_database, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    database = scratch_database()
    with subprocess.Popen(
        [sys.executable, "-c", _HOLD_A_TURN, f"sqlite:///{tmp_path / 'turns.db'}"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    ) as holder:
        try:
            assert holder.stdout.readline().strip() == "holding"
            waiting = _write_in_thread(database, "after")
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait()
            assert waiting() is None
        finally:
            holder.kill()
    assert _values(database) == ["after"]


def test_a_forked_child_waits_for_its_parents_turn(scratch_database):
    import os

    database = scratch_database(busy_timeout_ms=300)
    with database.atomic():  # the parent has opened its lock file
        database.execute_sql("INSERT INTO t (v) VALUES ('parent')")
    ready_r, ready_w = os.pipe()
    told_r, told_w = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child, which reports through the pipe and exits
        outcome = b"?"
        try:
            os.read(ready_r, 1)  # the parent holds its turn now
            try:
                database.writer_turn.take()
                outcome = b"T"  # took the turn the parent holds
            except OperationalError:
                outcome = b"W"  # waited, then was told the database is busy
        finally:
            os.write(told_w, outcome)
            os._exit(0)
    try:
        database.writer_turn.take()
        try:
            os.write(ready_w, b"1")
            told = os.read(told_r, 1)
        finally:
            database.writer_turn.give_back()
    finally:
        os.waitpid(child, 0)
    assert told == b"W"


def test_a_turn_ends_with_its_transaction_however_it_ends(scratch_database):
    database = scratch_database(busy_timeout_ms=10_000)
    with database.atomic():
        database.execute_sql("INSERT INTO t (v) VALUES ('committed')")
    assert not database.writer_turn.held() and _write_in_thread(database, "after commit")() is None

    with pytest.raises(RuntimeError):
        with database.atomic():
            database.execute_sql("INSERT INTO t (v) VALUES ('rolled back')")
            raise RuntimeError("the change fails half way")
    assert not database.writer_turn.held() and _write_in_thread(database, "after rollback")() is None

    database.begin()  # a connection given back to the pool with its transaction still open
    database.execute_sql("INSERT INTO t (v) VALUES ('left open')")
    database.close()
    assert not database.writer_turn.held() and _write_in_thread(database, "after close")() is None
    assert _values(database) == ["after close", "after commit", "after rollback", "committed"]


def test_a_turn_held_past_the_busy_timeout_is_the_busy_error(scratch_database):
    database = scratch_database(busy_timeout_ms=50)
    with database.atomic():
        database.execute_sql("INSERT INTO t (v) VALUES ('first')")
        error = _write_in_thread(database, "second")()
    assert isinstance(error, OperationalError) and db.is_busy(error)
    assert _values(database) == ["first"]
