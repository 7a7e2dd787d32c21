"""A NUL character in an address, a query string, a form or a JSON body (portal/request_text.py).

PostgreSQL cannot hold U+0000 in text: each of these reached a query or an insert there and
answered 500 (SQLite stored it). An address holding one is the 404 of a missing page; any
other value is a 400 naming where it was, and nothing changes.
"""

from __future__ import annotations

import urllib.parse

import pytest

from helpers import login
from portal.agents.services import create_agent
from portal.api.tokens import create_token
from portal.auth.services import create_user
from portal.chat.services import start_conversation
from portal.controls import BIDI_REORDERING
from portal.documents import services as documents
from portal.feedback.services import rate_answer
from portal.models import Agent, AuditLog, Conversation, Document, Feedback, Pack, Revision, Run

NUL_TEXT = "before\x00after"


@pytest.fixture
def world(app, pack, users):
    """A document, a Member's answer citing it and their Not helpful rating."""
    documents.upload_file(pack, "gauge.md", b"# Gauge\n\nCalibrate the zorblax gauge every shift.\n", None)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    conversation, run = start_conversation(users["Member"], agent, "How do I calibrate the zorblax gauge?")
    feedback = rate_answer(users["Member"], run, "not_helpful", ["incorrect"], "")
    return conversation, run, feedback


def _changes():
    """What a refused request must leave as it was."""
    document = Document.get(Document.doc_id == "gauge")
    return (
        Pack.select().count(),
        Run.select().count(),
        Conversation.select().count(),
        AuditLog.select().count(),
        document.current_version,
        document.title,
        [(f.note, f.status, f.reviewer_note) for f in Feedback.select().order_by(Feedback.id)],
    )


FORMS = [
    ("PlatformAdmin", "/packs/", {"slug": "nul", "title": NUL_TEXT, "kind": "generic"}, "title"),
    ("PlatformAdmin", "/packs/ops/edit", {"title": "Operations", "description": NUL_TEXT}, "description"),
    (
        "PlatformAdmin",
        "/packs/ops/documents/gauge/edit",
        {"title": "Gauge", "text": NUL_TEXT, "expected_version": "1"},
        "text",
    ),
    ("PlatformAdmin", "/packs/ops/documents/gauge/edit", {"title": NUL_TEXT, "expected_version": "1"}, "title"),
    ("AgentBuilder", "/agents/", {"slug": "nul-agent", "name": NUL_TEXT, "mode": "open"}, "name"),
    ("AgentBuilder", "/agents/acme-desk/try", {"question": NUL_TEXT}, "question"),
    ("Member", "/chat/", {"agent": "acme-desk", "question": NUL_TEXT}, "question"),
    ("Member", "/chat/{conversation}", {"question": NUL_TEXT}, "question"),
    ("Member", "/chat/answers/{run}/feedback", {"rating": "not_helpful", "reasons": "other", "note": NUL_TEXT}, "note"),
    ("Auditor", "/feedback/{feedback}/triage", {"status": "in_review", "reviewer_note": NUL_TEXT}, "reviewer_note"),
    ("Auditor", "/feedback/{feedback}/cases", {"pack": "ops", "doc_id": "gauge\x00"}, "doc_id"),
]


@pytest.mark.parametrize("who, address, form, field", FORMS, ids=[f"{f[1]} {f[3]}" for f in FORMS])
def test_a_form_field_holding_a_nul_is_a_400_naming_it_and_changes_nothing(world, client_as, who, address, form, field):
    conversation, run, feedback = world
    before = _changes()
    response = client_as(who).post(
        address.format(conversation=conversation.id, run=run.id, feedback=feedback.id), data=form
    )
    assert response.status_code == 400
    assert f"The form field &#39;{field}&#39; holds a NUL character (U+0000)" in response.get_data(as_text=True)
    assert _changes() == before


@pytest.mark.parametrize(
    "who, address, parameter",
    [
        ("Auditor", "/packs/ops/search?q=gauge%00", "q"),
        ("Auditor", "/library/?q=gauge%00", "q"),
        ("Auditor", "/feedback/?agent=acme-desk%00", "agent"),
        ("Auditor", "/packs/ops/documents/gauge?section=Gauge%00", "section"),
    ],
)
def test_a_query_parameter_holding_a_nul_is_a_400_naming_it(world, client_as, who, address, parameter):
    response = client_as(who).get(address)
    assert response.status_code == 400
    assert f"The query parameter &#39;{parameter}&#39; holds a NUL character" in response.get_data(as_text=True)


@pytest.mark.parametrize(
    "who, address",
    [
        ("Auditor", "/packs/ops%00"),
        ("Auditor", "/packs/ops/documents/gauge%00"),
        ("Member", "/chat/agents/acme-desk%00"),
    ],
)
def test_an_address_holding_a_nul_names_nothing(world, client_as, who, address):
    assert client_as(who).get(address).status_code == 404


