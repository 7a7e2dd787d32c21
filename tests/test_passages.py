"""Passage splitting: offsets, line numbers, heading paths, size limits, PDF pages (SPEC 6)."""

from __future__ import annotations

import random
import re
import unicodedata
from itertools import takewhile

import pytest

from portal.ingest.passages import PassageSpan, split_passages

TARGET = 1000
CAP = TARGET * 3 // 2


def slice_of(text: str, passage: PassageSpan) -> str:
    return text[passage.char_start : passage.char_end]


def assert_exact_positions(text: str, passages: list[PassageSpan]) -> None:
    """Text equals its slice (PDF: after the repeated page line); lines agree with ``splitlines``."""
    lines = text.splitlines()
    for ordinal, passage in enumerate(passages):
        assert passage.ordinal == ordinal
        piece = slice_of(text, passage)
        if passage.text != piece:
            prefix = f"Page {passage.page}\n" if passage.page else repeated_table_header(text, passage)
            assert passage.text == prefix + piece
        assert piece and not piece[0].isspace() or piece.startswith((" ", "\t"))
        assert piece == piece.rstrip()
        assert passage.line_start == text.count("\n", 0, passage.char_start) + 1
        assert passage.line_end == text.count("\n", 0, passage.char_end - 1) + 1
        piece_lines = piece.split("\n")
        assert len(piece_lines) == passage.line_end - passage.line_start + 1
        if len(piece_lines) == 1:
            assert piece in lines[passage.line_start - 1]
        else:
            assert lines[passage.line_start - 1].endswith(piece_lines[0])
            assert lines[passage.line_end - 1].startswith(piece_lines[-1])
            assert piece_lines[1:-1] == lines[passage.line_start : passage.line_end - 1]


def repeated_table_header(text: str, passage: PassageSpan) -> str:
    """The header and delimiter rows of the table the passage starts inside, as they stand above it."""
    above = text[: passage.char_start].split("\n")[:-1]
    rows = len(list(takewhile(lambda line: line.startswith("|"), reversed(above))))
    header = above[len(above) - rows : len(above) - rows + 2]
    assert rows >= 2 and re.fullmatch(r"\|(-+\|)+", header[1]), "a piece starting inside a table"
    return "\n".join(header) + "\n"


def assert_covers_all_text(text: str, passages: list[PassageSpan], skippable: str = "") -> None:
    """Passages are in order, never overlap, and leave out nothing but white space (and ``skippable``)."""
    bounds = [(p.char_start, p.char_end) for p in passages] + [(len(text), len(text))]
    position = 0
    for start, end in bounds:
        assert start >= position
        gap = text[position:start]
        assert (re.sub(skippable, "", gap) if skippable else gap).strip() == ""
        position = end


def markdown_document(seed: int, sections: int = 30) -> str:
    rng = random.Random(seed)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda".split()
    parts = []
    for number in range(sections):
        parts.append("#" * rng.randint(1, 4) + f" Section {number}")
        for _ in range(rng.randint(0, 6)):
            sentences = [
                " ".join(rng.choices(words, k=rng.randint(3, 25))).capitalize() + "." for _ in range(rng.randint(1, 12))
            ]
            parts.append(("\n" if rng.random() < 0.3 else " ").join(sentences))
        if rng.random() < 0.3:
            parts.append("```python\n# not a heading\nprint('x')\n```")
        if rng.random() < 0.3:
            rows = [" | ".join(rng.choices(words, k=3)) for _ in range(rng.randint(1, 40))]
            parts.append("\n".join(["| Job | Program | Start |", "|---|---|---|", *(f"| {row} |" for row in rows)]))
    return "\n\n".join(parts) + "\n"


@pytest.mark.parametrize("text", ["", " ", "\n\n\n", " \t\n  \n"])
@pytest.mark.parametrize("kind", ["md", "txt", "pdf"])
def test_empty_or_blank_text_gives_no_passages(text, kind):
    assert split_passages(text, kind) == []


