"""Markdown read once: the passage splitter, the answerer and the viewer see the same blocks.

Each document below is one the old hand-written readers got wrong somewhere; every test
compares what the splitter or the answerer found with the HTML the viewer renders.
"""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from portal.answers.units import passage_units, plain
from portal.documents.render import PassageLines, render_markdown
from portal.documents.sections import outline
from portal.documents.services import upload_file
from portal.ingest import markdown_blocks as markdown_blocks_module
from portal.ingest.markdown_blocks import markdown_blocks, quoted_wildcards
from portal.ingest.passages import split_passages

FENCES = """# Guide

Before the code.

```bash
# not a heading
pip install cairn
```

~~~~
# tilde fence
~~~
# still inside: the closing fence is too short
~~~~

    # indented four spaces: a code block

After the code.

## Next

More text.

- An item with code:

  ```
  # not a heading either
  ```

Closing words.
"""

SETEXT = """Title of the guide
==================

Intro paragraph.

Two line
heading
-------

Under the two-line heading.

- a list item
---

After the rule.
"""

HTML_AS_TEXT = """<div>
Panel text
</div>
---

Body under the panel heading.

<details>
# Inside details
</details>

Closing words.
"""

NESTED = """# Steps

Before you start, check the following:

- Stop the job.
  - Note its number.
    1. Write it down.
- Restart the job.

> Quoted advice here.
>
> # Heading in a quote
>
> - quoted item

- item

  # Heading in an item

  Second paragraph of the item.

# After

Last words.
"""

TABLES = """# Schedule

Job | Start | Owner
--- | --- | ---
Z_A | 02:00 | Basis
Z_B | 03:00

| Port |
|------|

## Notes

Intro
2. An ordered list must start at 1 to interrupt a paragraph.

- one bullet
+ another bullet list
"""

UNCLOSED_FENCE = """# Before

Text.

```
# code to the end

# still code
"""

DOCUMENTS = {
    "fences": FENCES,
    "setext": SETEXT,
    "html": HTML_AS_TEXT,
    "nested": NESTED,
    "tables": TABLES,
    "unclosed": UNCLOSED_FENCE,
}


def rendered(text: str, passages=()) -> BeautifulSoup:
    html = render_markdown(text, [PassageLines(p.ordinal, p.line_start, p.line_end) for p in passages])
    return BeautifulSoup(str(html), "html.parser")


def words(text: str) -> str:
    return " ".join(text.split())


def top_level_headings(soup: BeautifulSoup) -> list[tuple[int, int, str]]:
    """(1-based line, level, text) of the headings the viewer renders outside quotes and lists."""
    return [
        (int(h["data-line"]), int(h.name[1]), words(h.text))
        for h in soup.find_all(["h1", "h2", "h3", "h4", "h5", "h6"], recursive=False)
    ]


def path_at(headings: list[tuple[int, int, str]], line: int) -> str:
    stack: list[tuple[int, str]] = []
    for heading_line, level, title in headings:
        if heading_line > line:
            break
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
    return " > ".join(title for _, title in stack)


@pytest.mark.parametrize("name", DOCUMENTS)
def test_passages_start_and_take_their_heading_path_where_the_viewer_renders_headings(name):
    text = DOCUMENTS[name]
    passages = split_passages(text, "md")
    soup = rendered(text, passages)
    headings = top_level_headings(soup)
    heading_lines = {line for line, _, _ in headings}
    for passage in passages:
        assert passage.heading_path == path_at(headings, passage.line_end), passage
        if passage.ordinal:
            assert passage.line_start in heading_lines, passage
            anchor = soup.select_one(f"#passage-{passage.ordinal}")
            assert anchor.name[0] == "h" and int(anchor["data-line"]) == passage.line_start


def test_the_tricky_documents_give_the_sections_the_viewer_shows():
    assert [p.heading_path for p in split_passages(FENCES, "md")] == ["Guide", "Guide > Next"]
    assert [p.heading_path for p in split_passages(SETEXT, "md")] == [
        "Title of the guide",
        "Title of the guide > Two line heading",
    ]
    assert [p.heading_path for p in split_passages(HTML_AS_TEXT, "md")] == ["<div> Panel text </div>", "Inside details"]
    # a heading inside a quote or a list item belongs to that block: no section starts there
    assert [p.heading_path for p in split_passages(NESTED, "md")] == ["Steps", "After"]
    assert [p.heading_path for p in split_passages(UNCLOSED_FENCE, "md")] == ["Before"]


def own_text(item) -> str:
    """A rendered list item's first paragraph (a tight list renders it without <p>)."""
    paragraph = item.find("p", recursive=False)
    if paragraph is not None:
        return words(paragraph.text)
    return words("".join(item.find_all(string=True, recursive=False)))


