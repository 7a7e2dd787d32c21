"""The Library (SPEC 2): who reads which document directly, its search over exactly those, and
ranking independence per reader (SPEC 6): what a reader may not read changes none of their scores."""

from __future__ import annotations

import dataclasses
import io

import peewee
import pytest
from bs4 import BeautifulSoup

from helpers import PASSWORD, cli_runner, data_snapshot, signed_in_client
from portal.auth.services import create_user
from portal.db import database, open_database
from portal.documents import editing
from portal.documents import services as documents
from portal.documents.readers import ReaderAccess, change_reader_access
from portal.library import services as library_services
from portal.library.services import search_library
from portal.models import AuditLog, Company, Document, Revision
from portal.packs.services import create_pack
from portal.paging import ListPage
from portal.search.service import batched_index_updates, indexes
from resources.make_fixtures import mixed_images_docx

# (pack, document id, visibility, reader roles)
DOCUMENTS = [
    ("ops", "staff-note", "staff", ()),
    ("ops", "shared-note", "shared", ()),
    ("ops", "shared-auditors", "shared", ("Auditor",)),
    ("ops", "shared-members", "shared", ("Member",)),
    ("ops", "staff-two", "staff", ()),  # (company visibility in a pack serving no company is refused)
    ("acme", "acme-guide", "company", ()),
    ("globex", "globex-guide", "company", ()),
]
ALL = {doc_id for _, doc_id, _, _ in DOCUMENTS}
READABLE = {
    "PlatformAdmin": ALL,
    "AgentBuilder": {"staff-note", "shared-note", "staff-two", "acme-guide", "globex-guide"},
    "Auditor": {"staff-note", "shared-note", "shared-auditors", "staff-two", "acme-guide", "globex-guide"},
    "Member": {"shared-note", "shared-members", "acme-guide"},  # of Acme Test Co
    "Globex member": {"shared-note", "shared-members", "globex-guide"},
    # An Auditor who is also an Acme member reads by either: every document here.
    "Auditor and Member": ALL,
}
WHO = tuple(READABLE)
MIXED_IMAGES_DOCX = mixed_images_docx()


@pytest.fixture
def library(app, users, pack):
    packs = {
        "ops": pack,
        "acme": create_pack("acme", "Acme material", "company", "Acme Test Co"),
        "globex": create_pack("globex", "Globex material", "company", "Globex", add_company=True),
    }
    users["Globex member"] = create_user("globex@example.test", PASSWORD, {"Member"}, "Globex")
    users["Auditor and Member"] = create_user("both@example.test", PASSWORD, {"Auditor", "Member"}, "Acme Test Co")
    with batched_index_updates():
        for slug, doc_id, visibility, roles in DOCUMENTS:
            text = f"# {doc_id}\n\nThe IDoc backlog clears after the {doc_id} check.\n"
            outcome = documents.upload_file(
                packs[slug],
                f"{doc_id}.md",
                text.encode(),
                users["PlatformAdmin"],
                reader_access=ReaderAccess(visibility, roles),
            )
            assert outcome.accepted, outcome.refused
    return packs


@pytest.fixture
def cli(app):
    return cli_runner(app)


@pytest.fixture
def client_for(app, users):
    return lambda who: signed_in_client(app, users[who])


@pytest.mark.parametrize("who", WHO)
def test_the_library_lists_exactly_the_documents_each_reader_may_read(library, client_for, who):
    client = client_for(who)
    response = client.get("/library/")
    page = BeautifulSoup(response.get_data(as_text=True), "html.parser")
    listed = {a["href"].rsplit("/", 1)[1] for a in page.select(".library-list a")}
    assert listed == READABLE[who]


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("slug, doc_id", [(s, d) for s, d, _, _ in DOCUMENTS])
def test_each_document_opens_for_exactly_its_readers(library, client_for, who, slug, doc_id):
    response = client_for(who).get(f"/library/{slug}/{doc_id}")
    assert response.status_code == (200 if doc_id in READABLE[who] else 404)
    if response.status_code == 200:
        page = BeautifulSoup(response.get_data(as_text=True), "html.parser")
        assert "read-only" in page.select_one(".doc-head").get_text()
        assert not page.select("form[action*='/access'], a[href$='/edit']")  # read-only, whoever reads


