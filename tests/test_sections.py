"""Sections: the outline of headings (Markdown, Word) or pages (PDF) on the document page, and one
section read on its own with ``?section=``: unknown names list the sections, ambiguous ones are
reported, a long section is cut at ``MAX_SECTION_CHARS``."""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

import pytest
from bs4 import BeautifulSoup

from portal.documents import services
from portal.documents.sections import MAX_SECTION_CHARS, find_section, outline
from portal.models import Passage, Revision
from resources.make_fixtures import PdfPage, add_picture, docx_bytes, image_bytes, pdf_bytes

GUIDE = """# Install guide

Read this first.

## Setup

Unpack the archive.

### Network

Open port 8443 on the firewall.

```
# not a heading: a comment in a code block
```

### Storage

Mount the data volume.

## Troubleshooting

### Network

Ping the gateway, then check the proxy.

## Notes

One.

## Notes

Two.
"""


def _soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def _section_url(name: str, **extra) -> str:
    query = "&".join([f"section={quote(name)}", *(f"{k}={v}" for k, v in extra.items())])
    return f"/packs/ops/documents/install-guide?{query}"


@pytest.fixture
def guide(app, pack):
    return services.upload_file(pack, "install-guide.md", GUIDE.encode(), None)


# --- the outline (pure) -------------------------------------------------------------------------


def test_the_outline_has_the_headings_the_viewer_renders_with_the_paths_passages_record(guide):
    sections = outline(GUIDE, "markdown")
    assert [(s.path, s.level) for s in sections] == [
        ("Install guide", 1),
        ("Install guide > Setup", 2),
        ("Install guide > Setup > Network", 3),
        ("Install guide > Setup > Storage", 3),
        ("Install guide > Troubleshooting", 2),
        ("Install guide > Troubleshooting > Network", 3),
        ("Install guide > Notes", 2),
        ("Install guide > Notes", 2),
    ]
    stored = {p.heading_path for p in Passage.select().join(Revision).where(Revision.id == guide.revision.id)}
    assert stored <= {s.path for s in sections}  # one parser, one naming
    lines = GUIDE.splitlines()
    setup = sections[1]
    assert lines[setup.line_start] == "## Setup" and lines[setup.line_end] == "## Troubleshooting"  # with subsections
    assert sections[0].line_end == len(lines)


def test_plain_text_and_images_have_no_sections():
    assert outline(GUIDE, "text") == [] and outline("", "image") == []


# --- finding a section (pure) --------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, path",
    [
        ("Install guide > Setup > Network", "Install guide > Setup > Network"),
        ("Setup > Network", "Install guide > Setup > Network"),  # the end of a path
        ("  setup >network ", "Install guide > Setup > Network"),  # case and blanks do not matter
        ("Storage", "Install guide > Setup > Storage"),
        ("Troubleshooting", "Install guide > Troubleshooting"),
    ],
)
def test_a_name_finds_its_section(name, path):
    lookup = find_section(GUIDE, "markdown", name)
    assert lookup.problem is None and lookup.found.section.path == path


def test_an_ambiguous_name_reports_its_candidates():
    lookup = find_section(GUIDE, "markdown", "Network")
    assert lookup.problem == "ambiguous"
    assert [s.path for s in lookup.candidates] == [
        "Install guide > Setup > Network",
        "Install guide > Troubleshooting > Network",
    ]
    same = find_section(GUIDE, "markdown", "Install guide > Notes")  # two headings with one full path
    assert same.problem == "ambiguous" and len(same.candidates) == 2


@pytest.mark.parametrize("name", ["Deployment", "", " > ", "Setup > Storage > Network", "x" * 5000])
def test_an_unknown_name_lists_every_section(name):
    lookup = find_section(GUIDE, "markdown", name)
    assert lookup.problem == "unknown" and len(lookup.candidates) == 8


def test_a_long_section_is_cut_at_a_line_break_at_the_limit():
    line = "The quick brown fox jumps over the lazy dog again and again." * 2  # 120 characters
    body = "\n".join(f"{n:05d} {line}" for n in range(600))  # about 76,000 characters
    text = f"# Big\n\n{body}\n\n# After\n\nShort.\n"
    shown = find_section(text, "markdown", "Big").found
    assert shown.cut and shown.total_chars > MAX_SECTION_CHARS
    assert len(shown.text) <= MAX_SECTION_CHARS and len(shown.text) > MAX_SECTION_CHARS - 200
    assert text.startswith(shown.text + "\n")  # whole lines, from the heading on
    after = find_section(text, "markdown", "After").found
    assert not after.cut and after.text == "# After\n\nShort."


# --- the document page ---------------------------------------------------------------------------


