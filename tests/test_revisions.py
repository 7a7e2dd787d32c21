"""Older revisions (SPEC 2, issue 13 item 4): listed, opened read-only with their own figures, compared with
the current text, and read only with permission under both their own and the current restrictions.

The access matrix covers every staff role, a Member, a Member of another company, and people whose roles
do not match a document's reader roles (a Member of the right company, a builder), through every door:
the staff viewer, its figures and originals, a member's cited document, and the JSON API.
"""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest
from bs4 import BeautifulSoup

from helpers import PASSWORD, SPOOL, signed_in_client
from portal.agents.services import create_agent
from portal.api.tokens import create_token
from portal.auth.services import create_user
from portal.chat.services import start_conversation
from portal.documents import editing
from portal.documents import services as documents
from portal.documents.readers import ReaderAccess, change_reader_access
from portal.models import REVISIONS_KEPT, AuditLog, Document, Revision
from resources.make_fixtures import mixed_images_docx

QUESTION = "How do I delete old spool requests?"
SPOOL_V2 = SPOOL.decode().replace("Output requests pile up", "Output requests keep piling up")


def _soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def _restrict(doc_id: str, *roles: str) -> None:
    document = Document.get(Document.doc_id == doc_id)
    change_reader_access(document, ReaderAccess("staff", roles), document.current_version, None)


def _edit(doc_id: str, text: str) -> None:
    document = Document.get(Document.doc_id == doc_id)
    editing.edit_text(document, text, document.current_version, None)


@pytest.fixture
def people(app, users):
    """Everyone the matrix asks: the role fixtures, another company's Member, a Member who is also an Auditor."""
    return {
        **users,
        "other company": create_user("globex@example.test", PASSWORD, {"Member"}, "Globex"),
        "member and auditor": create_user("both@example.test", PASSWORD, {"Member", "Auditor"}, "Acme Test Co"),
    }


@pytest.fixture
def client_for(app, people):
    return lambda who: signed_in_client(app, people[who])


# --- the staff viewer --------------------------------------------------------------------


def test_a_new_version_of_another_kind_or_title_says_so(app, pack, client_as):
    """A Markdown README replaced by a PDF of another title only said "Saved as version 2." (found by a browser
    walkthrough): allowed, but the page changes more than its text."""
    documents.upload_file(pack, "notes.md", b"# Notes\n\nThe spool range is SPO_NUM.\n", None)
    admin = client_as("PlatformAdmin")

    def new_version(data: bytes, name: str, expected: int) -> str:
        form = {"file": (io.BytesIO(data), name), "expected_version": str(expected)}
        page = admin.post("/packs/ops/documents/notes/new-version", data=form, follow_redirects=True)
        return _soup(page).select_one(".flash").text.strip()

    assert new_version(b"# Notes\n\nThe spool range is SPO_NUM, RSPO1041.\n", "notes.md", 1) == "Saved as version 2."
    assert new_version(b"Plain words about the spool.\n", "Spool words.txt", 2) == (
        "Saved as version 3. Note: it is now text, not markdown and its title is now “Spool words”."
    )


def test_older_revisions_are_listed_and_open_read_only_with_their_own_figures_and_a_notice(app, pack, client_as):
    manual = mixed_images_docx()
    documents.upload_file(pack, "manual.docx", manual, None)
    admin = client_as("PlatformAdmin")
    replaced = admin.post(
        "/packs/ops/documents/manual/new-version",
        data={"file": (io.BytesIO(b"# Manual\n\nNo pictures any more.\n"), "manual.md"), "expected_version": "1"},
        content_type="multipart/form-data",
    )
    assert replaced.status_code == 303
    current = _soup(admin.get("/packs/ops/documents/manual"))
    assert current.select_one(".older-revision") is None
    assert [a["href"] for a in current.select(".revisions a")] == ["/packs/ops/documents/manual?version=1"]
    assert "(current)" in current.select_one(".revisions li[aria-current]").text

    older = _soup(admin.get("/packs/ops/documents/manual?version=1"))
    assert "This is version 1 of 2, read-only" in older.select_one(".older-revision").text
    assert older.select_one(".older-revision a")["href"] == "/packs/ops/documents/manual"
    assert older.select_one(".new-version") is None and "Delete" not in older.select_one(".toolbar").text
    assert "Edit" not in older.select_one(".toolbar").text
    figures = [img["src"] for img in older.select(".doc-body img")]
    assert figures and all(src.startswith("/packs/ops/documents/manual/v1/figures/") for src in figures)
    assert admin.get(figures[0]).status_code == 200
    assert admin.get("/packs/ops/documents/manual/v2/figures/1.webp").status_code == 404  # v2 has none
    original = admin.get("/packs/ops/documents/manual/original?version=1")
    assert original.status_code == 200 and original.data == manual
    assert admin.get("/packs/ops/documents/manual?version=3").status_code == 404
    # a version that is no number is no version either (it showed the current text)
    for version in ("abc", "-1", "0", "2147483648"):
        assert admin.get(f"/packs/ops/documents/manual?version={version}").status_code == 404, version
    assert admin.get("/packs/ops/documents/manual?version=").status_code == 200  # empty: the current one


