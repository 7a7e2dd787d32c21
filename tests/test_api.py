"""The JSON API over real HTTP: the app served by gunicorn, called with ``requests``.

One server for the module (its start costs a JVM): every endpoint × every
principal (a token of each staff role, of a Member, of another company's
Member, a revoked token, none, and a signed-in browser session without a
token), conflicts, refusals with the browser upload's reason codes,
pagination, the OpenAPI document, and what a token may not open. The grounding
round trip is in test_api_grounding.py; per-token rate limits start a second
server with a small limit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
from live_server import gunicorn_server, signed_in_browser
from openapi_spec_validator import validate as validate_openapi

from helpers import PASSWORD, SPOOL, migrated_app
from portal.agents.services import create_agent
from portal.api.tokens import create_token, revoke
from portal.auth.services import create_user
from portal.documents import services
from portal.models import Document, Pack, Revision
from portal.packs.services import create_pack
from resources.make_fixtures import add_picture, docx_bytes, image_bytes

TOKENS = ("admin", "builder", "auditor", "member", "other_member")
PRINCIPALS = (*TOKENS, "revoked", "none", "session")
BLOCK_PRIVATE_KEYS = [{"rule": "private_key", "decision": "block"}]  # the rest redact, as by default
TIMEOUT = 120  # seconds for one request: the first search or Word file of a busy machine
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "-----END RSA PRIVATE KEY-----\n"
)


@dataclass
class Live:
    url: str
    data: Path
    secrets: dict[str, str] = field(default_factory=dict)
    session: requests.Session | None = None

    def call(self, who: str, method: str, path: str, **kwargs) -> requests.Response:
        """``method path`` as ``who``: a token's holder, ``none``, or ``session`` (a signed-in browser)."""
        if who == "session":
            return self.session.request(method, self.url + path, timeout=TIMEOUT, allow_redirects=False, **kwargs)
        headers = dict(kwargs.pop("headers", {}))
        if who != "none":
            headers["Authorization"] = f"Bearer {self.secrets[who]}"
        return requests.request(
            method, self.url + path, headers=headers, timeout=TIMEOUT, allow_redirects=False, **kwargs
        )


def monitoring_docx() -> bytes:
    def build(document):
        document.add_heading("Interface monitoring", level=1)
        document.add_paragraph("Check the IDoc monitor every morning before eight.")
        add_picture(document, image_bytes(120, 80), alt="Red status lamp")

    return docx_bytes(build)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    data = tmp_path_factory.mktemp("api") / "data"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("portal.auth.services.PASSWORD_HASH_METHOD", "pbkdf2:sha256:1000")
        with migrated_app(data, CAIRN_CLASSIFICATION_POLICY=BLOCK_PRIVATE_KEYS):
            people = {
                "admin": create_user("admin@example.test", PASSWORD, {"PlatformAdmin"}),
                "builder": create_user("builder@example.test", PASSWORD, {"AgentBuilder"}),
                "auditor": create_user("auditor@example.test", PASSWORD, {"Auditor"}),
                "member": create_user("member@acme.test", PASSWORD, {"Member"}, "Acme"),
                "other_member": create_user("member@globex.test", PASSWORD, {"Member"}, "Globex"),
            }
            create_pack("ops", "Operations")
            create_pack("paged", "Paged")
            create_agent(
                None, "acme-desk", "Acme desk", "preferred", "Acme", pack_slugs=["ops"], offered=True, add_company=True
            )
            create_agent(
                None,
                "globex-desk",
                "Globex desk",
                "preferred",
                "Globex",
                pack_slugs=["ops"],
                offered=True,
                add_company=True,
            )
            live = Live("", data)
            live.secrets = {who: create_token(user, f"{who} token")[1] for who, user in people.items()}
            revoked, live.secrets["revoked"] = create_token(people["admin"], "revoked token")
            revoke(revoked, None)
            with gunicorn_server(
                data, CAIRN_CLASSIFICATION_POLICY=json.dumps(BLOCK_PRIVATE_KEYS), CAIRN_API_RATE_LIMIT="100000 per hour"
            ) as url:
                live.url = url
                live.session = signed_in_browser(url, "admin@example.test")
                _seed_documents(live)
                yield live


