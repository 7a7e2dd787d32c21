"""Pack pages and search: full page vs HTMX fragment, no evidence, ranking independence."""

from __future__ import annotations

import io

import pytest
from bs4 import BeautifulSoup

from helpers import make_index_unreadable, upload
from portal.api.tokens import create_token
from portal.documents import services
from portal.search.service import search_packs

DOC = b"# Transport import failures\n\nWhen STMS shows return code 8, read the import log and fix the object.\n"


def test_search_fragment_and_full_page(app, pack, client_as):
    services.upload_file(pack, "transport.md", DOC, None)
    client = client_as("Auditor")
    full = client.get("/packs/ops/search?q=import+log")
    assert full.status_code == 200 and "<html" in full.get_data(as_text=True)
    assert "HX-Request" in full.headers["Vary"]
    fragment = client.get("/packs/ops/search?q=import+log", headers={"HX-Request": "true"})
    body = fragment.get_data(as_text=True)
    assert "<html" not in body and 'class="hit"' in body and "Transport import failures" in body
    assert "HX-Request" in fragment.headers["Vary"]
    boosted = client.get("/packs/ops/search?q=import+log", headers={"HX-Request": "true", "HX-Boosted": "true"})
    assert "<html" in boosted.get_data(as_text=True)
    restore = client.get(
        "/packs/ops/search?q=import", headers={"HX-Request": "true", "HX-History-Restore-Request": "true"}
    )
    assert "<html" in restore.get_data(as_text=True)


def test_a_hit_is_written_alike_on_the_pack_page_and_in_the_library(app, pack, client_as):
    """One partial (templates/_search_results.html) for both: the pack page wrote the score to 2 decimals,
    the Library to 4, for the same hit of the same reader. The Library shows no score: to a reader it means nothing."""
    services.upload_file(pack, "transport.md", DOC, None)
    client = client_as("Auditor")

    def lines(address):
        page = BeautifulSoup(client.get(address, headers={"HX-Request": "true"}).data, "html.parser")
        return [(hit.select_one(".hit-title").text, hit.select_one(".muted").get_text()) for hit in page.select(".hit")]

    in_pack, in_library = lines("/packs/ops/search?q=import+log"), lines("/library/?q=import+log")
    in_pack_unscored = [(title, line.rpartition(" · score ")[0]) for title, line in in_pack]
    assert in_pack and [(title, f"Operations · {line}") for title, line in in_pack_unscored] == in_library
    score = BeautifulSoup(client.get("/packs/ops/search?q=import+log").data, "html.parser").select_one(".score")
    assert len(score.text.split(".")[1]) == 4


def test_no_matching_term_says_no_evidence_found_with_a_hint(app, pack, client_as):
    services.upload_file(pack, "transport.md", DOC, None)
    body = (
        client_as("Auditor")
        .get("/packs/ops/search?q=payroll+antarctica", headers={"HX-Request": "true"})
        .get_data(as_text=True)
    )
    found = BeautifulSoup(body, "html.parser").select_one(".no-match").get_text(" ")
    assert " ".join(found.split()).startswith(
        "No evidence found: no passage matches “payroll antarctica” in this pack. Try other words"
    )
    assert 'class="hit"' not in body  # never the nearest unrelated passages (SPEC 6)


def test_a_search_whose_index_cannot_be_read_is_a_503_that_says_so(app, pack, client_as, users, caplog):
    """An unreadable Lucene index raised SearchError, which no handler mapped: every search page and the
    API answered 500. It is a 503 saying nothing was changed, as a page, a fragment and the API's JSON."""
    services.upload_file(pack, "transport.md", DOC, None)
    make_index_unreadable(app, "ops")
    app.config["PROPAGATE_EXCEPTIONS"] = False  # a 500 the way a served portal answers one
    client = client_as("Auditor")
    for address in ("/packs/ops/search?q=import+log", "/packs/ops?q=import+log", "/library/?q=import+log"):
        for headers in ({}, {"HX-Request": "true"}):
            response = client.get(address, headers=headers)
            assert (response.status_code, response.headers.get("Retry-After")) == (503, "30"), address
            body = response.get_data(as_text=True)
            assert ("<html" in body) is not bool(headers)
            assert (
                BeautifulSoup(body, "html.parser")
                .select_one(".error")
                .text.startswith("The portal cannot search its documents right now; nothing was changed.")
            )
    token = create_token(users["Auditor"], "search")[1]
    api = client_as(None).get(
        "/api/v1/search", query_string={"q": "import log", "pack": "ops"}, headers={"Authorization": f"Bearer {token}"}
    )
    assert (api.status_code, api.json["error"]["code"]) == (503, "search_unavailable")
    assert "cannot be read" in caplog.text  # the cause, for the administrator


def test_lucene_syntax_is_plain_words(app, pack, client_as):
    services.upload_file(pack, "transport.md", DOC, None)
    for query in ('STMS AND "return', "code:8 OR (import", "title:* ~ ^ [a TO z]", "\\", "-+!"):
        response = client_as("Auditor").get("/packs/ops/search", query_string={"q": query})
        assert response.status_code == 200
    assert search_packs([pack], 'STMS AND "return').hits  # words still match