def test_the_api_names_a_nul_in_its_query_and_body_and_stores_nothing(world, app, users, client_as):
    headers = {"Authorization": f"Bearer {create_token(users['PlatformAdmin'], 'nul')[1]}"}
    client = client_as(None)
    before = _changes()
    search = client.get("/api/v1/search?q=gauge&pack=ops%00", headers=headers)
    assert search.status_code == 400 and "query parameter 'pack'" in search.json["error"]["message"]
    assert client.get("/api/v1/packs/ops%00/documents", headers=headers).status_code == 404
    for method, address, body, where in (
        ("post", "/api/v1/agents/acme-desk/ask", {"question": NUL_TEXT}, "question"),
        ("put", "/api/v1/packs/ops/documents/gauge", {"expected_version": 1, "text": NUL_TEXT}, "text"),
        (
            "put",
            "/api/v1/packs/ops/documents/gauge",
            {"expected_version": 1, "text": "x", "reader_roles": ["\x00"]},
            "reader_roles[0]",
        ),
    ):
        response = getattr(client, method)(address, json=body, headers=headers)
        assert (response.status_code, response.json["error"]["code"]) == (400, "invalid_request"), (address, body)
        assert response.json["error"]["message"].startswith(f"The JSON value {where} holds a NUL character")
    assert _changes() == before
    assert (
        client.post("/api/v1/agents/acme-desk/ask", json={"question": "zorblax gauge?"}, headers=headers).status_code
        == 200
    )


@pytest.mark.parametrize("depth", [40, 600, 100_000])
def test_a_json_body_nested_too_deep_is_never_a_500(world, app, users, client_as, depth):
    """Every request's JSON body is read before its view (for a NUL): one nested a few hundred levels deep
    overflowed Python's stack while it was read, and any address, signed in or not, answered 500. The API
    refuses such a body as it refuses any it cannot read (400); elsewhere it is not read, as one that is not
    JSON."""
    app.config["PROPAGATE_EXCEPTIONS"] = False  # a 500 the way a served portal answers one
    nested = "[" * depth + '"x"' + "]" * depth
    client = client_as(None)
    for address in ("/healthz", "/login"):
        response = client.get(address, data=nested, content_type="application/json")
        assert response.status_code == 200, address
    headers = {"Authorization": f"Bearer {create_token(users['PlatformAdmin'], 'deep')[1]}"}
    before = _changes()
    for method, address, body in (
        ("post", "/api/v1/agents/acme-desk/ask", '{"question": ' + nested + "}"),
        ("put", "/api/v1/packs/ops/documents/gauge", '{"expected_version": 1, "text": ' + nested + "}"),
        ("put", "/api/v1/packs/ops/documents/gauge", nested),
    ):
        response = getattr(client, method)(address, data=body, content_type="application/json", headers=headers)
        assert (response.status_code, response.json["error"]["code"]) == (400, "invalid_request"), address
    assert _changes() == before


def test_a_nul_in_a_json_body_nested_within_the_limit_is_still_named(world, users, client_as):
    headers = {"Authorization": f"Bearer {create_token(users['PlatformAdmin'], 'deep')[1]}"}
    body = {"expected_version": 1, "text": "x", "reader_roles": [[[[[[NUL_TEXT]]]]]]}
    response = client_as(None).put("/api/v1/packs/ops/documents/gauge", json=body, headers=headers)
    assert response.status_code == 400
    assert response.json["error"]["message"].startswith("The JSON value reader_roles[0][0][0][0][0][0] holds a NUL")


@pytest.mark.parametrize(
    "address, body",
    [
        ("/api/v1/packs/ops/documents/gauge", '{"expected_version": 1, "text": "\\ud800 lone"}'),
        ("/api/v1/agents/acme-desk/ask", '{"question": "why \\udfff"}'),
    ],
)
def test_an_unpaired_surrogate_in_a_json_body_is_named_and_nothing_changes(world, users, client_as, address, body):
    """Valid JSON to Python, no character to anyone: the API's reader said "unexpected end of hex escape" of a
    complete escape (found by an attack probe)."""
    headers = {"Authorization": f"Bearer {create_token(users['PlatformAdmin'], 'lone')[1]}"}
    before = _changes()
    method = "put" if "documents" in address else "post"
    response = getattr(client_as(None), method)(address, data=body, content_type="application/json", headers=headers)
    assert response.status_code == 400
    field = "text" if "documents" in address else "question"
    assert response.json["error"]["message"].startswith(f"The JSON value {field} holds an unpaired surrogate (\\u")
    assert _changes() == before


# --- Bidirectional reordering controls (portal/controls.py) ------------------------------------------------

# "Clean up" then an override that shows the rest of its line backwards: stored as written, read as
# "Clean up golden" followed by whatever the page lists after it, reversed.
REORDERED = "Clean up \u202enedlog\u202c and \u2066isolated\u2069\x07\x1b"
AS_STORED = "Clean up nedlog and isolated"