def test_hidden_and_missing_look_the_same(library, client_for):
    member = client_for("Member")
    hidden = member.get("/library/ops/staff-note")
    missing = member.get("/library/ops/no-such-document")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.get_data() == missing.get_data()


def test_anonymous_is_sent_to_sign_in(library, app):
    response = app.test_client().get("/library/")
    assert response.status_code == 302 and "/login" in response.headers["Location"]


@pytest.mark.parametrize("who", WHO)
def test_library_search_finds_exactly_the_readable_documents(library, client_for, who):
    page = BeautifulSoup(client_for(who).get("/library/?q=IDoc+backlog").get_data(as_text=True), "html.parser")
    found = {a["href"].split("?")[0].rsplit("/", 1)[1] for a in page.select("#library-results .hit-title")}
    assert found == READABLE[who]
    count = page.select_one(".search-count").get_text()
    assert count.startswith(f"{len(READABLE[who])} matching passage")
    assert page.select(".score") == [] and "score" not in page.select_one("#library-results").get_text()


def test_library_search_says_how_many_of_the_matching_passages_it_shows(library, client_for, users, pack):
    with batched_index_updates():
        for n in range(10):
            text = f"# Backlog note {n}\n\nThe IDoc backlog note number {n}.\n"
            reader_access = ReaderAccess("shared", ())
            documents.upload_file(
                pack, f"note-{n}.md", text.encode(), users["PlatformAdmin"], reader_access=reader_access
            )
    page = BeautifulSoup(client_for("Member").get("/library/?q=IDoc+backlog").get_data(as_text=True), "html.parser")
    shown = page.select("#library-results .hit")
    total = len(READABLE["Member"]) + 10
    assert len(shown) == 8 and page.select_one(".search-count").get_text() == (
        f"Showing the 8 best of {total} matching passages, at most 3 from any one document."
    )
    pack_page = BeautifulSoup(
        client_for("PlatformAdmin").get("/packs/ops/search?q=IDoc+backlog").get_data(as_text=True), "html.parser"
    )
    assert len(pack_page.select(".hit")) == 8  # the same words on the pack's search
    assert pack_page.select_one(".search-count").get_text().startswith("Showing the 8 best of ")


def test_a_search_showing_fewer_passages_than_match_says_one_document_shows_at_most_three(client_for, users, pack):
    sections = "".join(f"## Step {n}\n\nThe zeppelin hangar step {n} of the long runbook.\n\n" for n in range(4))
    documents.upload_file(pack, "long.md", f"# Long runbook\n\n{sections}".encode(), users["PlatformAdmin"])
    documents.upload_file(pack, "short.md", b"# Short note\n\nThe zeppelin hangar once.\n", users["PlatformAdmin"])
    page = BeautifulSoup(
        client_for("PlatformAdmin").get("/packs/ops/search?q=zeppelin+hangar").get_data(as_text=True), "html.parser"
    )
    assert len(page.select(".hit")) == 4
    assert page.select_one(".search-count").get_text() == (
        "Showing the 4 best of 5 matching passages, at most 3 from any one document."
    )


def test_library_search_as_a_fragment_and_with_nothing_readable(library, client_for):
    fragment = client_for("Member").get("/library/?q=IDoc", headers={"HX-Request": "true"})
    assert fragment.status_code == 200 and "<html" not in fragment.get_data(as_text=True)
    assert "HX-Request" in fragment.headers["Vary"]
    none = client_for("Member").get("/library/?q=zeppelin").get_data(as_text=True)
    assert "No evidence found: no passage matches “zeppelin” in the documents you may read." in none


def _listed(page: BeautifulSoup) -> list[str]:
    return [a["href"].rsplit("/", 1)[1] for a in page.select(".library-list a")]