def test_the_diff_against_the_current_text_is_escaped_plain_text(app, pack, client_as):
    hostile = "# Notes\n\n<script>alert('v1')</script>\n\nKeep this line.\n"
    documents.upload_file(pack, "notes.md", hostile.encode(), None)
    _edit("notes", hostile.replace("<script>alert('v1')</script>", '<img src=x onerror="alert(2)" hx-get="/x">'))
    response = client_as("Auditor").get("/packs/ops/documents/notes?version=1&view=diff")
    page = _soup(response)
    body = page.select_one(".doc-body")
    assert body.has_attr("hx-disable")
    assert body.select("script, img, [hx-get], [onerror]") == []
    assert [s.text for s in body.select(".diff-removed")] == ["-<script>alert('v1')</script>"]
    assert [s.text for s in body.select(".diff-added")] == ['+<img src=x onerror="alert(2)" hx-get="/x">']
    assert "&lt;script&gt;" in response.get_data(as_text=True)
    assert client_as("Auditor").get("/packs/ops/documents/notes?view=diff").status_code == 200  # current: no diff
    assert _soup(client_as("Auditor").get("/packs/ops/documents/notes?view=diff")).select(".diff") == []


def _lines_scanned_by_difflib(monkeypatch) -> list[int]:
    """The lines each of difflib's longest-match searches scans, appended as they run: its work, counted
    rather than timed (a busy machine is no defect)."""
    import difflib

    scanned: list[int] = []
    find = difflib.SequenceMatcher.find_longest_match

    def counted(self, alo=0, ahi=None, blo=0, bhi=None):
        scanned.append((len(self.a) if ahi is None else ahi) - alo)
        return find(self, alo, ahi, blo, bhi)

    monkeypatch.setattr(difflib.SequenceMatcher, "find_longest_match", counted)
    return scanned


def test_a_diff_of_a_text_changed_on_every_other_line_does_bounded_work(app, pack, client_as, monkeypatch):
    """difflib matches a stretch of lines, then the stretches either side of the match, scanning each
    whole: where matches are single lines all through (every other line changed), that is quadratic, and
    two versions of a 400,000-character text kept a worker several minutes, past gunicorn's timeout, for
    anyone opening the older version's changes. The matching now stops at ``viewer.DIFF_WORK`` lines
    scanned and shows what is left as removed and added; the diff stays true."""

    from portal.documents import viewer

    lines = 6_000
    old = [f"line {n} of the zorblax log" for n in range(lines)]
    new = [line if n % 2 else f"changed {n} of the zorblax log" for n, line in enumerate(old)]
    documents.upload_file(pack, "log.md", "\n".join(old).encode(), None)
    documents.upload_file(pack, "log.md", "\n".join(new).encode(), None)
    scanned = _lines_scanned_by_difflib(monkeypatch)
    response = client_as("Auditor").get("/packs/ops/documents/log?version=1&view=diff")
    assert response.status_code == 200
    assert sum(scanned) <= viewer.DIFF_WORK
    body = _soup(response).select_one(".doc-body")
    removed = {s.text[1:] for s in body.select(".diff-removed")}
    added = {s.text[1:] for s in body.select(".diff-added")}
    assert set(old) - set(new) <= removed <= set(old) and set(new) - set(old) <= added <= set(new)