def _seed_documents(live: Live) -> None:
    def put(doc_id, **body):
        response = live.call("admin", "PUT", f"/api/v1/packs/ops/documents/{doc_id}", json=body)
        assert response.status_code == 201, response.text

    put("runbook", expected_version=0, text=SPOOL.decode())
    put("for-auditors", expected_version=0, text="# Auditors\n\nThe spool audit trail.\n", reader_roles=["Auditor"])
    response = live.call(
        "admin",
        "PUT",
        "/api/v1/packs/ops/documents/monitoring",
        data={"expected_version": "0"},
        files={
            "file": (
                "monitoring.docx",
                monitoring_docx(),
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            )
        },
    )
    assert response.status_code == 201, response.text
    assert response.json()["images_kept"] == 1


def statuses(**given: int) -> dict[str, int]:
    """Expected status per principal: staff read (200), Members see nothing (404), no valid token (401)."""
    expected = {
        "admin": 200,
        "builder": 200,
        "auditor": 200,
        "member": 404,
        "other_member": 404,
        "revoked": 401,
        "none": 401,
        "session": 401,
    }
    expected.update(given)
    return expected


ASK = {"question": "How do I delete old spool requests?"}
MATRIX = [
    ("GET", "/api/v1/packs", None, statuses(member=200, other_member=200)),
    ("GET", "/api/v1/packs/ops/documents", None, statuses()),
    ("GET", "/api/v1/packs/ops/documents/runbook", None, statuses()),
    ("GET", "/api/v1/packs/ops/documents/runbook?version=1", None, statuses()),
    ("GET", "/api/v1/packs/ops/documents/for-auditors", None, statuses(builder=404)),
    ("GET", "/api/v1/packs/ops/documents/monitoring/versions/1/figures/1", None, statuses()),
    (
        "PUT",
        "/api/v1/packs/ops/documents/new-{who}",
        {"expected_version": 0, "text": "# New\n\nA note.\n"},
        statuses(admin=201, builder=404, auditor=404),
    ),
    (
        "DELETE",
        "/api/v1/packs/ops/documents/runbook",
        {"expected_version": 99},
        statuses(admin=409, builder=404, auditor=404),
    ),
    ("GET", "/api/v1/search?q=spool", None, statuses(member=200, other_member=200)),
    ("GET", "/api/v1/search?q=spool&pack=ops", None, statuses()),
    ("POST", "/api/v1/agents/acme-desk/ask", ASK, statuses(member=200)),
    ("POST", "/api/v1/agents/globex-desk/ask", ASK, statuses(other_member=200)),
    ("GET", "/api/v1/packs/missing/documents", None, statuses(admin=404, builder=404, auditor=404)),
    ("GET", "/api/v1/openapi.json", None, {who: 200 for who in PRINCIPALS}),
]


@pytest.mark.parametrize("who", PRINCIPALS)
@pytest.mark.parametrize("method, path, body, expected", MATRIX, ids=[f"{m} {p}" for m, p, _, _ in MATRIX])
def test_every_endpoint_for_every_principal(live, who, method, path, body, expected):
    response = live.call(who, method, path.format(who=who), json=body)
    assert response.status_code == expected[who], response.text
    assert response.headers["Cache-Control"] == "no-store"
    assert "Set-Cookie" not in response.headers
    if response.status_code >= 400:
        error = response.json()["error"]
        assert set(error) >= {"code", "message"} and error["message"]
        assert error["code"] == {401: "unauthorized", 404: "not_found", 409: "version_conflict"}[response.status_code]
    if response.status_code == 401:
        assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_a_search_as_long_as_allowed_reaches_the_portal_through_gunicorn(live):
    """2,000 characters percent-encoded are longer than gunicorn's default request line: it answered with its own
    bare 414 page; ``cairn serve`` allows as long a line as gunicorn can (found by a hostile-input probe)."""
    response = live.session.get(f"{live.url}/library/", params={"q": "\\" * 1999})
    assert response.status_code == 200 and "Library" in response.text