@pytest.mark.parametrize("who", WHO)
def test_the_library_pages_through_exactly_the_readable_documents(library, client_for, who, monkeypatch):
    client = client_for(who)
    whole = _listed(BeautifulSoup(client.get("/library/").get_data(as_text=True), "html.parser"))
    monkeypatch.setattr(library_services, "DOCUMENTS_PER_PAGE", 2)
    listed, address, pages = [], "/library/?q=IDoc", 0
    while address:  # following Next, as a reader without JavaScript does
        page = BeautifulSoup(client.get(address).get_data(as_text=True), "html.parser")
        pages += 1
        shown = _listed(page)
        assert 1 <= len(shown) <= 2 and page.select("#library-results .hit")  # the search stays on every page
        if pages > 1:
            assert page.select_one("nav.pager a[rel=prev]")["href"] == f"/library/?q=IDoc&page={pages - 1}"
        listed += shown
        following = page.select_one("nav.pager a[rel=next]")
        address = following["href"] if following else None
    assert listed == whole and set(listed) == READABLE[who]  # each once, in the order of the whole list
    assert pages == (len(READABLE[who]) + 1) // 2


def test_a_library_page_with_htmx_is_the_list_alone(library, client_for, monkeypatch):
    monkeypatch.setattr(library_services, "DOCUMENTS_PER_PAGE", 2)
    response = client_for("Auditor").get("/library/?q=IDoc&page=2", headers={"HX-Request": "true"})
    fragment = BeautifulSoup(response.get_data(as_text=True), "html.parser")
    assert "HX-Request" in response.headers["Vary"] and fragment.select_one("html, h1, #library-results") is None
    assert len(_listed(fragment)) == 2 and "Documents 3–4 of 6" in fragment.select_one(".result-count").text
    pager = fragment.select_one("nav.pager")
    assert pager["aria-label"] and "page 2 of 3" in pager.text
    for link in pager.select("a"):  # a real address for each, which htmx swaps into the list
        assert link["hx-get"] == link["href"] and link["hx-target"] == "#library-documents"


@pytest.mark.parametrize("shown", ["/library/?page=2", "/library/?q=IDoc&page=3", "/library/", "/library/?q=IDoc"])
def test_a_search_with_htmx_brings_the_list_back_to_page_one_with_a_pager_keeping_it(
    library, client_for, monkeypatch, shown
):
    monkeypatch.setattr(library_services, "DOCUMENTS_PER_PAGE", 2)
    response = client_for("Auditor").get(
        "/library/?q=backlog", headers={"HX-Request": "true", "HX-Current-URL": f"http://localhost{shown}"}
    )
    fragment = BeautifulSoup(response.get_data(as_text=True), "html.parser")
    assert fragment.select(".hit") and fragment.select_one("html, h1, #library-results") is None
    pagers = fragment.select("nav.pager")
    assert len(pagers) == 1 and "page 1 of 3" in pagers[0].text
    assert pagers[0].select_one("a[rel=next]")["href"] == "/library/?q=backlog&page=2"
    if "page=" in shown:  # the reader sees another page: the whole list goes back to page 1
        swapped = fragment.select_one("[hx-swap-oob]")
        assert swapped["hx-swap-oob"] == "innerHTML:#library-documents" and len(_listed(swapped)) == 2
    else:  # the same documents: only the pager, not the list a screen reader would read again
        assert pagers[0]["hx-swap-oob"] == "true" and pagers[0]["id"] == "library-pager" and not _listed(fragment)


@pytest.mark.parametrize("current_url", ["http://[x/library/?page=2", "http://[::1/library/?page=2", "\u00ff"])
def test_an_address_htmx_says_is_shown_that_is_no_address_counts_as_none(library, client_for, monkeypatch, current_url):
    """``HX-Current-URL`` is a header anyone can send: one that ``urlsplit`` refuses (an unclosed IPv6 bracket)
    made the Library's search a 500. It is read as no address, the way a request without the header is."""
    monkeypatch.setattr(library_services, "DOCUMENTS_PER_PAGE", 2)
    headers = {"HX-Request": "true", "HX-Current-URL": current_url}
    response = client_for("Auditor").get("/library/?q=backlog", headers=headers)
    assert response.status_code == 200
    pager = BeautifulSoup(response.get_data(as_text=True), "html.parser").select_one("nav.pager")
    assert pager["hx-swap-oob"] == "true" and "page 1 of 3" in pager.text