def test_ranking_does_not_depend_on_other_packs(app, pack, other_pack):
    services.upload_file(pack, "transport.md", DOC, None)
    services.upload_file(pack, "other.md", b"# Other\n\nThe import of goods is logged at the gate.\n", None)
    before = [(h.passage_id, h.score) for h in search_packs([pack], "import log").hits]
    for n in range(30):
        services.upload_file(other_pack, f"noise-{n}.md", f"# Noise {n}\n\nimport import log {n}\n".encode(), None)
    after = [(h.passage_id, h.score) for h in search_packs([pack], "import log").hits]
    assert after == before
    both = search_packs([pack, other_pack], "import log", limit=50)
    assert len(both.hits) == 32


def test_at_most_three_passages_per_document_unless_only_one_matches(app, pack):
    long_doc = "# Long\n\n" + "\n\n".join(
        f"Section {n}: the spool overflow fix step {n}. " + "x " * 400 for n in range(10)
    )
    services.upload_file(pack, "long.md", long_doc.encode(), None)
    alone = search_packs([pack], "spool overflow").hits
    assert len(alone) > 3
    services.upload_file(pack, "short.md", b"# Short\n\nA spool overflow note.\n", None)
    mixed = search_packs([pack], "spool overflow").hits
    assert sum(1 for h in mixed if h.document_id == "long") == 3
    assert any(h.document_id == "short" for h in mixed)


def test_pack_page_lists_documents_and_upload_for_admins(app, pack, client_as):
    services.upload_file(pack, "transport.md", DOC, None)
    page = client_as("PlatformAdmin").get("/packs/ops").get_data(as_text=True)
    assert "Transport import failures" in page and 'type="file"' in page and "<progress" in page


def test_upload_fragment_updates_the_documents_section_and_its_count(app, pack, client_as):
    services.upload_file(pack, "archive.md", b"# Archive rules\n\nKeep logs for a year.\n", None)
    client = client_as("PlatformAdmin")
    response = upload(client, "ops", "transport.md", DOC, **{"HX-Request": "true"})
    body = response.get_data(as_text=True)
    assert "<html" not in body and "HX-Request" in response.headers["Vary"]
    fragment = BeautifulSoup(body, "html.parser")
    assert [li["class"] for li in fragment.select("li.outcome")] == [["outcome", "accepted"]]
    section = fragment.select_one("section#documents")  # swapped out of band: the heading counts the new one
    assert section["hx-swap-oob"] == "true"
    assert " ".join(section.select_one("#docs-heading").text.split()) == "Documents (2)"
    assert [a.text for a in section.select("#document-list td a")] == ["Archive rules", "Transport import failures"]


@pytest.mark.parametrize("headers", [{}, {"HX-Request": "true", "HX-Boosted": "true"}], ids=["plain", "boosted"])
def test_upload_without_htmx_shows_the_whole_pack_page(app, pack, client_as, headers):
    response = upload(client_as("PlatformAdmin"), "ops", "transport.md", DOC, **headers)
    page = BeautifulSoup(response.get_data(as_text=True), "html.parser")
    assert page.select_one("html") is not None and page.select_one("#upload-outcomes li.outcome.accepted")
    assert len(page.select("section#documents")) == 1 and not page.select("[hx-swap-oob]")
    assert " ".join(page.select_one("#docs-heading").text.split()) == "Documents (1)"


def test_create_pack_form_errors_keep_input(app, client_as, users):
    admin = client_as("PlatformAdmin")
    response = admin.post("/packs/", data={"slug": "Bad Slug", "title": "My title", "kind": "generic"})
    assert response.status_code == 422
    body = response.get_data(as_text=True)
    assert "lowercase letters" in body and 'value="My title"' in body
    response = admin.post("/packs/", data={"slug": "acme-fds", "title": "Acme", "kind": "company"})
    assert "Choose the company whose material this company pack holds" in response.get_data(as_text=True)


@pytest.mark.parametrize(
    "data, field",
    [
        ({"slug": "Bad Slug", "title": "My title"}, "slug"),
        ({"slug": "ops", "title": "Again"}, "slug"),
        ({"slug": "fresh", "title": " "}, "title"),
        ({"slug": "fresh", "title": "Acme", "kind": "company"}, "company"),
        ({"slug": "fresh", "title": "Acme", "kind": "neither"}, "kind"),
    ],
)
def test_a_refused_new_pack_marks_its_field_and_puts_the_focus_there(pack, client_as, data, field):
    response = client_as("PlatformAdmin").post("/packs/", data={"kind": "generic", **data})
    assert response.status_code == 422
    form = BeautifulSoup(response.get_data(as_text=True), "html.parser").select_one("details.card")
    assert form.has_attr("open")
    invalid = form.select("[aria-invalid]")
    assert [element["id"] for element in invalid] == [field] and invalid[0]["aria-invalid"] == "true"
    assert [element["id"] for element in form.select("[autofocus]")] == [field]  # the page reloads at its top
    described = invalid[0]["aria-describedby"].split()
    assert described[-1] == f"{field}-error" and form.select_one(f"#{field}-error").get_text(strip=True)
    assert all(form.select_one(f"#{name}") for name in described)
    assert len(form.select(".error")) == 1  # said once, under its field