def test_a_member_sees_no_pack_and_finds_nothing(live):
    assert live.call("member", "GET", "/api/v1/packs").json() == {"packs": []}
    found = live.call("member", "GET", "/api/v1/search?q=spool").json()
    assert (found["hits"], found["no_evidence"]) == ([], True)
    assert live.call("admin", "GET", "/api/v1/search?q=spool").json()["hits"]


def test_hidden_and_missing_look_the_same(live):
    hidden = live.call("member", "GET", "/api/v1/packs/ops/documents")
    missing = live.call("member", "GET", "/api/v1/packs/missing/documents")
    assert (hidden.status_code, hidden.content) == (missing.status_code, missing.content)
    restricted = live.call("builder", "GET", "/api/v1/packs/ops/documents/for-auditors")
    absent = live.call("builder", "GET", "/api/v1/packs/ops/documents/absent")
    assert (restricted.status_code, restricted.content) == (absent.status_code, absent.content)
    listed = live.call("builder", "GET", "/api/v1/packs/ops/documents").json()["documents"]
    assert "for-auditors" not in {d["id"] for d in listed}


def test_a_token_opens_no_page_and_a_session_no_api(live):
    for path in ("/packs/", "/packs/ops", "/account/", "/runs/"):
        response = live.call("admin", "GET", path)
        assert response.status_code == 302 and "/login" in response.headers["Location"], path
    assert live.call("session", "GET", "/packs/").status_code == 200  # the same session does open pages
    response = live.call(
        "session",
        "PUT",
        "/api/v1/packs/ops/documents/by-cookie",
        json={"expected_version": 0, "text": "# Cookie\n\nno.\n"},
    )
    assert (response.status_code, response.json()["error"]["code"]) == (401, "unauthorized")
    for scheme in ("Basic", "Token", "bearer"):
        response = live.call(
            "none", "GET", "/api/v1/packs", headers={"Authorization": f"{scheme} {live.secrets['admin']}"}
        )
        assert response.status_code == (200 if scheme == "bearer" else 401), scheme


def test_a_document_reads_with_its_hash_figures_and_reader_access(live):
    body = live.call("auditor", "GET", "/api/v1/packs/ops/documents/monitoring").json()
    assert (body["id"], body["kind"], body["version"], body["current_version"]) == ("monitoring", "docx", 1, 1)
    assert body["visibility"] == "staff" and body["reader_roles"] == [] and not body["redacted"]
    assert [(f["number"], f["label"]) for f in body["figures"]] == [(1, "Red status lamp")]
    image = live.call("auditor", "GET", body["figures"][0]["url"])
    assert (image.status_code, image.headers["Content-Type"], image.content[:4]) == (200, "image/webp", b"RIFF")
    assert live.call("member", "GET", body["figures"][0]["url"]).status_code == 404
    runbook = live.call("admin", "GET", "/api/v1/packs/ops/documents/runbook").json()
    assert runbook["text"] == SPOOL.decode() and runbook["title"] == "Spool overflow runbook"
    plain = live.call("admin", "GET", "/api/v1/packs/ops/documents/runbook", headers={"Accept": "text/plain"})
    assert plain.content == SPOOL and plain.headers["ETag"] == f'"{runbook["sha256"]}"'
    for version in (0, 2, "x"):
        response = live.call("admin", "GET", f"/api/v1/packs/ops/documents/runbook?version={version}")
        assert response.status_code == (404 if version == 2 else 400), version


@pytest.mark.parametrize("value", ["0", "999999", "99999999999999999999", "-1", "\u00b2"])
def test_a_number_in_the_path_that_names_nothing_is_a_404(live, value):
    for path in (
        f"/api/v1/packs/ops/documents/monitoring/versions/{value}/figures/1",
        f"/api/v1/packs/ops/documents/monitoring/versions/1/figures/{value}",
    ):
        response = live.call("admin", "GET", path)
        assert (response.status_code, response.json()["error"]["code"]) == (404, "not_found"), path


def test_a_new_document_id_in_capitals_is_refused_naming_the_lower_case_one(live):
    """An id made from a file name is lower case: "Pump" beside "pump" was a document no upload could reach."""
    refused = live.call("admin", "PUT", "/api/v1/packs/ops/documents/Pump", json={"expected_version": 0, "text": "x"})
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "bad_name")
    assert "lower case, as the ids made from file names are: 'pump'" in refused.json()["error"]["message"]
    assert live.call("admin", "GET", "/api/v1/packs/ops/documents/Pump").status_code == 404  # nothing stored
    created = live.call("admin", "PUT", "/api/v1/packs/ops/documents/pump", json={"expected_version": 0, "text": "x"})
    assert created.status_code == 201