@pytest.mark.parametrize("page, status, shown", [("3", 200, 3), ("99", 200, 3), ("0", 404, None), ("two", 404, None)])
def test_a_library_page_past_the_end_is_the_last_and_one_that_is_no_page_a_404(
    library, client_for, monkeypatch, page, status, shown
):
    monkeypatch.setattr(library_services, "DOCUMENTS_PER_PAGE", 2)
    response = client_for("Auditor").get(f"/library/?page={page}")
    assert response.status_code == status
    if shown:
        page = BeautifulSoup(response.get_data(as_text=True), "html.parser")
        assert f"page {shown} of 3" in page.select_one("nav.pager").text and len(_listed(page)) == 2
        assert page.select_one("nav.pager a[rel=next]") is None


def test_navigation_links_the_library_for_readers(library, client_for):
    for who in WHO:
        assert 'href="/library/"' in client_for(who).get("/help/").get_data(as_text=True)


# --- Figures and the original ------------------------------------------------------------


@pytest.fixture
def figures(library, users):
    outcome = documents.upload_file(
        library["acme"],
        "mixed-images.docx",
        MIXED_IMAGES_DOCX,
        users["PlatformAdmin"],
        reader_access=ReaderAccess("company"),
    )
    assert outcome.accepted
    return outcome.document


@pytest.mark.parametrize(
    "who, sees, downloads",
    [
        ("PlatformAdmin", True, True),
        ("AgentBuilder", True, False),  # read-only staff download nothing, as on the staff page
        ("Auditor", True, False),
        ("Member", True, True),  # company visibility, their own company's pack
        ("Globex member", False, False),
    ],
)
def test_figures_and_the_original_follow_the_page(figures, client_for, who, sees, downloads):
    client = client_for(who)
    page = client.get("/library/acme/mixed-images")
    assert page.status_code == (200 if sees else 404)
    figure = client.get("/library/acme/mixed-images/v1/figures/1.webp")
    assert figure.status_code == (200 if sees else 404)
    if sees:
        assert figure.mimetype == "image/webp"
        assert "/library/acme/mixed-images/v1/figures/1.webp" in page.get_data(as_text=True)
        assert ("Download the original" in page.get_data(as_text=True)) is downloads
    original = client.get("/library/acme/mixed-images/original")
    assert original.status_code == (200 if downloads else 404)
    if downloads:
        assert original.data == MIXED_IMAGES_DOCX


def test_a_redacted_document_is_never_downloaded_by_a_member(figures, client_for):
    Document.update(redacted=True).where(Document.id == figures.id).execute()
    assert client_for("Member").get("/library/acme/mixed-images/original").status_code == 404
    assert client_for("PlatformAdmin").get("/library/acme/mixed-images/original").status_code == 200


# --- Setting who may read: a revision and an audit entry each time --------------------------


def test_the_document_page_changes_who_may_read_as_a_revision_in_the_audit_log(library, client_for):
    admin = client_for("PlatformAdmin")
    page = admin.get("/packs/ops/documents/staff-note").get_data(as_text=True)
    assert "Who may read" in page and "Staff only" in page
    panel = BeautifulSoup(page, "html.parser").select_one(".reader-access-panel")
    # the section's heading names it; the fields' legend says what they do, not the same words again
    assert [panel.h2.get_text(), panel.legend.get_text()] == ["Who may read", "Change who may read"]
    response = admin.post(
        "/packs/ops/documents/staff-note/access",
        data={"expected_version": "1", "visibility": "shared", "reader_roles": ["Member"]},
    )
    assert response.status_code == 303
    document = Document.get(Document.doc_id == "staff-note")
    assert (document.visibility, document.reader_role_names, document.current_version) == ("shared", ["Member"], 2)
    versions = {r.version: r for r in Revision.select().where(Revision.document == document)}
    assert versions[2].text == versions[1].text and versions[2].sha256 == versions[1].sha256
    entry = AuditLog.get((AuditLog.target_type == "document") & (AuditLog.target_id == document.id))
    assert entry.action == "document.reader_access"
    assert entry.detail["changed"] == {"visibility": ["staff", "shared"], "reader_role_names": [[], ["Member"]]}
    assert entry.detail["version"] == 2 and entry.detail["by"] == "platformadmin@example.test"
    assert client_for("Member").get("/library/ops/staff-note").status_code == 200

    stale = admin.post("/packs/ops/documents/staff-note/access", data={"expected_version": "1", "visibility": "staff"})
    assert stale.status_code == 303
    assert Document.get_by_id(document.id).visibility == "shared"  # a stale change changes nothing
    assert "version" in admin.get("/packs/ops/documents/staff-note").get_data(as_text=True)


