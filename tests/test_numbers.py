"""Numbers in addresses, query strings and forms (issue 9, item 8).

A number that cannot name anything — beyond the database's integer range, with a
sign, in superscript or other non-ASCII digits, or empty — gets what a missing
thing gets: the 404 of a missing page, the page as for an id that matches no
row, or a 400 for a form value. Never a 500.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from bs4 import BeautifulSoup

from portal.agents.services import create_agent
from portal.chat.services import start_conversation
from portal.documents import services as documents
from portal.feedback.regressions import record_regression_case
from portal.feedback.services import rate_answer
from portal.models import Document, RegressionCase
from portal.numbers import MAX_NUMBER, parse_number
from resources.make_fixtures import mixed_images_docx

HUGE, OVER, SUPERSCRIPT, ARABIC, NEGATIVE, EMPTY = (
    "99999999999999999999",
    str(MAX_NUMBER + 1),
    "\u00b2",
    "\u0663",
    "-1",
    "",
)
NOT_NUMBERS = (HUGE, OVER, SUPERSCRIPT, ARABIC, NEGATIVE)


@pytest.fixture
def world(app, pack, users):
    """A document with figures, a Member's conversation citing it, its Not helpful rating and a case."""
    documents.upload_file(pack, "mixed-images.docx", mixed_images_docx(), None)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    conversation, run = start_conversation(users["Member"], agent, "Which raster formats like PNG are kept?")
    assert run.cited == [1]
    feedback = rate_answer(users["Member"], run, "not_helpful", ["incorrect"], "")
    case = record_regression_case(users["Auditor"], feedback, run.references().first().document_pk)
    return SimpleNamespace(conversation=conversation, run=run, feedback=feedback, case=case)


# Every route with a number in its path; {} is the number under test. The first
# column is who asks. A test below fails when a route with a number is missing here.
PATH_ROUTES = [
    ("Member", "GET", "/chat/{}"),
    ("Member", "POST", "/chat/{}"),
    ("Member", "GET", "/chat/answers/{}/sources"),
    ("Member", "GET", "/chat/answers/{}/sources/1/document"),
    ("Member", "GET", "/chat/answers/{run}/sources/{}/document"),
    ("Member", "GET", "/chat/answers/{}/sources/1/document/figures/1.webp"),
    ("Member", "GET", "/chat/answers/{run}/sources/{}/document/figures/1.webp"),
    ("Member", "GET", "/chat/answers/{run}/sources/1/document/figures/{}.webp"),
    ("Member", "GET", "/chat/answers/{}/sources/1/document/original"),
    ("Member", "GET", "/chat/answers/{run}/sources/{}/document/original"),
    ("Member", "GET", "/chat/answers/{}/feedback"),
    ("Member", "POST", "/chat/answers/{}/feedback"),
    ("Auditor", "GET", "/runs/{}"),
    ("Auditor", "GET", "/runs/{}/sources/1/figures/1.webp"),
    ("Auditor", "GET", "/runs/{run}/sources/{}/figures/1.webp"),
    ("Auditor", "GET", "/runs/{run}/sources/1/figures/{}.webp"),
    ("Auditor", "GET", "/feedback/{}"),
    ("Auditor", "POST", "/feedback/{}/triage"),
    ("Auditor", "POST", "/feedback/{}/cases"),
    ("PlatformAdmin", "POST", "/feedback/{}/cases/{case}/delete"),
    ("PlatformAdmin", "POST", "/feedback/{feedback}/cases/{}/delete"),
    ("Auditor", "GET", "/packs/ops/documents/mixed-images/v{}/figures/1.webp"),
    ("Auditor", "GET", "/packs/ops/documents/mixed-images/v1/figures/{}.webp"),
    ("PlatformAdmin", "POST", "/account/tokens/{}/revoke"),
    ("PlatformAdmin", "POST", "/packs/ops/documents/mixed-images/describe/jobs/{}"),
    ("Auditor", "GET", "/library/ops/mixed-images/v{}/figures/1.webp"),
    ("Auditor", "GET", "/library/ops/mixed-images/v1/figures/{}.webp"),
    # Without a token the API answers 401 to a number that parses; test_api.py asks with one.
    ("Auditor", "GET", "/api/v1/packs/ops/documents/mixed-images/versions/{}/figures/1"),
    ("Auditor", "GET", "/api/v1/packs/ops/documents/mixed-images/versions/1/figures/{}"),
]


def _main(response) -> str:
    """The page's content (the navigation marks its section only when the address matched a route)."""
    return str(BeautifulSoup(response.get_data(as_text=True), "html.parser").select_one("main"))


def _address(template: str, value: str, world) -> str:
    return template.format(value, run=world.run.id, case=world.case.id, feedback=world.feedback.id)