def test_versioned_writes_and_conflicts(live):
    path = "/api/v1/packs/ops/documents/versioned"
    first = live.call(
        "admin", "PUT", path, json={"expected_version": 0, "text": "# V\n\none\n", "visibility": "shared"}
    )
    assert (first.status_code, first.json()["version"], first.json()["visibility"]) == (201, 1, "shared")
    again = live.call("admin", "PUT", path, json={"expected_version": 0, "text": "# V\n\nother\n"})
    assert again.status_code == 409 and again.json()["error"]["current_version"] == 1
    # creating a document that exists is said as such: nothing was "edited"
    assert again.json()["error"]["message"].startswith(
        "This document already exists, at version 1, and you asked to create it. Nothing was saved"
    )
    second = live.call(
        "admin", "PUT", path, json={"expected_version": 1, "text": "# V\n\ntwo\n", "reader_roles": ["Auditor"]}
    )
    assert second.status_code == 200
    assert (second.json()["version"], second.json()["visibility"], second.json()["reader_roles"]) == (
        2,
        "shared",
        ["Auditor"],
    )
    same = live.call("admin", "PUT", path, json={"expected_version": 2, "text": "# V\n\ntwo\n"})
    assert (same.status_code, same.json()["unchanged"], same.json()["version"]) == (200, True, 2)
    stale = live.call("admin", "PUT", path, json={"expected_version": 1, "text": "# V\n\nthree\n"})
    assert (stale.status_code, stale.json()["error"]["current_version"]) == (409, 2)
    assert live.call("admin", "GET", path).json()["text"] == "# V\n\ntwo\n"  # the conflict changed nothing

    stale_delete = live.call("admin", "DELETE", path, json={"expected_version": 1})
    assert (stale_delete.status_code, stale_delete.json()["error"]["current_version"]) == (409, 2)
    deleted = live.call("admin", "DELETE", path, json={"expected_version": 2})
    assert deleted.status_code == 200 and deleted.json() == {"pack": "ops", "id": "versioned", "deleted": True}
    assert live.call("admin", "GET", path).status_code == 404
    reused = live.call("admin", "PUT", path, json={"expected_version": 0, "text": "# V\n\nback\n"})
    assert (reused.status_code, reused.json()["error"]["code"]) == (422, "id_reused")


@pytest.mark.parametrize(
    "method, path, body, field_named",
    [
        ("GET", "/api/v1/packs/ops/documents/monitoring?version=99999999999999999999", None, "version"),
        (
            "DELETE",
            "/api/v1/packs/ops/documents/monitoring",
            {"expected_version": 99999999999999999999},
            "expected_version",
        ),
        ("PUT", "/api/v1/packs/ops/documents/monitoring", {"expected_version": 2**31, "text": "x"}, "expected_version"),
        ("GET", "/api/v1/packs/ops/documents?page=99999999999999999999", None, "page"),
    ],
    ids=["version", "delete", "put", "page"],
)
def test_a_number_beyond_the_databases_range_is_400_naming_it(live, method, path, body, field_named):
    """A version past the widest database integer reached a query and answered an HTML 500 (``OverflowError``)."""
    response = live.call("admin", method, path, json=body)
    assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_request"), response.text
    assert field_named in response.json()["error"]["message"]
    assert live.call("admin", "GET", "/api/v1/packs/ops/documents/monitoring").status_code == 200


BAD_REQUESTS = [
    ({"text": "# No version\n"}, "expected_version"),
    ({"expected_version": -1, "text": "x"}, "expected_version"),
    ({"expected_version": 0, "text": "x", "visibility": "everyone"}, "visibility"),
    ({"expected_version": 0, "text": "x", "reader_roles": ["Guest"]}, "reader_roles"),
    ({"expected_version": 0, "text": "x", "unknown": 1}, "unknown"),
]


