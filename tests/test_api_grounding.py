"""Grounding references checked as a client checks them, over HTTP against gunicorn.

Each citation of an answer (and each search hit) names
``document:<id>@<version>#<sha256>:L<start>-L<end>``; the client fetches that
revision with ``?version=N``, hashes it and reads the lines. The reference must
keep verifying after the document changes, while its revision is kept, and read
as purged afterwards; the run record's Sources show it too.
"""

from __future__ import annotations

import hashlib
import re

import pytest
import requests
from live_server import gunicorn_server, signed_in_browser

from helpers import PASSWORD, SPOOL, migrated_app
from portal.agents.services import create_agent
from portal.api.tokens import create_token
from portal.auth.services import create_user
from portal.models import REVISIONS_KEPT
from portal.packs.services import create_pack

QUESTION = {"question": "How do I delete old spool requests?"}
# What a client writes, knowing only the documented format (not the portal's own parser).
REFERENCE = re.compile(r"document:([A-Za-z0-9][A-Za-z0-9._-]*)@(\d+)#([0-9a-f]{64}):L(\d+)-L(\d+)")
PREAMBLE = "# Spool overflow runbook\n\nRead this first: the spool holds printed output until it is sent.\n\n"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    data = tmp_path_factory.mktemp("grounding") / "data"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("portal.auth.services.PASSWORD_HASH_METHOD", "pbkdf2:sha256:1000")
        with migrated_app(data):
            admin = create_user("admin@example.test", PASSWORD, {"PlatformAdmin"})
            create_pack("ops", "Operations")
            create_agent(None, "helper", "Helper", "required", pack_slugs=["ops"])
            secret = create_token(admin, "grounding")[1]
            with gunicorn_server(data) as url:
                session = requests.Session()
                session.headers["Authorization"] = f"Bearer {secret}"
                yield url, session


def verify(url: str, session: requests.Session, pack: str, grounding: str, quoted: str) -> None:
    """Fetch the named revision, check its SHA-256 and that its lines hold the quoted passage."""
    doc_id, version, sha256, start, end = REFERENCE.fullmatch(grounding).groups()
    address = f"{url}/api/v1/packs/{pack}/documents/{doc_id}?version={version}"
    text = session.get(address, headers={"Accept": "text/plain"}, timeout=60)
    assert text.status_code == 200, text.text
    assert hashlib.sha256(text.content).hexdigest() == sha256
    as_json = session.get(address, timeout=60).json()
    assert (as_json["sha256"], as_json["version"], as_json["text"].encode()) == (sha256, int(version), text.content)
    lines = text.content.decode("utf-8").splitlines()[int(start) - 1 : int(end)]
    assert quoted.strip() in "\n".join(lines)


def ask(url, session) -> dict:
    run = session.post(f"{url}/api/v1/agents/helper/ask", json=QUESTION, timeout=120)
    assert run.status_code == 200, run.text
    return run.json()


def put(url, session, text: str, expected_version: int) -> dict:
    response = session.put(
        f"{url}/api/v1/packs/ops/documents/spool",
        timeout=120,
        json={"expected_version": expected_version, "text": text},
    )
    assert response.status_code in (200, 201), response.text
    return response.json()


def test_citations_verify_against_their_revision_before_and_after_it_changed(api):
    url, session = api
    put(url, session, SPOOL.decode(), 0)
    first = ask(url, session)
    assert first["document_citations"], first
    quoted = {ref["n"]: ref["text"] for ref in first["references"]}
    for citation in first["document_citations"]:
        assert citation["version"] == 1 and citation["sha256"] == hashlib.sha256(SPOOL).hexdigest()
        verify(url, session, citation["pack"], citation["grounding"], quoted[citation["n"]])

    # The document changes: new lines above move every passage down.
    changed = PREAMBLE + SPOOL.decode().split("\n", 1)[1]
    assert put(url, session, changed, 1)["version"] == 2
    for citation in first["document_citations"]:  # the old reference still verifies against version 1
        verify(url, session, citation["pack"], citation["grounding"], quoted[citation["n"]])
    second = ask(url, session)
    moved = {c["grounding"] for c in second["document_citations"]}
    assert all("@2#" in g for g in moved) and moved.isdisjoint(c["grounding"] for c in first["document_citations"])
    for citation in second["document_citations"]:
        verify(
            url,
            session,
            citation["pack"],
            citation["grounding"],
            next(r["text"] for r in second["references"] if r["n"] == citation["n"]),
        )

    found = session.get(f"{url}/api/v1/search", params={"q": "RSPO1041", "pack": "ops"}, timeout=60).json()
    assert found["hits"]
    for hit in found["hits"]:
        verify(url, session, hit["pack"], hit["grounding"], hit["text"])

    # Once REVISIONS_KEPT newer revisions exist, version 1 is purged: its reference reads as purged.
    for version in range(2, REVISIONS_KEPT + 1):
        put(url, session, f"{changed}\nRevision note {version + 1}.\n", version)
    gone = session.get(f"{url}/api/v1/packs/ops/documents/spool?version=1", timeout=60)
    assert (gone.status_code, gone.json()["error"]["code"]) == (404, "revision_purged")
    for citation in second["document_citations"]:  # version 2 is still kept
        verify(
            url,
            session,
            citation["pack"],
            citation["grounding"],
            next(r["text"] for r in second["references"] if r["n"] == citation["n"]),
        )

    browser = signed_in_browser(url, "admin@example.test")
    record = browser.get(f"{url}/runs/{first['run_id']}", timeout=60).text
    for citation in first["document_citations"]:
        assert citation["grounding"] in record
    assert "version 1 is no longer kept (purged)" in record
    assert "no longer kept" not in browser.get(f"{url}/runs/{second['run_id']}", timeout=60).text
