"""Every page has exactly one ``<h1>``, its own title: a document's headings sit below it in the outline.

Each role walks the portal by its links (each page kind once, as the browser's accessibility walk does),
plus the pages no link of a small world reaches (a section read alone, an error).
"""

from __future__ import annotations

import re
from collections import Counter, deque
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup
from werkzeug.exceptions import HTTPException
from werkzeug.routing import RequestRedirect

from helpers import SPOOL
from portal.agents.services import create_agent
from portal.chat.services import start_conversation
from portal.documents import services as documents
from portal.documents.readers import ReaderAccess
from portal.feedback.services import rate_answer

# Downloads, images and exports are not pages.
NOT_PAGES = re.compile(r"(^static$|^api\.|\.figure$|\.original$|^feedback\.export$|^home\.healthz$)")
NESTED = b"# Guide\n\nIntro.\n\n## Setup\n\nSteps.\n\n### Proxy\n\nSet it.\n\n###### Deepest\n\nLast.\n"


@pytest.fixture
def world(app, pack, users):
    """Documents with headings of every level, an agent offered to the Member's company, an answer rated."""
    shared = ReaderAccess("shared")
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None, reader_access=shared)
    documents.upload_file(pack, "guide.md", NESTED, None, reader_access=shared)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    _, run = start_conversation(users["Member"], agent, "How do I delete old spool requests?")
    rate_answer(users["Member"], run, "not_helpful", ["incomplete"], "")
    return run


def _h1s(response) -> list[str]:
    return [" ".join(h.text.split()) for h in BeautifulSoup(response.get_data(as_text=True), "html.parser")("h1")]


def _walk(app, client, start: str) -> dict[str, list[str]]:
    """Every page kind reachable by links from ``start``: its address → the text of each of its h1."""
    adapter = app.url_map.bind("localhost")
    seen, queue, kinds, found = {start}, deque([start]), Counter(), {}
    while queue:
        address = queue.popleft()
        try:
            endpoint, _ = adapter.match(urlsplit(address).path, method="GET")
        except (RequestRedirect, HTTPException):
            continue
        if NOT_PAGES.search(endpoint) or kinds[endpoint]:
            continue
        kinds[endpoint] += 1
        response = client.get(address, follow_redirects=True)
        if response.mimetype != "text/html":
            continue
        found[address] = _h1s(response)
        for link in BeautifulSoup(response.get_data(as_text=True), "html.parser").select("a[href]"):
            url = urlsplit(link["href"])
            target = url.path + (f"?{url.query}" if url.query else "")
            if not url.netloc and url.path.startswith("/") and target not in seen:
                seen.add(target)
                queue.append(target)
    return found


@pytest.mark.parametrize("role", ["PlatformAdmin", "AgentBuilder", "Auditor", "Member"])
def test_every_page_a_role_reaches_has_exactly_one_h1(app, world, client_as, role):
    client = client_as(role)
    pages = _walk(app, client, "/")
    pages.update(_walk(app, client, "/library/"))
    extras = ["/packs/missing", "/library/ops/guide", "/library/ops/guide?view=lines"]
    if role == "Member":
        cited = f"/chat/answers/{world.id}/sources/1/document"
        extras += [cited, f"{cited}?view=lines"]
    else:
        extras += ["/packs/ops/documents/guide", "/packs/ops/documents/guide?section=Guide > Setup"]
    for address in extras:
        pages[address] = _h1s(client.get(address))
    assert len(pages) > len(extras) + 3, pages  # the walk found the role's pages
    wrong = {address: h1s for address, h1s in pages.items() if len(h1s) != 1}
    assert not wrong, wrong


def test_the_sign_in_page_has_one_h1(app, world, client_as):
    assert _h1s(client_as(None).get("/login")) == ["Sign in"]


@pytest.mark.parametrize(
    "address", ["/packs/ops/documents/guide", "/library/ops/guide", "/packs/ops/documents/guide?section=Guide"]
)
def test_a_documents_headings_sit_one_level_below_the_page_title(app, world, client_as, address):
    page = BeautifulSoup(client_as("PlatformAdmin").get(address).get_data(as_text=True), "html.parser")
    assert [h.text for h in page("h1")] == ["Guide"]  # the page title: the document's
    body = page.select_one("article.doc-body")
    levels = [(h.name, h.text) for h in body.find_all(re.compile(r"^h[1-6]$"))]
    assert levels == [("h2", "Guide"), ("h3", "Setup"), ("h4", "Proxy"), ("h6", "Deepest")]
    if address == "/packs/ops/documents/guide":  # the outline still jumps to each heading
        jumps = [a["href"] for a in page.select("nav.outline a.jump")]
        assert len(jumps) == 4 and all(body.select_one(href) is not None for href in jumps), jumps