SENT_FORMS = [
    (
        "PlatformAdmin",
        "/packs/",
        {"slug": "bidi", "title": REORDERED, "kind": "generic"},
        lambda w: _pack("bidi").title,
    ),
    (
        "PlatformAdmin",
        "/packs/ops/edit",
        {"title": "Operations", "description": REORDERED},
        lambda w: _pack("ops").description,
    ),
    (
        "PlatformAdmin",
        "/packs/ops/documents/gauge/edit",
        {"title": REORDERED, "text": f"# Gauge\n\n{REORDERED}\n", "expected_version": "1"},
        lambda w: (Document.get(Document.doc_id == "gauge").title, _current_text("gauge")),
    ),
    (
        "AgentBuilder",
        "/agents/",
        {"slug": "bidi-agent", "name": REORDERED, "mode": "open"},
        lambda w: Agent.get(Agent.slug == "bidi-agent").name,
    ),
    ("Member", "/chat/", {"agent": "acme-desk", "question": REORDERED}, lambda w: _newest_run().question),
    ("Member", "/chat/{conversation}", {"question": REORDERED}, lambda w: _newest_run().question),
    (
        "Member",
        "/chat/answers/{run}/feedback",
        {"rating": "not_helpful", "reasons": "other", "note": REORDERED},
        lambda w: Feedback.get_by_id(w[2].id).note,
    ),
    (
        "Auditor",
        "/feedback/{feedback}/triage",
        {"status": "in_review", "reviewer_note": REORDERED},
        lambda w: Feedback.get_by_id(w[2].id).reviewer_note,
    ),
]


def _pack(slug):
    return Pack.get(Pack.slug == slug)


def _current_text(doc_id):
    document = Document.get(Document.doc_id == doc_id)
    return Revision.get((Revision.document == document) & (Revision.version == document.current_version)).text


def _newest_run():
    return Run.select().order_by(Run.id.desc()).get()


@pytest.mark.parametrize(
    "who, address, form, stored",
    SENT_FORMS,
    ids=[f"{f[1]} {next(k for k, v in f[2].items() if REORDERED in v)}" for f in SENT_FORMS],
)
def test_a_form_fields_bidirectional_reordering_controls_are_never_stored(world, client_as, who, address, form, stored):
    conversation, run, feedback = world
    response = client_as(who).post(
        address.format(conversation=conversation.id, run=run.id, feedback=feedback.id), data=form
    )
    assert response.status_code < 400, response.get_data(as_text=True)[:500]
    value = stored(world)
    for text in value if isinstance(value, tuple) else (value,):
        assert "Clean up nedlog and isolated" in text and not any(c in text for c in BIDI_REORDERING), repr(text)
        assert "\x07" not in text and "\x1b" not in text, repr(text)  # nor a bell or an escape


def test_a_query_string_and_an_api_body_lose_them_too_and_a_password_keeps_them(world, app, users, client_as):
    page = client_as("Auditor").get("/library/?q=" + urllib.parse.quote("zorblax \u202egauge"))
    assert page.status_code == 200
    shown = page.get_data(as_text=True)
    assert 'value="zorblax gauge"' in shown and "\u202e" not in shown

    headers = {"Authorization": f"Bearer {create_token(users['PlatformAdmin'], 'bidi')[1]}"}
    client = client_as(None)
    asked = client.post("/api/v1/agents/acme-desk/ask", json={"question": REORDERED}, headers=headers)
    assert asked.status_code == 200 and _newest_run().question == AS_STORED
    written = client.put(
        "/api/v1/packs/ops/documents/gauge",
        json={"expected_version": 1, "text": f"# Gauge\n\n{REORDERED}\n"},
        headers=headers,
    )
    assert written.status_code == 200 and AS_STORED in _current_text("gauge")

    # A password is compared as typed: one set with an isolate in it still signs in, and only as typed.
    create_user("rtl@example.test", "pass \u2067word\u2069 long enough", {"Member"}, "Acme Test Co")
    assert login(app.test_client(), "rtl@example.test", "pass \u2067word\u2069 long enough").status_code == 302
    assert login(app.test_client(), "rtl@example.test", "pass word long enough").status_code != 302


@pytest.mark.parametrize("host", ["a" * 64, "two..dots", "."])
@pytest.mark.parametrize("who", [None, "Auditor"])
@pytest.mark.parametrize("path", ["/", "/library/?q=zorblax", "/healthz", "/static/cairn.css", "/library/?q=a%00b"])
def test_a_host_header_that_names_no_host_is_a_400_never_a_500(app, client_as, who, path, host):
    """A Host header Werkzeug cannot bind (BadHost) leaves the request without a URL adapter, and the 400 page,
    which links its assets with url_for, failed to draw: every address answered 500 with a traceback."""
    app.config["PROPAGATE_EXCEPTIONS"] = False  # a 500 the way a served portal answers one
    response = client_as(who).get(path, headers={"Host": host})
    assert response.status_code == 400 and response.mimetype == "text/plain"
    assert response.get_data(as_text=True).startswith("Bad request: ")
    api = client_as(None).get("/api/v1/packs", headers={"Host": host})
    assert (api.status_code, api.json["error"]["code"]) == (400, "invalid_request")
