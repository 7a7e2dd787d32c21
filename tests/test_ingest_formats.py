"""Reading uploads (portal.ingest): formats, limits, refusals and figures, on generated files.

Most tests go through ``read_upload`` and the real child process. Tests that
move a limit run the child's code in this process (``in_process``) so that the
monkeypatched limit applies.
"""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from portal.documents.render import render_markdown
from portal.errors import Refused
from portal.ingest import formats, limits
from portal.ingest import reader_child as worker
from portal.ingest import reader_parent as reader_process
from portal.ingest.figures import assemble, figure_label, placeholder
from portal.ingest.formats import Extracted, read_upload
from portal.ingest.markers import figure_markers, images_line, is_page_line
from resources.make_fixtures import (
    PdfImage,
    PdfPage,
    add_hyperlink,
    add_picture,
    animated_bytes,
    docx_bytes,
    encrypted_docx,
    exif_with_orientation,
    image_bytes,
    pdf_bytes,
    replace_part,
    rgb_image,
    riff_chunks,
    text_pdf,
)

PNG = image_bytes(96, 64, "PNG", (220, 40, 40))
JPEG = image_bytes(96, 64, "JPEG", (40, 40, 220))
LONG_ALT = "A very long description " + "of a diagram with many labelled boxes " * 8


def refusal(filename: str, data: bytes, content_type: str | None = None) -> Refused:
    with pytest.raises(Refused) as caught:
        read_upload(filename, data, content_type)
    assert caught.value.message
    return caught.value


@pytest.fixture
def in_process(monkeypatch):
    """Run the reading child's code in this process, so monkeypatched limits reach it."""
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", Image.MAX_IMAGE_PIXELS)  # restored afterwards

    def run_reader(kind, data, *, label=None):
        stream = bytearray()
        request = {"kind": kind, "label": label, "image_seconds": limits.IMAGE_SECONDS}
        worker.serve(request, data, lambda meta, blob=b"": stream.extend(worker.pack_frame(meta, blob)))
        conversation = reader_process._Conversation(kind)
        conversation.receive(bytes(stream))
        assert conversation.done
        return conversation.result

    monkeypatch.setattr(formats, "run_reader", run_reader)


# --- extension, content type, size, bytes ---------------------------------------


@pytest.mark.parametrize("name", ["photo.gif", "sheet.xlsx", "slides.pptx", "README", "notes.rtf", "a.tar.gz"])
def test_other_types_are_refused_by_extension(name):
    assert refusal(name, b"whatever").reason == "unsupported_type"


@pytest.mark.parametrize("name, shown", [("notes.md ", "'.md '"), ("plan.pdf\u00a0", "'.pdf\u00a0'")])
def test_blank_space_after_an_accepted_extension_is_named_as_the_problem(name, shown):
    """ "notes.md " was refused as "Files of type .md  are not accepted", which reads as though .md were
    refused. Found by uploading a name ending in a space."""
    refused = refusal(name, b"# Notes\n\nText.\n")
    assert refused.reason == "unsupported_type"
    assert refused.message == (
        f"The file name ends in {shown}: blank space after the extension. "
        "Rename the file without it and upload it again."
    )


def test_old_word_files_are_told_to_save_as_docx():
    refused = refusal("minutes.DOC", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100)
    assert refused.reason == "unsupported_type"
    assert ".docx" in refused.message


def test_a_gif_image_file_is_refused_even_when_it_is_a_real_gif():
    assert refusal("anim.gif", animated_bytes(), "image/gif").reason == "unsupported_type"