@pytest.mark.parametrize("role", ["AgentBuilder", "Auditor", "Member"])
def test_only_a_platform_admin_changes_who_may_read(library, client_for, role):
    response = client_for(role).post(
        "/packs/ops/documents/staff-note/access", data={"expected_version": "1", "visibility": "shared"}
    )
    assert response.status_code == 404
    assert Document.get(Document.doc_id == "staff-note").visibility == "staff"
    assert "Save who may read" not in client_for(role).get("/packs/ops/documents/staff-note").get_data(as_text=True)


def test_upload_and_edit_set_who_may_read(library, client_for, users):
    admin = client_for("PlatformAdmin")
    response = admin.post(
        "/packs/acme/documents",
        data={
            "files": (io.BytesIO(b"# New\n\nA zeppelin note.\n"), "new-note.md", "text/markdown"),
            "visibility": "company",
            "reader_roles": ["Auditor", "Member"],
        },
    )
    assert response.status_code == 200
    new = Document.get(Document.doc_id == "new-note")
    assert (new.visibility, new.reader_role_names) == ("company", ["Auditor", "Member"])
    kept = admin.post(
        "/packs/acme/documents",
        data={"files": (io.BytesIO(b"# New\n\nA zeppelin note, again.\n"), "new-note.md", "text/markdown")},
    )
    assert kept.status_code == 200
    assert Document.get_by_id(new.id).visibility == "company"  # no choice: each keeps its own

    edited = admin.post(
        "/packs/acme/documents/new-note/edit",
        data={"text": "# New\n\nA zeppelin note, again.\n", "expected_version": "2", "visibility": "shared"},
    )
    assert edited.status_code == 303
    document = Document.get_by_id(new.id)
    assert (document.visibility, document.reader_role_names, document.current_version) == ("shared", [], 3)
    actions = [
        e.detail["version"]
        for e in AuditLog.select().where((AuditLog.target_type == "document") & (AuditLog.target_id == new.id))
    ]
    assert sorted(actions) == [1, 3]


def test_company_visibility_in_a_pack_serving_no_company_is_refused_and_not_offered(library, client_for, app):
    """ "Staff and the members of the pack's company" would be staff only there: stored as something else than
    the uploader chose, silently."""
    admin = client_for("PlatformAdmin")
    before = data_snapshot(app)
    upload = admin.post(
        "/packs/ops/documents",
        data={
            "files": (io.BytesIO(b"# New\n\nA zeppelin note.\n"), "new-note.md", "text/markdown"),
            "visibility": "company",
        },
    )
    assert upload.status_code == 422
    line = BeautifulSoup(upload.data, "html.parser").select_one("#upload-outcomes .outcome")
    assert line["data-reason"] == "bad_visibility" and "serves no company" in line.text
    assert data_snapshot(app) == before
    edit = admin.post(
        "/packs/ops/documents/staff-note/edit",
        data={"title": "staff-note", "expected_version": "1", "visibility": "company"},
    )
    assert edit.status_code == 422 and "serves no company" in edit.get_data(as_text=True)
    assert Document.get(Document.doc_id == "staff-note").visibility == "staff"

    def offered(address: str) -> list[str]:
        page = BeautifulSoup(admin.get(address).data, "html.parser")
        return [choice["value"] for choice in page.select("input[type=radio][name=visibility]")]

    assert offered("/packs/ops") == ["", "staff", "shared"]
    assert offered("/packs/acme") == ["", "staff", "shared", "company"]
    assert offered("/packs/ops/documents/staff-note/edit") == ["staff", "shared"]