@pytest.mark.parametrize(("lines", "one_changed_in"), [(33_333, 1_000), (10_000, 100)])
def test_an_ordinary_edit_of_a_long_text_gets_difflibs_own_diff(lines, one_changed_in):
    """The work bound alone cut difflib's matching of a few edits spread through a long text (it costs
    lines × edits): 33,333 lines with one in 1,000 changed came out as 24,856 rows, 12,354 lines wrongly
    shown as removed, where difflib gives 303."""
    import difflib

    from portal.documents import viewer

    old = [f"line {n}" for n in range(lines)]
    new = [f"edit {n}" if n % one_changed_in == one_changed_in // 2 else line for n, line in enumerate(old)]
    diff = viewer.text_diff(SimpleNamespace(text="\n".join(old)), SimpleNamespace(text="\n".join(new)))
    assert [row.text for row in diff.rows] == list(difflib.unified_diff(old, new, lineterm=""))[2:]
    assert diff.note is None


def test_a_diff_past_its_work_bound_says_so_on_the_page(app, pack, client_as, monkeypatch):
    """Every other line changed and no line once only in each text (the text twice over): nothing to anchor
    on, so difflib's matching runs into ``viewer.DIFF_WORK`` and leaves stretches unmatched. The page says
    that parts are shown removed and added whole; an ordinary diff says nothing of the kind."""

    from portal.documents import viewer

    half = [f"line {n} of the zorblax log" for n in range(3_000)]
    old = half + half
    new = [line if n % 2 else f"changed {line}" for n, line in enumerate(old)]
    documents.upload_file(pack, "log.md", "\n".join(old).encode(), None)
    documents.upload_file(pack, "log.md", "\n".join(new).encode(), None)
    scanned = _lines_scanned_by_difflib(monkeypatch)
    page = _soup(client_as("Auditor").get("/packs/ops/documents/log?version=1&view=diff"))
    assert sum(scanned) <= viewer.DIFF_WORK
    assert page.select_one(".doc-body .diff-note").text == viewer.DIFF_MATCHED_IN_PART
    body = page.select_one(".doc-body")
    removed = [s.text[1:] for s in body.select(".diff-removed")]
    added = [s.text[1:] for s in body.select(".diff-added")]
    assert set(old) - set(new) <= set(removed) <= set(old) and set(new) - set(old) <= set(added) <= set(new)

    _edit("log", "\n".join(new[:-1]))
    ordinary = _soup(client_as("Auditor").get("/packs/ops/documents/log?version=2&view=diff"))
    assert ordinary.select_one(".diff-note") is None
    assert [s.text for s in ordinary.select(".diff-removed")] == [f"-{new[-1]}"]


# --- the access matrix: tightening hides, loosening never reveals ----------------------------

STAFF_VIEWS = (
    "/packs/ops/documents/notes?version={v}",
    "/packs/ops/documents/notes?version={v}&view=lines",
    "/packs/ops/documents/notes?version={v}&view=diff",
)


AUDITORS_ONLY = ReaderAccess("staff", ("Auditor",))


@pytest.fixture
def loosened(app, pack):
    """v1 and v2 made while only Auditors could read the document; then it was opened to every staff
    reader (v3: the same text, a revision of its own, as every change of who may read is) and edited (v4)."""
    documents.upload_file(pack, "notes.md", b"# Notes\n\nThe first text.\n", None, reader_access=AUDITORS_ONLY)
    _edit("notes", "# Notes\n\nThe second text.\n")
    _restrict("notes")  # loosened: v3 is open; v1 and v2 keep their own restriction
    _edit("notes", "# Notes\n\nThe third text.\n")


@pytest.fixture
def tightened(app, pack):
    """v1 and v2 made open to every staff reader; then the document was narrowed to Auditors (v3)."""
    documents.upload_file(pack, "notes.md", b"# Notes\n\nThe first text.\n", None)
    _edit("notes", "# Notes\n\nThe second text.\n")
    _restrict("notes", "Auditor")


# who → the versions they may open (1, 2 older and Auditors-only; 3, 4 open, 4 current)
LOOSENED = {
    "PlatformAdmin": {1, 2, 3, 4},  # bypasses reader roles for administration
    "Auditor": {1, 2, 3, 4},
    "AgentBuilder": {3, 4},  # v1 and v2 were Auditors-only, and loosening never reveals them
    "member and auditor": {1, 2, 3, 4},
    "Member": set(),  # no staff pages at all
    "other company": set(),
}
TIGHTENED = {
    "PlatformAdmin": {1, 2, 3},
    "Auditor": {1, 2, 3},
    "AgentBuilder": set(),  # tightening hides the old revisions too
    "member and auditor": {1, 2, 3},
    "Member": set(),
    "other company": set(),
}


@pytest.mark.parametrize("who", sorted(LOOSENED))
def test_loosening_never_reveals_a_previously_restricted_revision(loosened, client_for, who):
    client = client_for(who)
    for version in (1, 2, 3, 4):
        for view in STAFF_VIEWS:
            status = client.get(view.format(v=version)).status_code
            assert status == (200 if version in LOOSENED[who] else 404), (view, version, status)
    if LOOSENED[who]:
        listed = [li.text.split()[0] for li in _soup(client.get("/packs/ops/documents/notes")).select(".revisions li")]
        assert listed == [f"v{v}" for v in sorted(LOOSENED[who], reverse=True)]


@pytest.mark.parametrize("who", sorted(TIGHTENED))
def test_tightening_hides_older_revisions_too(tightened, client_for, who):
    client = client_for(who)
    for version in (1, 2, 3):
        for view in STAFF_VIEWS:
            status = client.get(view.format(v=version)).status_code
            assert status == (200 if version in TIGHTENED[who] else 404), (view, version, status)


def test_a_revision_keeps_the_reader_access_it_had_while_current(loosened):
    kept = {r.version: r.reader_role_names for r in Revision.select().order_by(Revision.version)}
    assert kept == {1: ["Auditor"], 2: ["Auditor"], 3: [], 4: []}


@pytest.mark.parametrize("who", ["PlatformAdmin", "AgentBuilder", "Auditor", "Member"])
def test_the_api_reads_an_older_revision_under_the_same_rule(loosened, app, people, who):
    token = create_token(people[who], "t")[1]
    client = app.test_client()
    for version in (1, 2, 3, 4):
        response = client.get(
            f"/api/v1/packs/ops/documents/notes?version={version}", headers={"Authorization": f"Bearer {token}"}
        )
        allowed = version in LOOSENED[who]
        assert response.status_code == (200 if allowed else 404), (version, response.get_json())
        if not allowed:
            assert response.get_json()["error"]["code"] == "not_found"


# --- a member's cited document ----------------------------------------------------------------


def _cite(pack, users, reader_access=None):
    """The Member's answer, citing version 1 of the spool runbook (agents reach the pack by grant, whoever
    may read the document directly)."""
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None, reader_access=reader_access)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    _conversation, run = start_conversation(users["Member"], agent, QUESTION)
    assert run.cited == [1] and run.references().first().version == 1
    return SimpleNamespace(run=run, url=f"/chat/answers/{run.id}/sources/1/document")