def rendered_rows(soup: BeautifulSoup) -> list[str]:
    rows = []
    for table in soup.find_all("table"):
        header = [words(th.text) for th in table.select("thead th")]
        body = table.select("tbody tr")
        for tr in body:
            cells = [words(td.text) for td in tr.find_all("td")]
            rows.append("; ".join(f"{h}: {c}" for h, c in zip(header, cells) if c))
        if not body:
            rows.append("; ".join(h for h in header if h))
    return rows


@pytest.mark.parametrize("name", DOCUMENTS)
def test_answer_units_are_the_blocks_the_viewer_renders(name):
    text = DOCUMENTS[name]
    soup = rendered(text)
    units = passage_units(text)
    headings = {words(h.text) for h in soup.find_all(["h1", "h2", "h3", "h4", "h5", "h6"])} | {""}
    items = {own_text(li) for li in soup.find_all("li")}
    paragraphs = " | ".join(words(p.text) for p in soup.find_all("p"))
    code = " ".join(pre.text for pre in soup.find_all("pre"))
    assert {u.heading for u in units} <= headings
    assert [u.text for u in units if u.kind == "row"] == rendered_rows(soup)
    assert {u.text for u in units if u.kind == "item"} == items - {""}
    prose = [u.text for u in units if u.kind == "prose"]
    for paragraph in soup.find_all("p"):  # every paragraph outside a list item gives prose, from its start
        if paragraph.find_parent("li") is None:
            assert any(words(paragraph.text).startswith(sentence) for sentence in prose), paragraph
    for unit in units:
        assert unit.text not in code
        if unit.kind == "item":
            assert unit.text in items, unit
        elif unit.kind == "prose":
            assert unit.text in paragraphs, unit


def test_answer_units_of_the_tricky_documents():
    fences = passage_units(FENCES)
    assert [(u.text, u.heading) for u in fences] == [
        ("Before the code.", "Guide"),
        ("After the code.", "Guide"),
        ("More text.", "Next"),
        ("An item with code:", "Next"),
        ("Closing words.", "Next"),
    ]
    setext = passage_units(SETEXT)
    assert [(u.text, u.heading) for u in setext][-2:] == [
        ("a list item", "Two line heading"),
        ("After the rule.", "Two line heading"),
    ]
    nested = passage_units(NESTED)
    assert [(u.text, u.kind, u.list_id, u.lead_in) for u in nested if u.kind == "item"][:4] == [
        ("Stop the job.", "item", 1, "Before you start, check the following:"),
        ("Note its number.", "item", 1, "Before you start, check the following:"),
        ("Write it down.", "item", 1, "Before you start, check the following:"),
        ("Restart the job.", "item", 1, "Before you start, check the following:"),
    ]
    assert ("Second paragraph of the item.", "prose", "Heading in an item") in [
        (u.text, u.kind, u.heading) for u in nested
    ]
    tables = passage_units(TABLES)
    assert [u.text for u in tables if u.kind == "row"] == [
        "Job: Z_A; Start: 02:00; Owner: Basis",
        "Job: Z_B; Start: 03:00",
        "Port",
    ]
    # "2." cannot interrupt a paragraph: the viewer shows one paragraph, the answerer reads its sentences
    assert [u.text for u in tables if u.kind == "prose"] == [
        "Intro 2.",
        "An ordered list must start at 1 to interrupt a paragraph.",
    ]
    assert [u.list_id for u in tables if u.kind == "item"] == [1, 2]  # a new bullet character, a new list
    assert [u.text for u in passage_units(UNCLOSED_FENCE)] == ["Text."]


def test_lines_count_as_splitlines_counts_them_for_the_splitter_and_the_viewer():
    # a form feed and a line separator are line breaks to str.splitlines, not to markdown-it
    text = "# A\n\nPage one text.\x0cstill page one.\u2028More.\n\n# B\n\nText under B.\n"
    passages = split_passages(text, "md")
    assert [(p.heading_path, p.line_start) for p in passages] == [("A", 1), ("B", 7)]
    assert text.splitlines()[6] == "# B"
    [b_heading] = [block for block in markdown_blocks(text) if block.text == "B"]
    assert (b_heading.line_start, b_heading.line_end) == (6, 7)
    soup = rendered(text, passages)
    anchor = soup.select_one("#passage-1")
    assert anchor.name == "h2" and anchor["data-line"] == "7"  # "# B", a level below the page title


def test_blocks_keep_the_source_and_its_lines():
    blocks = markdown_blocks(TABLES)
    assert [(b.kind, b.line_start, b.line_end) for b in blocks][:5] == [
        ("heading", 0, 1),
        ("table_header", 2, 3),
        ("table_row", 4, 5),
        ("table_row", 5, 6),
        ("table_header", 7, 8),
    ]
    assert blocks[3].cells == ("Z_B", "03:00", "") and blocks[3].header == ("Job", "Start", "Owner")
    assert next(b.heading_path for b in blocks if b.kind == "paragraph") == ("Schedule", "Notes")
    # raw HTML is off: a tag stays text in the block, as the viewer escapes it
    html_blocks = markdown_blocks("<script>alert(1)</script>\n")
    assert [(b.kind, b.text) for b in html_blocks] == [("paragraph", "<script>alert(1)</script>")]
    assert plain("**Keep** `Z_ID` [a link](https://x.test)") == "Keep Z_ID a link"