def test_reader_roles_without_a_visibility_are_refused_not_dropped(library, client_for):
    response = client_for("PlatformAdmin").post(
        "/packs/ops/documents",
        data={
            "files": (io.BytesIO(b"# Roles\n\nA note.\n"), "roles-only.md", "text/markdown"),
            "reader_roles": ["Auditor"],
        },
    )
    assert response.status_code == 422
    assert "choose the visibility too" in response.get_data(as_text=True)
    assert Document.get_or_none(Document.doc_id == "roles-only") is None


def test_cairn_ingest_takes_the_same_options(library, cli, tmp_path):
    note = tmp_path / "cli-note.md"
    note.write_text("# CLI note\n\nThe zeppelin hangar.\n")
    cli("ingest", "ops", str(note), "--visibility", "shared", "--reader-role", "Member")
    document = Document.get(Document.doc_id == "cli-note")
    assert (document.visibility, document.reader_role_names) == ("shared", ["Member"])
    entry = AuditLog.get((AuditLog.target_type == "document") & (AuditLog.target_id == document.id))
    assert entry.detail["by"] == "command line"
    refused = cli("ingest", "ops", str(note), "--reader-role", "Member", ok=False)
    assert "needs --visibility" in refused.stderr


# --- Ranking independence per reader (SPEC 6) -------------------------------------------------

QUERIES = ["IDoc backlog", "backlog check", "shared note", "zeppelin backlog"]


def _member_view(app, users, client) -> dict:
    """Everything the Acme member's Library search shows: results, raw scores and the rendered fragment."""
    seen = {}
    for query in QUERIES:
        results = search_library(users["Member"], query)
        raw = indexes().searcher.search(
            ["acme", "globex", "ops"], query, limit=8, readable=_member_partitions(users["Member"], results)
        )
        fragment = client.get("/library/", query_string={"q": query}, headers={"HX-Request": "true"})
        seen[query] = (dataclasses.asdict(results), raw, fragment.get_data(as_text=True))
    return seen


def _member_partitions(user, _results):
    from portal import access
    from portal.models import Pack
    from portal.search.schema import partition_class

    by_slug = {p.slug: p for p in Pack.select()}
    return lambda slug, partition: access.may_read(user, by_slug[slug], *partition_class(partition))


def _reindex_fresh():
    """Drop every cached reader, so the comparison cannot lean on a reader opened before the change."""
    indexes().close()


UNREADABLE_CHANGES = {
    "add a staff document": lambda packs, admin: documents.upload_file(
        packs["ops"], "hidden-add.md", b"# Hidden\n\nIDoc backlog backlog backlog zeppelin check note.\n", admin
    ),
    "add a document of another company": lambda packs, admin: documents.upload_file(
        packs["globex"],
        "globex-more.md",
        b"# More\n\nIDoc backlog shared note zeppelin.\n",
        admin,
        reader_access=ReaderAccess("company"),
    ),
    "add a shared document for auditors": lambda packs, admin: documents.upload_file(
        packs["ops"],
        "auditors-more.md",
        b"# More\n\nbacklog backlog shared check.\n",
        admin,
        reader_access=ReaderAccess("shared", ("Auditor",)),
    ),
    "edit a staff document": lambda packs, admin: editing.edit_text(
        Document.get(Document.doc_id == "staff-note"),
        "# staff-note\n\nBacklog backlog shared note zeppelin IDoc, much longer now " + "filler " * 50 + "\n",
        1,
        admin,
    ),
    "tighten a staff document further": lambda packs, admin: change_reader_access(
        Document.get(Document.doc_id == "staff-note"), ReaderAccess("staff", ("Auditor",)), 1, admin
    ),
    "move a document between unreadable classes": lambda packs, admin: change_reader_access(
        Document.get(Document.doc_id == "globex-guide"), ReaderAccess("staff"), 1, admin
    ),
    "delete a staff document": lambda packs, admin: editing.delete_document(
        Document.get(Document.doc_id == "staff-note"), 1
    ),
    "delete a document of another company": lambda packs, admin: editing.delete_document(
        Document.get(Document.doc_id == "globex-guide"), 1
    ),
}