def test_the_page_shows_an_outline_that_jumps_to_each_heading(guide, client_as):
    page = _soup(client_as("Auditor").get("/packs/ops/documents/install-guide"))
    items = page.select(".outline li")
    assert [li.select_one("a.jump").text for li in items] == [
        "Install guide",
        "Setup",
        "Network",
        "Storage",
        "Troubleshooting",
        "Network",
        "Notes",
        "Notes",
    ]
    assert page.select_one(".outline").has_attr("hx-disable")
    for li in items:  # every jump lands on an anchor just before its heading
        anchor = page.select_one(li.select_one("a.jump")["href"])
        assert anchor is not None and "section-anchor" in anchor["class"]
        assert anchor.find_next_sibling().name.startswith("h")
        assert anchor.find_next_sibling().text == li.select_one("a.jump").text
    alone = [li.select_one("a.read-alone") for li in items]
    address = urlsplit(alone[2]["href"])
    assert address.path == "/packs/ops/documents/install-guide"
    assert parse_qs(address.query) == {"section": ["Install guide > Setup > Network"]}
    # named by its section for a screen reader, whose list of links read "alone", "alone", …
    assert alone[2]["aria-label"] == "Install guide > Setup > Network: read alone"
    assert alone[6] is None and alone[7] is None  # two sections of one name: only the jump


def test_a_section_is_read_on_its_own(guide, client_as):
    response = client_as("Auditor").get(_section_url("Setup > Network"))
    assert response.status_code == 200
    page = _soup(response)
    assert "Install guide > Setup > Network" in page.select_one(".section-shown").text
    body = page.select_one(".doc-body").text
    assert "Open port 8443" in body and "Mount the data volume" not in body and "Unpack the archive" not in body
    lines = _soup(client_as("Auditor").get(_section_url("Setup > Network", view="lines")))
    numbers = [int(th.text) for th in lines.select(".numbered th")]
    assert numbers[0] == GUIDE.splitlines().index("### Network") + 1  # numbered as in the whole text


def test_an_unknown_section_lists_the_sections(guide, client_as):
    response = client_as("Auditor").get(_section_url("Deployment"))
    assert response.status_code == 404
    page = _soup(response)
    problem = page.select_one(".section-problem")
    assert "no section named “Deployment”" in problem.text
    assert len(problem.select("li a")) == 8
    assert page.select_one(".doc-body") is None


def test_an_ambiguous_section_is_reported_with_links_to_each(guide, client_as):
    response = client_as("Auditor").get(_section_url("Network"))
    assert response.status_code == 409
    problem = _soup(response).select_one(".section-problem")
    assert "names 2 sections" in problem.text
    links = [a["href"] for a in problem.select("li a")]
    assert all("section=" in href for href in links) and len(links) == 2
    for href in links:
        assert client_as("Auditor").get(href).status_code == 200


def test_a_section_name_is_text_never_markup(guide, client_as):
    hostile = '<img src=x onerror=alert(1)> hx-get="/x"'
    page = _soup(client_as("Auditor").get(_section_url(hostile)))
    assert page.select_one(".section-problem img") is None
    assert hostile in page.select_one(".section-problem").text
    assert page.select_one(".section-head").has_attr("hx-disable")


def test_a_word_document_has_its_headings_and_a_pdf_its_pages(app, pack, client_as):
    def build(document):
        document.add_heading("Plant handbook", level=1)
        document.add_heading("Safety", level=2)
        document.add_paragraph("Wear boots on the floor.")
        add_picture(document, image_bytes(120, 80), alt="Floor plan")
        document.add_heading("Shifts", level=2)
        document.add_paragraph("Three shifts a day.")

    services.upload_file(pack, "handbook.docx", docx_bytes(build), None)
    services.upload_file(
        pack,
        "manual.pdf",
        pdf_bytes([PdfPage(["Start the pump."]), PdfPage(["Page 7 is not a page line here."]), PdfPage(["Stop."])]),
        None,
    )
    admin = client_as("PlatformAdmin")
    word = _soup(admin.get("/packs/ops/documents/handbook"))
    assert [a.text for a in word.select(".outline a.jump")] == ["Plant handbook", "Safety", "Shifts"]
    safety = _soup(admin.get("/packs/ops/documents/handbook?section=Safety"))
    assert "Wear boots" in safety.select_one(".doc-body").text
    assert safety.select_one(".doc-body img")["src"].endswith("/figures/1.webp")  # the figure in place

    pdf = _soup(admin.get("/packs/ops/documents/manual"))
    assert pdf.select_one("#outline-heading").text == "Pages"
    assert [a.text for a in pdf.select(".outline a.jump")] == ["Page 1", "Page 2", "Page 3"]
    second = _soup(admin.get("/packs/ops/documents/manual?section=page%202"))
    assert "Page 7 is not a page line" in second.select_one(".doc-body").text
    assert "Stop." not in second.select_one(".doc-body").text


def test_a_cited_passages_heading_path_opens_its_section(guide, client_as):
    path = "Install guide > Troubleshooting > Network"
    network = Passage.get((Passage.revision == guide.revision.id) & (Passage.heading_path == path))
    admin = client_as("PlatformAdmin")
    page = _soup(admin.get(f"/packs/ops/documents/install-guide?passage={network.id}"))
    link = page.select_one(".cited-passage a.cited-section")
    assert link.text == "Troubleshooting > Network"  # the document's title is not repeated
    assert "Install+guide" in link["href"] or "Install%20guide" in link["href"]  # the full path is asked for
    section = _soup(admin.get(link["href"]))
    assert "Ping the gateway" in section.select_one(".doc-body").text