@pytest.mark.parametrize("who, method, template", PATH_ROUTES, ids=[f"{r[1]} {r[2]}" for r in PATH_ROUTES])
def test_a_number_in_the_path_that_names_nothing_is_a_404(world, client_as, who, method, template):
    client = client_as(who)
    missing = client.open(_address(template, "999999", world), method=method, data={"question": "x"})
    zero = client.open(_address(template, "0", world), method=method, data={"question": "x"})
    assert zero.status_code == missing.status_code  # no row has id 0: it is just missing
    for value in NOT_NUMBERS + ("1" + "0" * 10,):
        response = client.open(_address(template, value, world), method=method, data={"question": "x"})
        assert response.status_code == 404, (value, response.get_data(as_text=True)[:300])
        if missing.status_code == 404:  # removing a case that is gone already redirects, as done
            assert _main(response) == _main(missing), value


def test_every_route_with_a_number_is_covered(app):
    adapter = app.url_map.bind("localhost")
    one = SimpleNamespace(id=1)
    ids = SimpleNamespace(run=one, case=one, feedback=one)
    covered = {adapter.match(_address(template, "1", ids), method=method)[0] for _, method, template in PATH_ROUTES}
    numbered = {rule.endpoint for rule in app.url_map.iter_rules() if "<int:" in rule.rule}
    assert numbered <= covered


# Ids in the query string are optional context: one that names nothing is ignored, as a missing one is.
QUERY_IDS = [
    ("Auditor", "/packs/ops/documents/mixed-images?passage={}"),
    ("Auditor", "/packs/ops/documents/mixed-images?run={}&ref=1"),
    ("Auditor", "/packs/ops/documents/mixed-images?run={run}&ref={}"),
    ("Auditor", "/agents/acme-desk/try?run={}"),
    ("Auditor", "/library/ops/mixed-images?passage={}"),
]


@pytest.mark.parametrize("who, template", QUERY_IDS, ids=[r[1] for r in QUERY_IDS])
def test_an_id_in_the_query_that_names_nothing_is_ignored_like_a_missing_one(world, client_as, who, template):
    client = client_as(who)
    missing = client.get(_address(template, "999999", world))
    assert missing.status_code == 200
    for value in NOT_NUMBERS + (EMPTY,):
        response = client.get(_address(template, value, world))
        assert response.status_code == 200, value
        assert response.get_data(as_text=True) == missing.get_data(as_text=True), value


@pytest.mark.parametrize("page", ["/packs/ops/documents/mixed-images", "/library/ops/mixed-images"])
def test_a_real_passage_id_written_with_a_sign_or_other_digits_names_nothing(world, client_as, page):
    """The Library read ``?passage=`` with int(), which takes "+5", " 5" and "٥": one rule (numbers.py) for both."""
    from portal.models import Passage, Revision

    passage = Passage.select().join(Revision).join(Document).where(Document.doc_id == "mixed-images").first()
    digits = str(passage.id)
    client = client_as("Auditor")
    plain = client.get(f"{page}?passage=999999").get_data(as_text=True)
    assert 'class="cited' in client.get(f"{page}?passage={digits}").get_data(as_text=True)
    arabic = "".join(chr(0x0660 + int(d)) for d in digits)
    for written in ("+" + digits, " " + digits, arabic):
        assert client.get(page, query_string={"passage": written}).get_data(as_text=True) == plain, written


PAGED = [("Auditor", "/runs/?page={}"), ("Member", "/runs/?page={}"), ("Auditor", "/feedback/?page={}")]


@pytest.mark.parametrize("who, template", PAGED, ids=[f"{r[0]} {r[1]}" for r in PAGED])
def test_a_page_number_that_names_no_page_is_a_404(world, client_as, who, template):
    client = client_as(who)
    for value in NOT_NUMBERS + ("0",):
        assert client.get(template.format(value)).status_code == 404, value
    assert client.get(template.format(EMPTY)).status_code == 200
    assert client.get(template.format("2")).status_code == 200
    assert client.get(template.format(str(MAX_NUMBER))).status_code == 200


def test_a_form_version_that_is_not_a_number_is_a_400_and_changes_nothing(world, client_as):
    client = client_as("PlatformAdmin")
    document = Document.get(Document.doc_id == "mixed-images")
    for action in ("edit", "delete"):
        for value in NOT_NUMBERS + (EMPTY,):
            response = client.post(
                f"/packs/ops/documents/mixed-images/{action}",
                data={"expected_version": value, "text": "# New\n\ntext\n"},
            )
            assert response.status_code == 400, (action, value)
            assert "expected_version must be a whole number" in response.get_data(as_text=True)
    document = Document.get_by_id(document.id)
    assert document.current_version == 1 and document.deleted_at is None


def test_a_case_passage_that_is_not_a_number_is_a_400(world, client_as):
    client = client_as("Auditor")
    for value in NOT_NUMBERS:
        response = client.post(
            f"/feedback/{world.feedback.id}/cases", data={"pack": "ops", "doc_id": "mixed-images", "passage_id": value}
        )
        assert response.status_code == 400, value
        assert "passage_id must be a whole number" in response.get_data(as_text=True)
    assert RegressionCase.select().count() == 1


def test_parse_number():
    assert [parse_number(v) for v in ("0", "7", "0042", str(MAX_NUMBER))] == [0, 7, 42, MAX_NUMBER]
    assert [parse_number(v) for v in NOT_NUMBERS + (EMPTY, None, " 7", "7 ", "+7", "7.0", "1e3")] == [None] * 12