@pytest.mark.parametrize("body, field_named", BAD_REQUESTS, ids=[b[1] for b in BAD_REQUESTS])
def test_a_body_of_the_wrong_shape_is_400_naming_the_field(live, body, field_named):
    response = live.call("admin", "PUT", "/api/v1/packs/ops/documents/shape", json=body)
    assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_request")
    assert field_named in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "data, files, field_named",
    [
        ({"expected_version": "0", "visiblity": "shared"}, {}, "visiblity"),
        ({"expected_version": "0"}, {"attachment": ("x.md", b"# X\n", "text/markdown")}, "attachment"),
        # the file sent as a text field (curl -F 'file=<x.md'): named, not a bare "could not understand"
        ({"expected_version": "0"}, {"file": (None, b"# Shape\n")}, "file: send the file as a file part"),
    ],
)
def test_a_multipart_field_the_shape_does_not_know_is_400_naming_it(live, data, files, field_named):
    """A typo'd field was dropped unread: the document was stored with the pack's default visibility."""
    files = {"file": ("shape.md", b"# Shape\n\nText.\n", "text/markdown"), **files}
    response = live.call("admin", "PUT", "/api/v1/packs/ops/documents/shape", data=data, files=files)
    assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_request")
    assert field_named in response.json()["error"]["message"]
    assert not Document.select().where(Document.doc_id == "shape").exists()


def test_a_boolean_is_not_a_version(live):
    """pydantic read ``true`` as version 1 and ``false`` as 0: a stale client's flag overwrote, deleted or created."""
    path = "/api/v1/packs/ops/documents/flagged"
    assert live.call("admin", "PUT", path, json={"expected_version": 0, "text": "# F\n\none\n"}).status_code == 201
    for method, body in (
        ("PUT", {"expected_version": True, "text": "# F\n\ntwo\n"}),
        ("DELETE", {"expected_version": True}),
    ):
        response = live.call("admin", method, path, json=body)
        assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_request"), response.text
        assert "expected_version" in response.json()["error"]["message"]
    assert live.call("admin", "GET", path).json()["text"] == "# F\n\none\n"
    new = live.call("admin", "PUT", path + "-new", json={"expected_version": False, "text": "# New\n"})
    assert (new.status_code, new.json()["error"]["code"]) == (400, "invalid_request"), new.text
    assert live.call("admin", "GET", path + "-new").status_code == 404


# A whole number in JSON is a JSON integer; in a query string or a multipart form it is ASCII digits
# (portal/numbers.py), which pydantic alone widened to " 1", "+1", "1_0" and "1.0".
STRICT = "/api/v1/packs/ops/documents/strict"
NOT_WHOLE_NUMBERS = [
    ("json string", "PUT", STRICT, {"json": {"expected_version": "0", "text": "x"}}, "expected_version"),
    ("json float", "PUT", STRICT, {"json": {"expected_version": 0.0, "text": "x"}}, "expected_version"),
    ("form true", "PUT", STRICT, {"data": {"expected_version": "true"}}, "expected_version"),
    ("form sign", "PUT", STRICT, {"data": {"expected_version": "+0"}}, "expected_version"),
    ("form space", "PUT", STRICT, {"data": {"expected_version": " 0"}}, "expected_version"),
    ("form underscore", "PUT", STRICT, {"data": {"expected_version": "0_0"}}, "expected_version"),
    ("form point", "PUT", STRICT, {"data": {"expected_version": "0.0"}}, "expected_version"),
    ("page", "GET", "/api/v1/packs/ops/documents?page=1_0", {}, "page"),
    ("per_page", "GET", "/api/v1/packs/ops/documents?per_page=%2B2", {}, "per_page"),
    ("version", "GET", "/api/v1/packs/ops/documents/runbook?version=1.0", {}, "version"),
    ("limit", "GET", "/api/v1/search?q=spool&limit=%202", {}, "limit"),
]


@pytest.mark.parametrize(
    "method, path, request_kwargs, field_named",
    [n[1:] for n in NOT_WHOLE_NUMBERS],
    ids=[n[0] for n in NOT_WHOLE_NUMBERS],
)
def test_a_whole_number_written_otherwise_is_400_naming_the_field(live, method, path, request_kwargs, field_named):
    if "data" in request_kwargs:
        request_kwargs = {**request_kwargs, "files": {"file": ("strict.md", b"# Strict\n", "text/markdown")}}
    response = live.call("admin", method, path, **request_kwargs)
    assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_request"), response.text
    assert field_named in response.json()["error"]["message"]
    assert live.call("admin", "GET", STRICT).status_code == 404