def test_alternating_pack_sets_each_search_their_own_readers(app, pack, other_pack):
    """Searchers over different pack sets are cached side by side; none may answer for another."""
    for n in range(5):
        services.upload_file(pack, f"ops-{n}.md", f"# Ops {n}\n\nspool overflow note {n}\n".encode(), None)
    for n in range(12):
        services.upload_file(other_pack, f"other-{n}.md", f"# Other {n}\n\nspool overflow entry {n}\n".encode(), None)
    for _ in range(3):
        only_ops = search_packs([pack], "spool overflow", limit=20).hits
        only_other = search_packs([other_pack], "spool overflow", limit=20).hits
        both = search_packs([pack, other_pack], "spool overflow", limit=20).hits
        assert {h.pack for h in only_ops} == {"ops"} and len(only_ops) == 5
        assert {h.pack for h in only_other} == {"other"} and len(only_other) == 12
        assert len(both) == 17


def test_result_sections_leave_out_the_title():
    from portal.packs.views import section

    assert section("IDoc runbook > Fix > Queue", "IDoc runbook") == "Fix > Queue"
    assert section("Other > Fix", "IDoc runbook") == "Other > Fix"


def test_breadcrumbs_end_in_the_current_page_with_no_separator_after_it(app, pack, client_as):
    services.upload_file(pack, "transport.md", DOC, None)
    client = client_as("PlatformAdmin")
    for address, trail in (
        ("/packs/ops", ["Packs", pack.title]),
        ("/packs/ops/documents/transport", ["Packs", pack.title, "Transport import failures"]),
        ("/packs/ops/edit", ["Packs", pack.title, f"Edit {pack.title}"]),
    ):
        crumbs = BeautifulSoup(client.get(address).get_data(as_text=True), "html.parser").select_one(
            "nav.crumbs[aria-label=Breadcrumb]"
        )
        items = crumbs.select("ol > li")
        assert [item.get_text(strip=True) for item in items] == trail, address
        assert [item.get("aria-current") for item in items] == [None] * (len(trail) - 1) + ["page"]
        assert all(item.a for item in items[:-1]) and items[-1].a is None  # links above, this page itself last
        assert "›" not in crumbs.get_text()  # the separators are the stylesheet's, between items only


def test_the_pack_page_lists_its_documents_a_page_at_a_time_and_an_upload_answers_with_one_page(
    app, pack, client_as, users
):
    """A pack of thousands of documents cost every view of its page, every search without JavaScript and every
    upload's answer (which shows the list again) the whole list; now one page of it."""
    from portal.packs.services import DOCUMENTS_PER_PAGE

    extra = 10
    for n in range(DOCUMENTS_PER_PAGE + extra):
        services.upload_file(pack, f"note-{n:03d}.md", f"# Note {n:03d}\n\nCheck spool queue {n}.\n".encode(), None)
    client = client_as("PlatformAdmin")

    first = BeautifulSoup(client.get("/packs/ops").get_data(as_text=True), "html.parser")
    section = first.select_one("section#documents")
    assert section.select_one("#docs-heading").text == f"Documents ({DOCUMENTS_PER_PAGE + extra})"
    assert len(section.select("#document-list tbody tr")) == DOCUMENTS_PER_PAGE
    assert section.select_one("tbody tr a").text == "Note 000"
    following = section.select_one(".pager a[rel=next]")
    assert following["href"] == following["hx-get"] == "/packs/ops?page=2"
    assert (following["hx-target"], following["hx-swap"]) == ("#documents", "outerHTML")

    swapped = client.get("/packs/ops?page=2", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "<html" not in swapped and swapped.lstrip().startswith('<section id="documents"')
    rows = BeautifulSoup(swapped, "html.parser").select("#document-list tbody tr a")
    assert [a.text for a in rows] == [f"Note {n:03d}" for n in range(DOCUMENTS_PER_PAGE, DOCUMENTS_PER_PAGE + extra)]

    # Without JavaScript a search lands on the whole page: its results, and a pager that keeps the search.
    searched = BeautifulSoup(client.get("/packs/ops?q=spool&page=2").get_data(as_text=True), "html.parser")
    assert searched.select(".hit") and len(searched.select("#document-list tbody tr")) == extra
    assert searched.select_one("#documents .pager a[rel=prev]")["href"] == "/packs/ops?q=spool&page=1"

    uploaded = client.post(
        "/packs/ops/documents",
        data={"files": (io.BytesIO(b"# Note new\n\nMore.\n"), "note-new.md")},
        headers={"HX-Request": "true"},
        content_type="multipart/form-data",
    )
    answer = BeautifulSoup(uploaded.get_data(as_text=True), "html.parser")
    listed = answer.select_one("section#documents[hx-swap-oob]")
    assert listed.select_one("#docs-heading").text == f"Documents ({DOCUMENTS_PER_PAGE + extra + 1})"
    assert len(listed.select("#document-list tbody tr")) == DOCUMENTS_PER_PAGE