@pytest.fixture
def cited(app, pack, users):
    return _cite(pack, users)


@pytest.fixture
def cited_restricted(app, pack, users):
    """As ``cited``, but version 1 was for Auditors only while it was current."""
    return _cite(pack, users, AUDITORS_ONLY)


# who → may open the cited page at all (only the asker)
CITED_WHO = ("Member", "other company", "member and auditor", "PlatformAdmin", "AgentBuilder", "Auditor")


@pytest.mark.parametrize("who", CITED_WHO)
def test_a_cited_revision_that_was_restricted_stays_closed_after_loosening(cited_restricted, client_for, who):
    cited = cited_restricted  # v1, which the answer cited, was closed to members
    _edit("spool-overflow", SPOOL_V2)
    _restrict("spool-overflow")  # loosened: v3 (the text of v2) is open, v1 and v2 keep their restriction
    client = client_for(who)
    page = client.get(cited.url)
    if who != "Member":  # only the asker's answer opens anything here
        assert page.status_code == 404
        assert client.get(cited.url + "?version=1").status_code == 404
        return
    soup = _soup(page)
    assert "version 3" in soup.select_one(".doc-head").text and "keep piling up" in soup.select_one(".doc-body").text
    assert "Version 1 is not open to you" in soup.select_one(".changed-since-run").text
    assert client.get(cited.url + "?version=1").status_code == 404
    assert client.get(cited.url + "/figures/1.webp?version=1").status_code == 404