@pytest.mark.parametrize("change", list(UNREADABLE_CHANGES))
def test_documents_a_member_may_not_read_change_none_of_their_search(library, app, users, client_for, change):
    client = client_for("Member")
    before = _member_view(app, users, client)
    assert any(raw.hits for _, raw, _ in before.values())
    UNREADABLE_CHANGES[change](library, users["PlatformAdmin"])
    _reindex_fresh()
    after = _member_view(app, users, client)
    for query in QUERIES:
        assert after[query][0] == before[query][0], query  # hits, scores, snippets, counts, as the service gives
        assert after[query][1] == before[query][1], query  # Lucene's own floats, to the last digit
        assert after[query][2] == before[query][2], query  # the page as the member sees it


def test_a_document_the_member_may_read_does_change_their_search(library, app, users, client_for):
    """The control: the comparison above would see a change."""
    client = client_for("Member")
    before = _member_view(app, users, client)
    documents.upload_file(
        library["ops"],
        "readable-add.md",
        b"# Readable\n\nIDoc backlog backlog shared note.\n",
        users["PlatformAdmin"],
        reader_access=ReaderAccess("shared"),
    )
    after = _member_view(app, users, client)
    assert after["IDoc backlog"][1] != before["IDoc backlog"][1]


def test_the_pack_page_search_of_staff_scores_only_what_their_reader_roles_admit(library, client_for, users):
    """Staff reader roles are exact too: an Auditor-only document changes no AgentBuilder score."""
    from portal import access

    builder = users["AgentBuilder"]
    before = access.search_for_reader(builder, [library["ops"]], "backlog check")
    documents.upload_file(
        library["ops"],
        "auditors-only.md",
        b"# Auditors\n\nbacklog check backlog check.\n",
        users["PlatformAdmin"],
        reader_access=ReaderAccess("staff", ("Auditor",)),
    )
    after = access.search_for_reader(builder, [library["ops"]], "backlog check")
    assert after == before
    assert "auditors-only" in {
        h.document_id for h in access.search_for_reader(users["Auditor"], [library["ops"]], "backlog check").hits
    }


def test_agents_still_reach_every_partition_of_their_granted_packs(library):
    from portal.search.service import search_packs

    found = {h.document_id for h in search_packs([library["ops"]], "IDoc backlog", limit=20).hits}
    assert found == {d for s, d, _, _ in DOCUMENTS if s == "ops"}


def test_index_rebuild_and_catch_up_keep_partitions(library, app):
    from portal.search.service import rebuild_all

    store = indexes().store
    assert set(store.partitions("ops")) == {"staff", "shared", "shared-for-Auditor", "shared-for-Member"}
    assert set(store.partitions("acme")) == {"company", "staff"}
    change_reader_access(Document.get(Document.doc_id == "shared-auditors"), ReaderAccess("shared"), 1, None)
    rebuild_all()
    assert set(store.partitions("ops")) == {"staff", "shared", "shared-for-Member"}
    assert set(store.partitions("acme")) == {"company", "staff"}
    assert store.generation("ops") == library["ops"].__class__.get_by_id(library["ops"].id).index_generation


@pytest.mark.parametrize("before, after", [("staff", "shared"), ("shared", "staff"), ("company", "shared")])
def test_a_crash_between_partition_commits_is_repaired_by_catching_up(library, users, monkeypatch, before, after):
    """The partition losing the passages commits first; a crash before the other leaves the document in
    neither (never in both), its pending row stays, and catching up puts it where the database says."""
    from portal.models import PendingIndexUpdate
    from portal.search import index as index_module
    from portal.search.service import index_pending_work, search_packs

    pack = library["acme" if "company" in (before, after) else "ops"]  # only a company's pack has "company"
    outcome = documents.upload_file(
        pack, "moving.md", b"# Moving\n\nThe zeppelin moves.\n", None, reader_access=ReaderAccess(before)
    )
    real_commit, commits = index_module._commit, []

    def crash_on_the_second_commit(writer, generation, model_id=None):
        commits.append(generation)
        if len(commits) == 2:
            raise RuntimeError("killed between two partition commits")
        real_commit(writer, generation, model_id)

    monkeypatch.setattr(index_module, "_commit", crash_on_the_second_commit)
    change_reader_access(outcome.document, ReaderAccess(after), 1, None)  # the index update fails, logged
    monkeypatch.setattr(index_module, "_commit", real_commit)
    assert PendingIndexUpdate.select().where(PendingIndexUpdate.doc_id == "moving").count() == 1
    found = [h.document_id for h in search_packs([pack], "zeppelin").hits]
    assert found in ([], ["moving"])  # in one partition at most: the one losing it committed first

    assert index_pending_work() == [pack.slug]
    assert [h.document_id for h in search_packs([pack], "zeppelin").hits] == ["moving"]
    member_sees = [h.document_id for h in search_library(users["Member"], "zeppelin").hits]
    assert member_sees == (["moving"] if after == "shared" else [])
    assert indexes().store.generation(pack.slug) == type(pack).get_by_id(pack.id).index_generation