@pytest.mark.parametrize(
    "source, viewer_text, emphasised",
    [
        ('table name "*" and user "*".', 'table name "*" and user "*".', []),
        ("tables 'Z*' and “*Y” or ‘A_*’", "tables 'Z*' and “*Y” or ‘A_*’", []),
        ('*"quoted"* and "a *b* c"', '"quoted" and "a b c"', ['"quoted"', "b"]),
        ('**Owner:** "*" only', 'Owner: "*" only', ["Owner:"]),
    ],
)
def test_a_star_inside_a_quoted_word_is_text_for_the_viewer_and_the_answerer(source, viewer_text, emphasised):
    """Issue 16, item 2: SAP's wildcard in quotes paired up into italics and vanished."""
    soup = BeautifulSoup(str(render_markdown(source)), "html.parser")
    assert soup.get_text().strip() == viewer_text
    assert [e.get_text() for e in soup.select("em, strong")] == emphasised
    assert plain(source) == viewer_text


def test_a_quoted_wildcard_scan_stays_fast_on_hostile_text():
    """Possessive quantifiers: an unclosed quote before 200,000 stars is one linear scan."""
    assert quoted_wildcards('"' + "*" * 200_000) == ()
    assert len(quoted_wildcards('"*" ' * 50_000)) == 50_000


def test_an_upload_reads_its_text_into_blocks_once(app, pack, monkeypatch):
    """Its title and its passages take the same blocks: parsing 400,000 characters of table cells takes
    seconds, and the upload of a 50,000-column table parsed them twice."""
    parsed = []
    parser = markdown_blocks_module._BLOCK_STRUCTURE
    parse = parser.parse
    monkeypatch.setattr(parser, "parse", lambda text, env=None: parsed.append(text) or parse(text, env))
    text = "# Wide\n\nThe gauge.\n\n" + "|a" * 5_000 + "|\n" + "|-" * 5_000 + "|\n" + "|b" * 5_000 + "|\n"
    outcome = upload_file(pack, "wide.md", text.encode(), None)
    assert outcome.accepted and outcome.document.title == "Wide"
    assert parsed.count(text) == 1
    assert markdown_blocks(text) is markdown_blocks(text)  # the same blocks, which nobody can change


def test_the_parsers_own_rules_add_literal_text_without_copying_what_came_before(monkeypatch):
    """``state.pending += c`` reads the whole text waiting to become a token and copies it: once per
    quoted wildcard, quadratic in a paragraph of them (400,000 characters of '"*"': a second to parse,
    for every view and upload). The rules append through ``append_pending`` (markdown-it-py 4.3), so the
    text waiting is read only when a token is made of it. Counted, not timed."""
    from markdown_it.rules_inline import StateInline

    reads = 0
    pending = StateInline.pending

    def counted(state):
        nonlocal reads
        reads += 1
        return pending.fget(state)

    monkeypatch.setattr(StateInline, "pending", property(counted, pending.fset))
    markdown_blocks_module.MARKDOWN.parse('"*" ' * 2_000)
    assert reads < 10  # the text rule's own reads: one for the paragraph's one text token
    tokens = markdown_blocks_module.MARKDOWN.parseInline('"*" and "_"')[0].children
    assert [(t.type, t.content) for t in tokens] == [("text", '"*" and "_"')]


def test_a_heading_path_holds_a_long_title_cut_so_each_section_under_it_does_not_repeat_it_whole():
    """Every passage and outline entry under a heading repeats its title in their heading path: a title of
    200,000 characters over 28,000 short sections made 5.6 billion characters of paths for the splitter
    and as many for the outline (quadratic; the upload never finished). A path holds a title cut to
    ``MAX_PATH_TITLE_CHARS``; the heading itself, its outline entry's title and shorter titles are whole."""
    limit = markdown_blocks_module.MAX_PATH_TITLE_CHARS
    title = "zorblax gauge " * 3_000
    text = f"# {title}\n" + "## Step\n\nTurn the dial.\n\n" * 2_000
    cut = markdown_blocks(text)[0].heading_path[0]
    assert len(cut) == limit and cut.endswith("…") and title.startswith(cut[:-1])
    paths = [p.heading_path for p in split_passages(text, "md")]
    assert set(paths) == {cut, f"{cut} > Step"} and paths.count(f"{cut} > Step") >= 1_999
    sections = outline(text, "md")
    assert sections[0].title == title.strip() and sections[0].path == cut
    assert {s.path for s in sections[1:]} == {f"{cut} > Step"}

    fits = "z" * limit
    assert markdown_blocks(f"# {fits}\n\n## Step\n")[1].heading_path == (fits, "Step")