@pytest.mark.parametrize("who", CITED_WHO)
def test_tightening_hides_the_cited_revision_and_the_current_one(cited, client_for, who):
    _edit("spool-overflow", SPOOL_V2)
    member = client_for("Member")
    assert "version 1 of 2" in _soup(member.get(cited.url)).select_one(".cited-revision").text
    _restrict("spool-overflow", "Auditor")  # a Member's roles no longer match
    client = client_for(who)
    for address in (cited.url, cited.url + "?version=1", cited.url + "?version=2", cited.url + "?version=3"):
        assert client.get(address).status_code == 404, address
    sources = client.get(f"/chat/answers/{cited.run.id}/sources")
    if who == "Member":
        assert _soup(sources).select(".open-document") == []


def test_a_purged_cited_revision_is_said_and_the_current_one_shown(cited, client_for):
    for n in range(REVISIONS_KEPT):
        _edit("spool-overflow", f"{SPOOL_V2}\nEdit {n}.\n")
    page = _soup(client_for("Member").get(cited.url))
    assert "Version 1 was purged" in page.select_one(".changed-since-run").text
    assert f"version {REVISIONS_KEPT + 1}" in page.select_one(".doc-head").text


# --- replacing a document on purpose, and titles --------------------------------------------------


def test_upload_a_new_version_sends_the_version_it_was_based_on_and_a_stale_one_is_refused(app, pack, client_as):
    documents.upload_file(pack, "notes.md", b"# Notes\n\nFirst.\n", None)
    admin = client_as("PlatformAdmin")
    form = _soup(admin.get("/packs/ops/documents/notes")).select_one(".new-version form")
    assert form["action"] == "/packs/ops/documents/notes/new-version"
    assert form.select_one("input[name=expected_version]")["value"] == "1"

    def send(data: bytes, expected: str, name: str = "anything.md"):
        return admin.post(
            "/packs/ops/documents/notes/new-version",
            data={"file": (io.BytesIO(data), name), "expected_version": expected},
            content_type="multipart/form-data",
        )

    assert send(b"# Notes\n\nSecond.\n", "1").status_code == 303
    stale = send(b"# Notes\n\nSomeone else's.\n", "1")
    assert stale.status_code == 409
    assert "now at version 2" in _soup(stale).select_one(".new-version .error").text
    assert Document.get(Document.doc_id == "notes").current_version == 2
    assert Revision.select().count() == 2
    refused = send(b"", "2")
    assert refused.status_code == 422 and "no text" in _soup(refused).select_one(".new-version .error").text
    for role in ("AgentBuilder", "Auditor", "Member"):
        assert client_as(role).post("/packs/ops/documents/notes/new-version", data={}).status_code == 404


def test_word_and_pdf_titles_can_be_edited_and_a_new_version_keeps_the_title(app, pack, client_as):
    documents.upload_file(pack, "manual.docx", mixed_images_docx(), None)
    admin = client_as("PlatformAdmin")
    page = _soup(admin.get("/packs/ops/documents/manual/edit"))
    assert page.select_one("#text") is None and page.select_one("#title") is not None
    saved = admin.post(
        "/packs/ops/documents/manual/edit", data={"title": "Image handling manual", "expected_version": "1"}
    )
    assert saved.status_code == 303
    document = Document.get(Document.doc_id == "manual")
    assert document.title == "Image handling manual" and document.title_by_hand and document.current_version == 1
    (entry,) = AuditLog.select().where(
        (AuditLog.action == "document.retitle") & (AuditLog.target_id == document.id)
    )  # a title changes no revision: the audit log keeps who changed it, from what
    assert entry.detail["to"] == "Image handling manual" and entry.detail["from"] != entry.detail["to"]
    assert "PlatformAdmin" in entry.actor.role_names
    stale = admin.post("/packs/ops/documents/manual/edit", data={"title": "Other", "expected_version": "0"})
    assert stale.status_code == 409
    assert AuditLog.select().where(AuditLog.action == "document.retitle").count() == 1  # refused: none written
    admin.post(
        "/packs/ops/documents/manual/new-version",
        data={"file": (io.BytesIO(b"# Another heading\n\nText.\n"), "manual.md"), "expected_version": "1"},
        content_type="multipart/form-data",
    )
    assert Document.get(Document.doc_id == "manual").title == "Image handling manual"
    found = client_as("Auditor").get("/packs/ops/search?q=handling+manual").get_data(as_text=True)
    assert "/documents/manual" in found  # the title is searched
