"""The document viewer: sanitized Markdown, passage anchors and highlight, line numbers."""

from __future__ import annotations

from bs4 import BeautifulSoup

from portal.documents import services
from portal.models import Passage

HOSTILE = b"""# Handbook

<script>alert(1)</script>

[click](javascript:alert(2)) and [docs](https://example.test/docs)

## Restart

Restart the work process with SM50 after checking the lock table in SM12.
"""


def _soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def test_markdown_is_sanitized(app, pack, client_as):
    services.upload_file(pack, "handbook.md", HOSTILE, None)
    soup = _soup(client_as("Auditor").get("/packs/ops/documents/handbook"))
    body = soup.select_one("article.doc-body")
    assert body.find("script") is None and "<script>" not in str(body).replace("&lt;script&gt;", "")
    hrefs = [a.get("href") for a in body.find_all("a")]
    assert "https://example.test/docs" in hrefs and not any(h and h.startswith("javascript") for h in hrefs)


def test_cited_passage_is_highlighted_and_anchored(app, pack, client_as):
    services.upload_file(pack, "handbook.md", HOSTILE, None)
    passage = Passage.select().where(Passage.text.contains("SM50")).get()
    soup = _soup(client_as("PlatformAdmin").get(f"/packs/ops/documents/handbook?passage={passage.id}"))
    assert soup.select_one(".cited-passage h2").text == "Cited passage"
    cited = soup.select(".doc-body .cited")
    assert cited and any("SM50" in c.text for c in cited)
    assert soup.select_one(f"#passage-{passage.ordinal}") is not None


def test_line_numbers_view(app, pack, client_as):
    services.upload_file(pack, "handbook.md", HOSTILE, None)
    soup = _soup(client_as("Auditor").get("/packs/ops/documents/handbook?view=lines"))
    rows = soup.select("table.numbered tr")
    assert len(rows) == HOSTILE.decode().count("\n") + 1
    assert rows[0].select_one("th").text.strip() == "1" and "# Handbook" in rows[0].text