@pytest.mark.parametrize("kind", ["md", "txt", "docx"])
@pytest.mark.parametrize("seed", range(5))
def test_offsets_and_lines_round_trip(kind, seed):
    text = "\n\n" + markdown_document(seed) + "\n\n\n"
    passages = split_passages(text, kind)
    assert len(passages) > 3
    assert_exact_positions(text, passages)
    assert_covers_all_text(text, passages)
    assert all(len(p.text) <= CAP for p in passages)
    assert all(p.page is None for p in passages)


def test_heading_paths_nest_and_pop():
    text = (
        "Preamble before any heading.\n\n"
        "# Setup\n\nIntro.\n\n"
        "## Network\n\nNetwork text.\n\n"
        "### Proxy\n\nProxy text.\n\n"
        "## Storage ##\n\nStorage text.\n\n"
        "#### Deep under storage\n\nDeep text.\n\n"
        "# Operations\n\nOps text.\n"
    )
    passages = split_passages(text, "md")
    assert [(p.heading_path, p.text.splitlines()[-1]) for p in passages] == [
        ("", "Preamble before any heading."),
        ("Setup", "Intro."),
        ("Setup > Network", "Network text."),
        ("Setup > Network > Proxy", "Proxy text."),
        ("Setup > Storage", "Storage text."),
        ("Setup > Storage > Deep under storage", "Deep text."),
        ("Operations", "Ops text."),
    ]
    assert passages[3].text == "### Proxy\n\nProxy text."
    assert_exact_positions(text, passages)


def test_consecutive_headings_stay_with_their_first_body_text():
    text = "# Setup\n\n## Network\n\n### Proxy\n\nSet the proxy.\n"
    [passage] = split_passages(text, "md")
    assert passage.text == text.strip()
    assert passage.heading_path == "Setup > Network > Proxy"


def test_small_sections_are_not_merged():
    text = "# A\n\none.\n\n# B\n\ntwo.\n\n# C\n\nthree.\n"
    assert [p.text for p in split_passages(text, "md")] == ["# A\n\none.", "# B\n\ntwo.", "# C\n\nthree."]


def test_headings_inside_code_fences_are_ignored():
    text = (
        "# Guide\n\nBefore the code.\n\n"
        "```bash\n# install the package\n## also a comment\npip install cairn\n```\n\n"
        "~~~~\n# tilde fence\n~~~\n# still inside: the closing fence is too short\n~~~~\n\n"
        "After the code.\n\n"
        "## Next\n\nMore.\n"
    )
    passages = split_passages(text, "md")
    assert [p.heading_path for p in passages] == ["Guide", "Guide > Next"]
    assert "pip install cairn" in passages[0].text
    assert passages[0].text.endswith("After the code.")


def test_hash_lines_that_are_not_atx_headings():
    text = "#hashtag is not a heading\n\n    # indented four spaces is code\n\n####### seven is too many\n"
    [passage] = split_passages(text, "md")
    assert passage.heading_path == ""


def test_setext_headings_count_like_the_viewer_renders_them():
    text = (
        "pdfminer.six\n============\n\nIntro paragraph.\n\n"
        "Features\n--------\n\n- a list item\n---\n\n"
        "### Detail\n\nDetail text.\n\n"
        "Two line paragraph\nstill the paragraph\n---\n\nAfter.\n"
    )
    passages = split_passages(text, "md")
    # "- a list item" then "---" is a list and a thematic break; a two-line paragraph underlined
    # is one setext heading (CommonMark, as the viewer renders it: <h2>Two line paragraph …</h2>)
    assert [p.heading_path for p in passages] == [
        "pdfminer.six",
        "pdfminer.six > Features",
        "pdfminer.six > Features > Detail",
        "pdfminer.six > Two line paragraph still the paragraph",
    ]
    assert passages[1].text.startswith("Features\n--------")
    assert passages[3].text.startswith("Two line paragraph\nstill the paragraph\n---")
    assert_exact_positions(text, passages)