# (API request, the same file as a browser upload's name, bytes and content type)
REFUSALS = [
    ("empty", {"json": {"expected_version": 0, "text": " \n\t\n"}}, ("refused.md", b" \n\t\n", "text/markdown")),
    (
        "too_many_chars",
        {"json": {"expected_version": 0, "text": "a" * 400_001}},
        ("refused.md", b"a" * 400_001, "text/markdown"),
    ),
    (
        "classification_blocked",
        {"json": {"expected_version": 0, "text": f"# Key\n\n{PRIVATE_KEY}"}},
        ("refused.md", f"# Key\n\n{PRIVATE_KEY}".encode(), "text/markdown"),
    ),
    (
        "unsupported_type",
        {"data": {"expected_version": "0"}, "files": {"file": ("old.doc", b"\xd0\xcf\x11\xe0", "application/msword")}},
        ("refused.doc", b"\xd0\xcf\x11\xe0", "application/msword"),
    ),
    (
        "type_mismatch",
        {"data": {"expected_version": "0"}, "files": {"file": ("manual.pdf", b"%PDF-1.4\n", "application/msword")}},
        ("refused.pdf", b"%PDF-1.4\n", "application/msword"),
    ),
]


@pytest.mark.parametrize("reason, request_kwargs, as_browser", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals_carry_the_browser_uploads_reason_and_store_nothing(live, reason, request_kwargs, as_browser):
    name, data, content_type = as_browser
    browser = services.upload_file(Pack.get(Pack.slug == "ops"), name, data, None, content_type)
    assert browser.refused is not None and browser.refused.reason == reason
    before = (Document.select().count(), Revision.select().count())
    response = live.call("admin", "PUT", "/api/v1/packs/ops/documents/refused", **request_kwargs)
    assert response.status_code == 422, response.text
    assert response.json()["error"] == {"code": reason, "message": browser.refused.message}
    assert (Document.select().count(), Revision.select().count()) == before


@pytest.mark.parametrize("length", [81, 253, 300])
def test_a_document_id_too_long_is_refused_as_an_id_not_as_a_file_name(live, length):
    """No file was sent: a 253-character id got "The file name has 256 characters" (found by an attack probe)."""
    doc_id = "a" * length
    response = live.call(
        "admin", "PUT", f"/api/v1/packs/ops/documents/{doc_id}", json={"expected_version": 0, "text": "hi"}
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"]["message"].startswith("A document id has 1–80 letters")
    assert not Document.select().where(Document.doc_id == doc_id).exists()


def test_a_body_over_the_upload_limit_is_413_and_other_media_415(live):
    too_big = live.call(
        "admin",
        "PUT",
        "/api/v1/packs/ops/documents/big",
        data={"expected_version": "0"},
        files={"file": ("big.txt", b"a" * (5 * 1024 * 1024), "text/plain")},
    )
    assert (too_big.status_code, too_big.json()["error"]["code"]) == (413, "too_large")
    form = live.call("admin", "POST", "/api/v1/agents/acme-desk/ask", data={"question": "spool"})
    assert (form.status_code, form.json()["error"]["code"]) == (415, "unsupported_media_type")


def test_a_credential_is_redacted_as_in_the_browser(live):
    text = "# Connect\n\nDATABASE_URL=postgres://app:s3cr3tPa55@db.internal:5432/app\n"
    response = live.call(
        "admin", "PUT", "/api/v1/packs/ops/documents/connect", json={"expected_version": 0, "text": text}
    )
    assert response.status_code == 201 and response.json()["redacted"] is True
    stored = live.call("admin", "GET", "/api/v1/packs/ops/documents/connect").json()["text"]
    assert "s3cr3tPa55" not in stored and "[REDACTED:credential]" in stored


def test_documents_come_a_page_at_a_time(live):
    for n in range(5):
        response = live.call(
            "admin",
            "PUT",
            f"/api/v1/packs/paged/documents/note-{n}",
            json={"expected_version": 0, "text": f"# Note {4 - n}\n\nText {n}.\n"},
        )
        assert response.status_code == 201
    seen, address = [], "/api/v1/packs/paged/documents?per_page=2"
    while address:
        page = live.call("auditor", "GET", address).json()
        assert page["total"] == 5 and len(page["documents"]) <= 2
        seen += [d["title"] for d in page["documents"]]
        address = page["next"]
    assert seen == [f"Note {n}" for n in range(5)]
    beyond = live.call("auditor", "GET", "/api/v1/packs/paged/documents?page=9").json()
    assert (beyond["documents"], beyond["next"], beyond["total"]) == ([], None, 5)
    # one message for every number out of place, naming the field's own bounds ("page=0" said pydantic's words)
    for bad, named in (
        ("per_page=0", "per_page: Value error, must be a whole number from 1 to 200"),
        ("per_page=201", "per_page: Value error, must be a whole number from 1 to 200"),
        ("page=0", "page: Value error, must be a whole number from 1 to 2,147,483,647"),
        ("page=-1", "page: Value error, must be a whole number from 1 to 2,147,483,647"),
    ):
        response = live.call("auditor", "GET", f"/api/v1/packs/paged/documents?{bad}")
        assert response.status_code == 400 and response.json()["error"]["message"].startswith(named), bad


def test_an_answer_carries_its_references_and_citations(live):
    run = live.call("member", "POST", "/api/v1/agents/acme-desk/ask", json=ASK).json()
    assert run["status"] in ("completed", "completed_with_warning") and "RSPO1041" in run["answer"]
    assert run["answer_format"] == "text"  # no model configured: the extractive answer, the documents' text
    assert run["cited"] and [c["n"] for c in run["document_citations"]] == run["cited"]
    first = run["references"][0]
    assert first["pack"] == "ops" and first["grounding"].startswith(f"document:{first['document_id']}@")
    refused = live.call("member", "POST", "/api/v1/agents/acme-desk/ask", json={"question": " "})
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "empty_question")


def test_the_openapi_document_is_valid_31_and_describes_every_route(live):
    document = live.call("none", "GET", "/api/v1/openapi.json").json()
    validate_openapi(document)
    assert document["openapi"] == "3.1.0"
    operations = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    assert operations == {
        ("GET", "/openapi.json"),
        ("GET", "/packs"),
        ("GET", "/packs/{slug}/documents"),
        ("GET", "/packs/{slug}/documents/{doc_id}"),
        ("PUT", "/packs/{slug}/documents/{doc_id}"),
        ("DELETE", "/packs/{slug}/documents/{doc_id}"),
        ("GET", "/packs/{slug}/documents/{doc_id}/versions/{version}/figures/{number}"),
        ("GET", "/search"),
        ("POST", "/agents/{slug}/ask"),
    }
    put = document["paths"]["/packs/{slug}/documents/{doc_id}"]["put"]
    assert set(put["requestBody"]["content"]) == {"application/json", "multipart/form-data"}
    write = document["components"]["schemas"]["DocumentWrite"]
    assert write["properties"]["visibility"]["anyOf"][0]["enum"] == ["staff", "shared", "company"]
    assert {"409", "422", "401", "429"} <= set(put["responses"])


def test_per_token_rate_limits_answer_429_with_retry_after(live):
    # A second server on the same data with a limit small enough to reach; the window starts at a
    # token's first request, so the count does not depend on the clock.
    with gunicorn_server(live.data, CAIRN_API_RATE_LIMIT="3 per hour", CAIRN_REPAIR_INDEX_ON_START="false") as url:
        limited = Live(url, live.data, live.secrets)
        assert [limited.call("auditor", "GET", "/api/v1/packs").status_code for _ in range(3)] == [200] * 3
        over = limited.call("auditor", "GET", "/api/v1/packs")
        assert (over.status_code, over.json()["error"]["code"]) == (429, "rate_limited")
        assert 0 < int(over.headers["Retry-After"]) <= 3600 + 1  # the limiter keeps whole seconds
        assert limited.call("builder", "GET", "/api/v1/packs").status_code == 200  # another token counts apart