@pytest.mark.parametrize(
    "name, content_type",
    [
        ("manual.pdf", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("notes.md", "application/pdf"),
        ("photo.png", "image/jpeg"),
        ("report.docx", "application/msword"),
    ],
)
def test_a_content_type_that_contradicts_the_extension_is_refused(name, content_type):
    assert refusal(name, b"# hello", content_type).reason == "type_mismatch"


@pytest.mark.parametrize(
    "name, content_type",
    [
        ("notes.md", None),
        ("notes.md", ""),
        ("notes.md", "application/octet-stream"),
        ("notes.md", "text/markdown"),
        ("notes.md", "text/x-markdown"),
        ("notes.md", "text/plain; charset=utf-8"),
        ("notes.TXT", "text/plain"),
    ],
)
def test_usual_content_types_are_accepted(name, content_type):
    assert read_upload(name, b"# hello\n", content_type).text == "# hello\n"


def test_usual_image_content_types_are_accepted():
    assert read_upload("photo.JPG", JPEG, "image/jpeg").kind == "image"
    assert read_upload("photo.jpeg", JPEG, "image/pjpeg").kind == "image"


def test_too_large_is_refused_before_the_bytes_are_looked_at():
    data = b"\x89PNG not really" + b"\0" * limits.MAX_FILE_BYTES
    refused = refusal("big.pdf", data)
    assert refused.reason == "too_large"
    assert "4 MB" in refused.message


@pytest.mark.parametrize(
    "name, data, found",
    [
        ("scan.pdf", PNG, "PNG"),
        ("photo.png", JPEG, "JPEG"),
        ("photo.jpg", PNG, "PNG"),
        ("photo.webp", PNG, "PNG"),
        ("report.docx", b"%PDF-1.4\n%%EOF", "PDF"),
        ("notes.txt", b"%PDF-1.4\nsome text\n%%EOF\n", "PDF"),
        ("notes.md", PNG, "PNG"),
    ],
)
def test_bytes_that_are_not_what_the_extension_says_are_refused(name, data, found):
    refused = refusal(name, data)
    assert refused.reason == "type_mismatch"
    assert found in refused.message


def test_a_zip_that_is_not_a_word_document_is_refused_as_mismatch():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("hello.txt", "hi")
    assert refusal("report.docx", out.getvalue()).reason == "type_mismatch"


@pytest.mark.parametrize("name", ["empty.md", "empty.txt", "empty.pdf", "empty.docx", "empty.png"])
def test_zero_bytes_are_empty(name):
    assert refusal(name, b"").reason == "empty"


# --- Markdown and text ------------------------------------------------------------


def test_text_is_stored_as_written_with_plain_newlines():
    extracted = read_upload("C:\\Users\\me\\Runbook Notes.md", "\ufeff# Title\r\nline\rnext\n\n  code\n".encode())
    assert extracted == Extracted(
        text="# Title\nline\nnext\n\n  code\n", kind="markdown", original=None, title_hint="Runbook Notes"
    )
    assert read_upload("notes.txt", b"plain").kind == "text"


def test_text_that_merely_mentions_a_signature_is_text():
    text = b"BMW notes: a PDF starts with %PDF-1.7 and a zip with PK.\n"
    assert read_upload("notes.md", text).text == text.decode()


def test_utf16_with_a_byte_order_mark_is_read():
    assert read_upload("notes.txt", "Grüße\r\n".encode("utf-16")).text == "Grüße\n"


@pytest.mark.parametrize("data", [b"caf\xe9 au lait", "no BOM".encode("utf-16-le")])
def test_text_that_is_not_utf8_is_refused_as_encoding(data):
    refused = refusal("notes.txt", data)
    assert refused.reason == "encoding"
    assert "UTF-8" in refused.message


@pytest.mark.parametrize(
    "data, message",
    [
        # Valid UTF-8, so not called invalid; counted in bytes, the two letters before it taking two each.
        ("Grüße\x00tail".encode(), "holds a NUL byte (at byte 7)"),
        ("no BOM".encode("utf-16-le"), "holds a NUL byte (at byte 1)"),
        (b"\xef\xbb\xbfab\xff", "not valid UTF-8 (first bad byte at position 5)"),  # the byte order mark counts
    ],
)
def test_an_encoding_refusal_names_what_it_found_where_it_is(data, message):
    refused = refusal("notes.txt", data)
    assert refused.reason == "encoding"
    assert message in refused.message


def test_blank_text_is_empty():
    assert refusal("blank.md", " \t\n\r\n\u00a0\u00a0\n".encode()).reason == "empty"


def test_text_limit_is_exact_and_never_cuts():
    assert len(read_upload("a.txt", b"x" * limits.MAX_TEXT_CHARS).text) == 400_000
    refused = refusal("a.txt", b"x" * (limits.MAX_TEXT_CHARS + 1))
    assert refused.reason == "too_many_chars"
    assert "400,000" in refused.message


# --- Word -------------------------------------------------------------------------


def sample_document(document):
    document.add_heading("Cutover runbook", level=0)
    document.add_heading("Before the window", level=1)
    paragraph = document.add_paragraph("Stop the ")
    paragraph.add_run("batch jobs").bold = True
    paragraph.add_run(" and ")
    paragraph.add_run("wait").italic = True
    paragraph.add_run(". See ")
    add_hyperlink(paragraph, "the calendar", "https://example.test/calendar")
    paragraph.add_run(" and ")
    add_hyperlink(paragraph, "this", "javascript:alert(1)")
    paragraph.add_run(".")
    document.add_paragraph("Queues drained", style="List Bullet")
    document.add_paragraph("Users locked", style="List Bullet")
    document.add_paragraph("Export the plan", style="List Number")
    document.add_paragraph("Import the plan", style="List Number")
    document.add_heading("Systems", level=2)
    table = document.add_table(rows=3, cols=2)
    for row, cells in zip(table.rows, [("System", "Owner"), ("PRD", "Basis | Ops"), ("QAS", "")], strict=True):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    add_picture(document, PNG, alt="Cutover flow:\nstop, export, import")
    add_picture(document, JPEG)  # no alt text
    add_picture(document, PNG, alt=LONG_ALT)
    document.add_paragraph("End.")


SAMPLE_DOCX = docx_bytes(sample_document)


def test_word_becomes_markdown_in_document_order():
    extracted = read_upload("runbook.docx", SAMPLE_DOCX)
    long_label = figure_label(LONG_ALT)
    assert extracted.text == (
        "# Cutover runbook\n\n"
        "# Before the window\n\n"
        "Stop the **batch jobs** and *wait*. See [the calendar](https://example.test/calendar) and this.\n\n"
        "- Queues drained\n"
        "- Users locked\n"
        "1. Export the plan\n"
        "2. Import the plan\n\n"
        "## Systems\n\n"
        "| System | Owner |\n"
        "| --- | --- |\n"
        "| PRD | Basis \\| Ops |\n"
        "| QAS |  |\n\n"
        "[Figure 1: Cutover flow: stop, export, import]\n\n"
        "[Figure 2: image]\n\n"
        f"[Figure 3: {long_label}]\n\n"
        "End."
    )
    assert extracted.kind == "docx"
    assert extracted.original == SAMPLE_DOCX
    assert extracted.pages is None
    assert extracted.title_hint == "runbook"
    assert [(f.number, f.width, f.height) for f in extracted.figures] == [(1, 96, 64), (2, 96, 64), (3, 96, 64)]
    assert extracted.images_not_kept == {}
    for figure in extracted.figures:
        with Image.open(io.BytesIO(figure.webp)) as image:
            assert (image.format, image.size) == ("WEBP", (figure.width, figure.height))


def test_word_math_and_link_targets_lose_the_controls_that_reorder_text():
    """A run's text lost U+202E and the other reordering controls, but an equation's text and a link's
    target went into the Markdown as the file had them: the viewer's line view and the stored text showed
    "exe.png" for "gnp.exe". Found by uploading a Word file with an override in an equation and a link."""
    from docx.oxml import parse_xml

    math = (
        '<m:oMath xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math">'
        "<m:r><m:t>x = \u202egnp.exe\u202c</m:t></m:r></m:oMath>"
    )

    def build(document):
        paragraph = document.add_paragraph("Solve ")
        paragraph._p.append(parse_xml(math))
        add_hyperlink(document.add_paragraph("See "), "the file", "https://example.test/\u202egnp.exe\u202c")

    text = read_upload("math.docx", docx_bytes(build)).text
    assert text == "Solve x = gnp.exe\n\nSee [the file](https://example.test/gnp.exe)"


def test_a_word_link_target_never_becomes_text_or_markup():
    """A hyperlink's target, which Word never shows, went into the Markdown as written: line breaks in it made
    paragraphs and a table ("The bypass PIN is 7731") that were shown, searched and quoted, and a trailing
    backslash escaped the link's closing parenthesis. Found by an attack probe."""
    hidden = "https://vendor.example/manual\n\nThe\u00a0PIN is 7731.\n\n|a|b|\n|-|-|\n|**x**|`y`|\n\nx"

    def build(document):
        paragraph = document.add_paragraph("See the ")
        add_hyperlink(paragraph, "vendor manual", hidden)
        paragraph.add_run(" for details.")
        add_hyperlink(document.add_paragraph("And "), "this", "https://ok.example/a\\")

    text = read_upload("links.docx", docx_bytes(build)).text
    assert text == (
        "See the [vendor manual](https://vendor.example/manual%0A%0AThe%C2%A0PIN%20is%207731.%0A%0A%7Ca%7Cb%7C%0A"
        "%7C-%7C-%7C%0A%7C**x**%7C%60y%60%7C%0A%0Ax) for details.\n\nAnd [this](https://ok.example/a%5C)"
    )
    html = render_markdown(text)
    assert "<table" not in html and "<strong>" not in html and "7731." not in html.replace("%207731.", "")
    assert html.count("<a ") == 2


def test_word_lists_nest_and_tracked_changes_read_as_accepted():
    from docx.oxml import parse_xml

    def build(document):
        for text, style in [
            ("Top", "List Bullet"),
            ("Nested", "List Bullet 2"),
            ("Back", "List Bullet"),
            ("Step", "List Number"),
            ("Sub step", "List Number 2"),
            ("Step two", "List Number"),
        ]:
            document.add_paragraph(text, style=style)
        document.element.body[-1].addprevious(
            parse_xml(
                '<w:p xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
                '<w:r><w:t xml:space="preserve">Kept </w:t></w:r><w:ins w:id="1" w:author="a"><w:r><w:t>added'
                '</w:t></w:r></w:ins><w:del w:id="2" w:author="a"><w:r><w:delText>removed</w:delText></w:r></w:del>'
                '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE </w:instrText></w:r>'
                '<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t xml:space="preserve"> 7</w:t></w:r>'
                '<w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>'
            )
        )

    assert read_upload("lists.docx", docx_bytes(build)).text == (
        "- Top\n  - Nested\n- Back\n1. Step\n   1. Sub step\n2. Step two\n\nKept added 7"
    )


def test_a_list_in_a_word_table_cell_keeps_its_items_apart_in_the_text_and_the_answerers_row():
    """A cell's list ran on as one line of words ("- Stop the job - Clear the queue"): each item is now
    followed by "; " (a numbered one keeps its number), so the table stays one line per row, as Markdown
    needs, and the answerer's "Header: value" unit reads the items apart."""
    from portal.answers.units import split_sentences
    from portal.ingest.markdown_blocks import markdown_blocks

    def build(document):
        table = document.add_table(rows=2, cols=3)
        for cell, text in zip(table.rows[0].cells, ("Task", "Steps", "Checks"), strict=True):
            cell.text = text
        task, steps, checks = table.rows[1].cells
        task.text = "Restart the spool"
        steps.paragraphs[0].text = "In this order:"
        for step in ("Stop the job", "Clear the queue"):
            steps.add_paragraph(step, style="List Number")
        checks.paragraphs[0].text = "Disk space"
        checks.paragraphs[0].style = document.styles["List Bullet"]
        checks.add_paragraph("Spool size", style="List Bullet")
        checks.add_paragraph("Then tell the owner.")

    text = read_upload("restart.docx", docx_bytes(build)).text
    assert text == (
        "| Task | Steps | Checks |\n"
        "| --- | --- | --- |\n"
        "| Restart the spool | In this order: 1. Stop the job; 2. Clear the queue | Disk space; Spool size; "
        "Then tell the owner. |"
    )
    rows = [b for b in markdown_blocks(text) if b.kind == "table_row"]
    assert [r.cells for r in rows] == [
        (
            "Restart the spool",
            "In this order: 1. Stop the job; 2. Clear the queue",
            "Disk space; Spool size; Then tell the owner.",
        )
    ]
    assert split_sentences(text) == [
        "Task: Restart the spool; Steps: In this order: 1. Stop the job; 2. Clear the queue; "
        "Checks: Disk space; Spool size; Then tell the owner.",
    ]


def test_long_alt_text_is_cut_at_a_word_boundary():
    label = figure_label(LONG_ALT)
    assert len(label) <= 200 and label.endswith("…")
    assert LONG_ALT.startswith(label[:-1])
    assert LONG_ALT[len(label) - 1] == " "
    assert figure_label("a [b] c") == "a (b) c"
    assert figure_label("  ") == "image"


def test_word_pictures_that_are_not_kept_are_counted_by_reason():
    def build(document):
        document.add_paragraph("Pictures follow.")
        becomes_tiff = image_bytes(96, 64, "PNG", (0, 200, 0))  # python-docx shares identical pictures
        for data, alt in [
            (PNG, "kept png"),
            (becomes_tiff, "becomes tiff"),
            (animated_bytes(), "animated gif"),
            (image_bytes(20, 200), "too narrow"),
            (JPEG, "kept jpeg"),
        ]:
            add_picture(document, data, alt=alt)

    docx = docx_bytes(build)
    with zipfile.ZipFile(io.BytesIO(docx)) as archive:
        media = sorted(n for n in archive.namelist() if n.startswith("word/media/"))
    tiff = io.BytesIO()
    Image.new("RGB", (96, 64)).save(tiff, "TIFF")
    docx = replace_part(docx, media[1], tiff.getvalue())  # bytes decide the type, not the name
    extracted = read_upload("pictures.docx", docx)
    assert [f.label for f in extracted.figures] == ["kept png", "kept jpeg"]
    assert extracted.images_not_kept == {"type": 1, "size": 1, "decode": 1}
    assert extracted.text.endswith("[Figure 2: kept jpeg]\n\nImages: 2 kept, 3 not kept (type: 1, size: 1, decode: 1)")


def test_a_word_file_of_pictures_only_is_accepted_for_its_figures():
    docx = docx_bytes(lambda document: [add_picture(document, PNG) for _ in range(2)])
    extracted = read_upload("pictures.docx", docx)
    assert extracted.text == "[Figure 1: image]\n\n[Figure 2: image]"


def test_a_word_file_with_nothing_kept_and_no_text_is_empty():
    docx = docx_bytes(lambda document: add_picture(document, image_bytes(8, 8)))
    refused = refusal("tiny.docx", docx)
    assert refused.reason == "empty"
    assert "Images: 0 kept, 1 not kept (size: 1)" in refused.message
    assert refusal("blank.docx", docx_bytes(lambda document: document.add_paragraph("  "))).reason == "empty"


def test_an_encrypted_word_file_is_refused_before_its_pictures_are_read():
    refused = refusal("secret.docx", encrypted_docx(SAMPLE_DOCX))
    assert refused.reason == "encrypted"
    assert "remove the password, save, upload again" in refused.message


def test_a_word_file_with_a_broken_part_is_damaged():
    truncated = SAMPLE_DOCX[: len(SAMPLE_DOCX) // 2]
    assert refusal("half.docx", truncated).reason == "damaged"
    broken = replace_part(SAMPLE_DOCX, "word/document.xml", b"<w:document><unclosed>")
    refused = refusal("broken.docx", broken)
    assert refused.reason == "damaged" and "possibly damaged" in refused.message


def test_more_than_forty_pictures_are_counted(in_process):
    docx = docx_bytes(lambda document: [add_picture(document, PNG, alt=f"p{n}") for n in range(42)])
    extracted = read_upload("many.docx", docx)
    assert len(extracted.figures) == 40
    assert extracted.figures[-1].label == "p39"
    assert extracted.images_not_kept == {"count": 2}


def test_image_bytes_and_pool_limits(in_process, monkeypatch):
    big = image_bytes(200, 200, "PNG", (1, 2, 3), compress_level=0)  # about 120 KB as stored
    small = image_bytes(40, 40, "PNG")
    docx = docx_bytes(lambda document: [add_picture(document, data) for data in (small, big, big, small)])
    monkeypatch.setattr(limits, "MAX_IMAGE_BYTES", 100_000)
    assert read_upload("a.docx", docx).images_not_kept == {"bytes": 2}  # each use of the part counts
    monkeypatch.setattr(limits, "MAX_IMAGE_BYTES", 5 * 1024 * 1024)
    monkeypatch.setattr(limits, "MAX_IMAGE_POOL_BYTES", len(small) + len(big) - 1)
    extracted = read_upload("a.docx", docx)
    assert extracted.images_not_kept == {"pool": 2}
    assert len(extracted.figures) == 2  # the small picture's second use costs nothing more


def test_an_oversized_word_part_is_refused_before_it_is_unpacked(in_process, monkeypatch):
    monkeypatch.setattr(limits, "MAX_DOCX_PART_BYTES", 1000)
    refused = refusal("big.docx", SAMPLE_DOCX)
    assert refused.reason == "damaged"
    assert f"over the {limits.megabytes(1000)} that is read" in refused.message  # the limit in force, not a literal


def test_pictures_run_out_of_time_and_are_counted(in_process, monkeypatch):
    monkeypatch.setattr(limits, "IMAGE_SECONDS", 0)
    extracted = read_upload("runbook.docx", SAMPLE_DOCX)
    assert extracted.figures == []
    assert extracted.text.endswith("\n\nEnd.\n\nImages: 0 kept, 3 not kept (deadline: 3)")


def test_a_child_stopped_during_its_pictures_still_gives_the_text(monkeypatch):
    """Whether the child stops itself or the parent kills it, unfinished pictures count as deadline."""
    monkeypatch.setattr(limits, "IMAGE_SECONDS", 0)
    monkeypatch.setattr(reader_process, "_GRACE_SECONDS", 0)
    extracted = read_upload("runbook.docx", SAMPLE_DOCX)
    assert extracted.figures == []
    assert extracted.text.endswith("\n\nEnd.\n\nImages: 0 kept, 3 not kept (deadline: 3)")


# --- PDF --------------------------------------------------------------------------


def test_pdf_text_is_read_page_by_page():
    pdf = pdf_bytes([PdfPage(["First page text."]), PdfPage([]), PdfPage(["Third (page) text."])])
    extracted = read_upload("guide.pdf", pdf, "application/pdf")
    assert extracted.text == "Page 1\n\nFirst page text.\n\nPage 2\n\nPage 3\n\nThird (page) text."
    assert (extracted.kind, extracted.pages, extracted.original) == ("pdf", 3, pdf)


def test_pdf_images_are_figures_labelled_with_their_page():
    photo = image_bytes(3000, 2000, "JPEG", (10, 200, 10))
    pdf = pdf_bytes(
        [
            PdfPage(["Cover."]),
            PdfPage(["Diagram page."], [rgb_image(64, 48), PdfImage(3000, 2000, photo, jpeg=True)]),
            PdfPage(["Icons."], [rgb_image(16, 16)]),
        ]
    )
    extracted = read_upload("guide.pdf", pdf)
    assert extracted.text == (
        "Page 1\n\nCover.\n\nPage 2\n\nDiagram page.\n\n[Figure 1: Page 2]\n\n[Figure 2: Page 2]\n\n"
        "Page 3\n\nIcons.\n\nImages: 2 kept, 1 not kept (size: 1)"
    )
    assert [(f.label, f.width, f.height) for f in extracted.figures] == [("Page 2", 64, 48), ("Page 2", 1568, 1045)]


def test_a_pdf_of_page_images_only_is_scanned_and_blank_pages_are_empty():
    scanned = pdf_bytes([PdfPage([], [rgb_image(300, 400)])])
    refused = refusal("scan.pdf", scanned)
    assert refused.reason == "scanned_pdf"
    assert "reading text from images is not supported yet" in refused.message
    assert refusal("blank.pdf", pdf_bytes([PdfPage([]), PdfPage([])])).reason == "empty"


def test_a_pdf_over_the_page_limit_is_refused():
    refused = refusal("long.pdf", text_pdf(301, lines_per_page=1, width=20))
    assert refused.reason == "too_many_pages"
    assert "300" in refused.message
    assert read_upload("ok.pdf", text_pdf(300, lines_per_page=1, width=20)).pages == 300


def test_a_pdf_over_the_text_limit_is_refused():
    refused = refusal("dense.pdf", text_pdf(120, lines_per_page=50, width=92))
    assert refused.reason == "too_many_chars"


def test_a_truncated_pdf_is_damaged():
    pdf = text_pdf(4)
    assert refusal("half.pdf", pdf[: len(pdf) // 2]).reason == "damaged"


# --- image files ------------------------------------------------------------------


def test_an_image_file_is_a_document_of_its_own():
    extracted = read_upload("Network diagram.png", image_bytes(3000, 1500), "image/png")
    assert extracted.text == "[Figure 1: Network diagram]"
    assert (extracted.kind, extracted.original is not None, extracted.pages) == ("image", True, None)
    (figure,) = extracted.figures
    assert (figure.number, figure.label, figure.width, figure.height) == (1, "Network diagram", 1568, 784)
    assert riff_chunks(figure.webp) == [b"VP8L"]  # lossless, and nothing else in the file


def test_kept_images_lose_their_metadata_but_keep_their_orientation():
    from PIL import ImageCms

    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    jpeg = image_bytes(80, 40, "JPEG", exif=exif_with_orientation(6), icc_profile=srgb)
    with Image.open(io.BytesIO(jpeg)) as original:
        assert original.info.get("icc_profile") and original.getexif()
    (figure,) = read_upload("photo.jpg", jpeg).figures
    assert (figure.width, figure.height) == (40, 80)  # rotated upright, then the EXIF dropped
    assert riff_chunks(figure.webp) == [b"VP8L"]
    assert b"Exif" not in figure.webp and b"camera serial" not in figure.webp
    png = image_bytes(64, 64, "PNG", exif=exif_with_orientation(1))
    assert riff_chunks(read_upload("shot.png", png).figures[0].webp) == [b"VP8L"]


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("narrow.png", image_bytes(31, 400), "size"),
        ("anim.png", animated_bytes("PNG"), "decode"),
        ("anim.webp", animated_bytes("WEBP"), "decode"),
        ("broken.png", PNG[:60], "decode"),
        ("huge.png", image_bytes(4000, 2001, "PNG", compress_level=1), "pixels"),
    ],
)
def test_an_image_file_that_cannot_be_kept_is_refused_with_the_reason(name, data, reason):
    refused = refusal(name, data)
    assert refused.reason == reason


# --- the child process --------------------------------------------------------------


def child_processes() -> set[int]:
    children = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        children |= {int(pid) for pid in (task / "children").read_text().split()}
    return children


def test_reading_that_runs_out_of_time_is_stopped(monkeypatch):
    before = child_processes()
    monkeypatch.setattr(limits, "READ_SECONDS", 0.01)
    refused = refusal("guide.pdf", text_pdf(2))
    assert refused.reason == "timeout"
    assert "0.01 seconds" in refused.message
    assert child_processes() == before


def test_refusals_leave_no_temporary_files(tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", None)
    for name, data in [
        ("half.pdf", text_pdf(3)[:500]),
        ("secret.docx", encrypted_docx(SAMPLE_DOCX)),
        ("huge.png", image_bytes(4000, 2001, "PNG", compress_level=1)),
        ("ok.docx", SAMPLE_DOCX),
    ]:
        try:
            read_upload(name, data)
        except Refused:
            pass
    monkeypatch.setattr(limits, "READ_SECONDS", 0.01)
    with pytest.raises(Refused):
        read_upload("guide.pdf", text_pdf(2))
    assert list(scratch.iterdir()) == []


def test_the_child_process_cannot_take_unbounded_memory():
    import subprocess
    import sys

    probe = (
        "import sys, types; package = types.ModuleType('portal'); package.__path__ = [sys.argv[1]]; "
        "sys.modules['portal'] = package; from portal.ingest import reader_child; reader_child._limit_resources()\n"
        "try:\n    bytearray(3 * 1024 ** 3)\nexcept MemoryError:\n    print('bounded')\n"
        "print('flask' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-c", probe, str(reader_process.PORTAL_DIR)], capture_output=True, text=True, timeout=30
    )
    assert result.stdout.split() == ["bounded", "False"]


# --- figure markers ------------------------------------------------------------------


def test_markers_are_numbered_in_order_and_unkept_pictures_leave_no_gap():
    text = f"Intro {placeholder(0)} text\n\n{placeholder(1)}\n\n{placeholder(2)}\n\nEnd"
    assembled = assemble(text, ["a", "b", "c"], {1: (b"w", 40, 40), 2: (b"w", 40, 40)}, {0: "type"})
    assert assembled.text == (
        "Intro text\n\n[Figure 1: b]\n\n[Figure 2: c]\n\nEnd\n\nImages: 2 kept, 1 not kept (type: 1)"
    )
    assert [f.number for f in assembled.figures] == [1, 2]


def test_a_picture_not_kept_never_joins_the_authors_text_into_a_marker():
    """Removing a picture that was not kept puts its neighbours side by side: what they then spell stays text."""
    text = f"[Figure {placeholder(0)} 1: typed around a picture] and {placeholder(1)}\n\nPa{placeholder(2)}ge 2"
    assembled = assemble(text, ["a", "b", "c"], {1: (b"w", 40, 40)}, {0: "type", 2: "type"})
    assert figure_markers(assembled.text) == [(1, "b")]
    lines = assembled.text.split("\n")
    assert lines[0].replace("\u2060", "") == "[Figure 1: typed around a picture] and [Figure 1: b]"
    assert not is_page_line(lines[2]) and lines[2].replace("\u2060", "") == "Page 2"


def test_images_line_lists_reasons_in_the_spec_order():
    line = images_line(2, {"decode": 1, "type": 2, "pixels": 1})
    assert line == "Images: 2 kept, 4 not kept (type: 2, pixels: 1, decode: 1)"


def test_reading_a_pdfs_images_logs_no_warning_of_pypdfium2(caplog):
    """Each image of a PDF is drawn into pdfium's own bitmap and closed once encoded; pypdfium2 warned on every such
    close, "Explicitly closing … potentially unsafe", which filled the server log (browser walkthrough)."""
    import logging

    from helpers import FIXTURES_DIR, require_shared_fixtures
    from portal.ingest.images import ImageBudget, PreparedImage
    from portal.ingest.pdf_reader import read_pdf

    require_shared_fixtures()
    data = FIXTURES_DIR / "pypdf_side-by-side-subfig.pdf"
    reading = read_pdf(data.read_bytes())
    try:
        with caplog.at_level(logging.WARNING):
            outcomes = [outcome for _, outcome in reading.images(ImageBudget(60))]
    finally:
        reading.close()
    assert len(outcomes) == 2 and all(isinstance(outcome, PreparedImage) for outcome in outcomes)
    assert not [r for r in caplog.records if "potentially unsafe" in r.getMessage()]