def test_plain_text_has_no_headings():
    text = "# Not a heading in a .txt file\n\nBody.\n"
    [passage] = split_passages(text, "txt")
    assert passage.heading_path == ""


def test_long_section_is_split_and_every_piece_keeps_the_heading_path():
    paragraph = "This paragraph talks about proxies and their settings in detail. " * 6
    text = "# Setup\n\n## Proxy\n\n" + "\n\n".join([paragraph.strip()] * 12) + "\n"
    passages = split_passages(text, "md")
    assert len(passages) >= 4
    assert {p.heading_path for p in passages} == {"Setup > Proxy"}
    assert all(TARGET // 2 <= len(p.text) <= CAP for p in passages[:-1])
    assert_exact_positions(text, passages)
    # Paragraph breaks are preferred: every piece holds whole paragraphs.
    assert all(p.text.endswith("detail.") for p in passages)


@pytest.mark.parametrize("target", [100, 300, 1000, 2000])
@pytest.mark.parametrize("seed", range(4))
def test_no_passage_above_the_cap(target, seed):
    text = markdown_document(seed, sections=60)
    passages = split_passages(text, "md", target=target)
    assert max(len(p.text) for p in passages) <= target * 3 // 2
    assert_exact_positions(text, passages)
    assert_covers_all_text(text, passages)


def test_one_long_paragraph_is_cut_at_sentence_ends():
    rng = random.Random(7)
    words = "the valve opens when the pressure in the upper chamber rises above its limit".split()
    sentences = []
    while sum(len(s) + 1 for s in sentences) < 5000:
        sentences.append(" ".join(rng.choices(words, k=rng.randint(5, 20))).capitalize() + rng.choice(".?!"))
    text = " ".join(sentences)[:5000].rsplit(" ", 1)[0] + "."
    passages = split_passages(text, "txt")
    assert len(passages) >= 4
    for passage in passages:
        assert len(passage.text) <= CAP
        assert passage.text[0].isupper()
        assert passage.text[-1] in ".?!"
    assert all(len(p.text) >= TARGET // 2 for p in passages[:-1])
    assert_exact_positions(text, passages)
    assert_covers_all_text(text, passages)


def test_text_without_sentence_ends_is_cut_at_white_space():
    text = " ".join(f"word{i}" for i in range(1200))
    passages = split_passages(text, "txt")
    assert all(len(p.text) <= CAP for p in passages)
    assert " ".join(p.text for p in passages) == text


def test_unbreakable_run_is_cut_hard_at_the_cap():
    text = "x" * 5000
    passages = split_passages(text, "txt")
    assert "".join(p.text for p in passages) == text
    assert all(len(p.text) == CAP for p in passages[:-1])


def test_long_run_after_a_short_word_is_cut_at_the_last_white_space():
    text = "Prefix " + "y" * 3000
    passages = split_passages(text, "txt")
    assert passages[0].text == "Prefix"
    assert all(len(p.text) <= CAP for p in passages)
    assert_covers_all_text(text, passages)


def test_figure_markers_are_never_split():
    rng = random.Random(3)
    parts = []
    for number in range(1, 200):
        parts.append(" ".join(rng.choices(["some", "words", "around", "figures"], k=rng.randint(5, 40))))
        parts.append(f"[Figure {number}: a diagram. It shows the pump, the valve and the tank in line]")
    text = " ".join(parts)
    passages = split_passages(text, "md")
    markers = [m.span() for m in re.finditer(r"\[Figure \d+: [^\]]*\]", text)]
    assert len(markers) == 199
    for start, end in markers:
        assert any(p.char_start <= start and end <= p.char_end for p in passages), text[start:end]
    assert all(len(p.text) <= CAP for p in passages)
    assert_exact_positions(text, passages)


def test_leading_and_trailing_blank_lines_are_not_part_of_a_passage():
    text = "\n\n   \nFirst paragraph.\n\n\n\n    indented code line\n\n  \n"
    passages = split_passages(text, "txt", target=40)
    assert [p.text for p in passages] == ["First paragraph.\n\n\n\n    indented code line"]
    assert passages[0].line_start == 4 and passages[0].line_end == 8


def test_a_piece_starting_at_a_line_keeps_its_indentation():
    text = ("A first paragraph of prose that fills the first passage nicely. " * 8).strip() + "\n\n"
    text += "    indented line that begins the second passage\n" + "    more indented text here\n" * 20
    passages = split_passages(text, "txt", target=500)
    assert passages[1].text.startswith("    indented line")
    assert_exact_positions(text, passages)


def pdf_document(pages: list[str]) -> str:
    return "\n".join(f"Page {n}\n{body}" for n, body in enumerate(pages, start=1)) + "\n"


def page_ranges(text: str, count: int) -> dict[int, tuple[int, int]]:
    starts = [0]
    for number in range(2, count + 1):
        starts.append(text.index(f"\nPage {number}\n", starts[-1]) + 1)
    return dict(zip(range(1, count + 1), zip(starts, starts[1:] + [len(text)])))


def schedule_table(rows: int, header: str = "| Job | Program / variant | Start |") -> str:
    return "\n".join(
        [
            header,
            "|---|---|---|",
            *(f"| Z_JOB_{n:03} | ZTW_PROGRAM_{n:03} / V{n} | Daily {n % 24:02}:00 |" for n in range(rows)),
        ]
    )


def test_a_table_cut_in_two_repeats_its_header_before_the_rows_of_every_further_piece():
    """Rows without their header are cells without names: neither the search nor the answer can tell the
    program from the start time."""
    text = f"# Batch schedule\n\nThe jobs of production.\n\n{schedule_table(60)}\n\nAfter the table.\n"
    passages = split_passages(text, "md", target=300)
    in_table = [p for p in passages if "Z_JOB_" in p.text]
    assert len(in_table) >= 4
    for passage in in_table[1:]:
        assert passage.text.startswith("| Job | Program / variant | Start |\n|---|---|---|\n| Z_JOB_")
        assert passage.heading_path == "Batch schedule" and len(passage.text) <= 450
    assert_exact_positions(text, passages)
    assert_covers_all_text(text, passages)
    rows = [line for p in in_table for line in slice_of(text, p).split("\n") if "Z_JOB_" in line]
    assert len(rows) == 60  # every row once, in the pieces' own text


def test_a_header_too_long_to_repeat_or_a_table_in_a_list_is_not_repeated():
    long_header = "| " + " | ".join(["A header far too long to repeat before every piece of rows"] * 3) + " |"
    wide = f"# Wide\n\n{schedule_table(60, long_header)}\n"
    listed = "# Listed\n\n- The schedule:\n\n" + "\n".join("  " + line for line in schedule_table(60).split("\n"))
    for text in (wide, listed + "\n"):
        passages = split_passages(text, "md", target=300)
        assert len(passages) >= 4
        assert all(p.text == slice_of(text, p) for p in passages)


def test_pdf_passages_start_with_their_page_line_and_never_span_pages():
    long_page = " ".join(f"Sentence number {i} on the long page." for i in range(200))
    text = pdf_document(
        [
            "Short first page.\nIt mentions Page 7 of another book on a line:\nPage 7\nand goes on.",
            long_page,
            "",
            "Final page with [Figure 1: page 4].",
        ]
    )
    passages = split_passages(text, "pdf")
    pages = page_ranges(text, 4)

    assert [p.page for p in passages].count(1) == 1  # the body line "Page 7" is not a page break
    assert "Page 7\nand goes on." in passages[0].text
    assert [p.page for p in passages].count(2) >= 5
    assert 3 not in [p.page for p in passages]  # a page with nothing but its page line
    for passage in passages:
        start, end = pages[passage.page]
        assert start <= passage.char_start < passage.char_end <= end
        assert passage.text.startswith(f"Page {passage.page}\n")
        assert len(passage.text) <= CAP
        assert passage.heading_path == ""

    first, *rest = [p for p in passages if p.page == 2]
    assert first.char_start == pages[2][0] and first.text == slice_of(text, first)
    for piece in rest:
        assert piece.text == "Page 2\n" + slice_of(text, piece)
        assert piece.text.split("\n", 1)[1][0].isupper()  # cut at a sentence end
    assert_exact_positions(text, passages)
    assert_covers_all_text(text, passages, skippable="Page 3")  # the empty page


def test_pdf_long_unbreakable_page_repeats_the_page_line():
    text = pdf_document(["z" * 4000, "short"])
    passages = split_passages(text, "pdf")
    page1 = [p for p in passages if p.page == 1]
    assert len(page1) >= 3
    assert all(p.text.startswith("Page 1\n") and len(p.text) <= CAP for p in page1)
    assert "".join(slice_of(text, p) for p in page1).replace("\n", "") == "Page 1" + "z" * 4000
    assert passages[-1].text == "Page 2\nshort"


def test_pdf_pieces_respect_a_small_target_including_the_page_line():
    text = pdf_document(["word " * 400])
    passages = split_passages(text, "pdf", target=100)
    assert all(len(p.text) <= 150 for p in passages)
    assert all(p.text.startswith("Page 1\n") for p in passages)


@pytest.mark.parametrize(
    "text",
    [
        "Emoji 👩‍👩‍👧‍👦 family and flags 🇫🇷 and accents é (e + combining) here. " * 120,
        "这是一个关于水泵和阀门的测试句子。" * 400,
        "👍🏽" * 3000,
        "🇫🇷🇩🇪" * 1200 + "🇫",
        "e\u0301" * 4000,
    ],
)
def test_unicode_text_is_cut_between_whole_characters(text):
    passages = split_passages(text, "md")
    assert_exact_positions(text, passages)
    assert_covers_all_text(text, passages)
    for passage in passages:
        assert len(passage.text) <= CAP
        first = passage.text[0]
        assert unicodedata.category(first) not in ("Mn", "Mc", "Me") and first != "\u200d"
        assert not 0x1F3FB <= ord(first) <= 0x1F3FF
        assert passage.text[-1] != "\u200d"
    flags = [p for p in passages if p.text.startswith("\U0001f1eb")]
    assert all(p.char_start % 2 == 0 for p in flags)  # never half a flag


def test_cjk_sentences_are_cut_at_full_stops():
    text = "这是一个关于水泵和阀门的测试句子。" * 400
    passages = split_passages(text, "txt")
    assert all(p.text.endswith("。") for p in passages)


def test_400k_characters_are_handled():
    text = markdown_document(11, sections=800)
    while len(text) < 400_000:
        text += markdown_document(len(text), sections=50)
    text = text[:400_000]
    passages = split_passages(text, "md")
    assert 300 <= len(passages) <= 1200
    assert max(len(p.text) for p in passages) <= CAP
    assert_covers_all_text(text, passages)
    assert all(slice_of(text, p) == p.text for p in passages)


def test_kind_is_normalised_and_target_is_checked():
    assert split_passages("# A\n\nb\n", ".MD")[0].heading_path == "A"
    with pytest.raises(ValueError, match="at least"):
        split_passages("text", "md", target=10)


def test_line_breaks_are_exactly_those_str_splitlines_breaks_at():
    """Passages, the viewer and the PDF view count lines by one LINE_BREAKS; it must be Python's own list."""
    from portal.ingest.markdown_blocks import LINE_BREAKS

    assert set(LINE_BREAKS) == {c for c in map(chr, range(0x110000)) if len(f"a{c}b".splitlines()) == 2}