@pytest.mark.parametrize("listed", [0, 1, 4, 5, 6, 10, 11])
def test_a_list_page_shows_and_counts_what_a_count_gives_and_counts_only_a_full_page(app, listed, monkeypatch):
    """Every listing pages through ``ListPage``: a page that is not full is the last and gives the total
    itself; a full page, or one past the end (shown as the last), asks for the count."""
    for n in range(listed):
        Company.create(name=f"company {n:02d}")
    query = Company.select().order_by(Company.name)
    total = query.count()
    counted = []
    count = peewee.SelectBase.count
    monkeypatch.setattr(peewee.SelectBase, "count", lambda self, *a, **k: counted.append(1) or count(self, *a, **k))
    for asked in range(1, 5):
        counted.clear()
        page = ListPage(query, 5, asked)
        shown = min(asked, max(1, -(-total // 5)))
        assert (page.total, page.get_page()) == (total, shown)
        assert [c.name for c in page.items] == [c.name for c in query.paginate(shown, 5)]
        assert (page.first, page.last) == ((shown - 1) * 5 + 1 if total else 0, min(shown * 5, total))
        full_or_past_the_end = len(list(query.paginate(asked, 5))) in (0, 5) and not (asked == 1 and total == 0)
        assert bool(counted) == full_or_past_the_end


@pytest.mark.parametrize(
    "listed, asked, change",
    [
        (15, 3, "delete"),  # a full page, its count after five rows went: "page 2 of 2" over page 3's rows
        (10, 2, "insert"),  # a full page, its count after five rows came before it: a total its rows disagree with
        (12, 9, "delete"),  # past the end: rows gone before the count, and again before the last page is read
    ],
)
def test_a_list_page_reads_its_rows_and_their_count_as_of_one_moment(app, listed, asked, change, monkeypatch):
    """Another connection writing between the reads of a page changes nothing the page shows: its rows, total,
    page number and positions all describe the list as it was when the page was first read."""
    for n in range(listed):
        Company.create(name=f"company {n:02d}")
    query = Company.select().order_by(Company.name)
    before = [c.name for c in query]
    other = open_database(app.config["DATABASE_URL"])  # a second connection, as another worker's
    first_five = Company.select(Company.id).order_by(Company.name).limit(5)
    added = iter(range(100))

    def write_from_the_other_connection():
        if change == "delete":
            other.execute(Company.delete().where(Company.id.in_(first_five)))
        else:
            other.execute(Company.insert_many([{"name": f"a company {next(added):02d}"} for _ in range(5)]))

    db = database().obj  # the Database behind FlaskDB's proxy
    execute_sql, reads = db.execute_sql, []

    def interleaved(sql, *args, **kwargs):
        if sql.lstrip().upper().startswith("SELECT"):
            if reads:  # every read of the page after its first one
                write_from_the_other_connection()
            reads.append(sql)
        return execute_sql(sql, *args, **kwargs)

    monkeypatch.setattr(db, "execute_sql", interleaved)
    try:
        page = ListPage(query, 5, asked)
    finally:
        monkeypatch.undo()
        other.close()
    assert len(reads) >= 2  # a write did come between two of its reads
    shown = min(asked, -(-listed // 5))
    assert (page.total, page.get_page(), page.get_page_count()) == (listed, shown, -(-listed // 5))
    assert [c.name for c in page.items] == before[(shown - 1) * 5 : shown * 5]
    assert (page.first, page.last) == ((shown - 1) * 5 + 1, min(shown * 5, listed))
    assert [c.name for c in query.clone()] != before  # the writes were made, and are seen once the page is read
