"""Every real upload fixture of ../shared/fixtures/uploads gets its MANIFEST.tsv outcome.

Skipped when that folder is absent (set CAIRN_SHARED_DIR to the shared folder), except under CI=true.
The fixtures carry their own projects' licences and are never copied here.
"""

from __future__ import annotations

import csv
import hashlib
import resource

import pytest

from helpers import FIXTURES_DIR, require_shared_fixtures
from portal.errors import Refused
from portal.ingest.formats import read_upload

require_shared_fixtures(allow_module_level=True)

# Manifest reason labels → ingest reason codes (fixtures/uploads/README.md).
REASONS = {
    "scanned_pdf": "scanned_pdf",
    "encrypted_pdf": "encrypted",
    "encrypted_docx": "encrypted",
    "damaged_pdf": "damaged",
    "damaged_docx": "damaged",
    "empty": "empty",
    "legacy_doc": "unsupported_type",
    "extension_mismatch": "type_mismatch",
    "pixels": "pixels",
    "size": "size",
}

with (FIXTURES_DIR / "MANIFEST.tsv").open(encoding="utf-8") as manifest:
    ROWS = list(csv.DictReader(manifest, delimiter="\t"))


def labels(extracted):
    return [figure.label for figure in extracted.figures]


def sizes(extracted):
    return [(figure.width, figure.height) for figure in extracted.figures]


def near(size, expected, slack=2):
    """PDF images are taken as drawn (soft mask applied), which can round a pixel either way."""
    return all(abs(a - b) <= slack for a, b in zip(size, expected, strict=True))


# What the manifest notes say beyond "accept", per file.
ACCEPTED = {
    "pypdf_GeoBase_NHNC1_Data_Model_UML_EN.pdf": lambda e: (
        e.pages == 19
        and labels(e) == ["Page 1", "Page 1", "Page 9"]
        and near(sizes(e)[0], (190, 63))
        and near(sizes(e)[2], (623, 507))
        and "Images:" not in e.text
    ),
    "pypdf_indirect-rotation.pdf": lambda e: (
        e.pages == 5 and e.figures == [] and e.text.endswith("\n\nImages: 0 kept, 5 not kept (pixels: 5)")
    ),
    "ocrmypdf_link.pdf": lambda e: (
        e.pages == 2 and labels(e) == ["Page 1"] and sizes(e) == [(640, 682)] and "Page 2\n\n" in e.text
    ),
    "pypdf_side-by-side-subfig.pdf": lambda e: (
        labels(e) == ["Page 1", "Page 1"] and sizes(e)[0][0] > sizes(e)[0][1] and sizes(e)[1][0] < sizes(e)[1][1]
    ),
    "pdfminer_zen_of_python_corrupted.pdf": lambda e: (
        e.figures == [] and "Beautiful is better than ugly." in e.text and "Namespaces are one honking" in e.text
    ),
    "pandoc_inline_images.docx": lambda e: (
        labels(e)
        == [
            "This one is green and looks like Sideshow Bob.",
            "This one is reddish, and looks like a heart that has leaked out.",
        ]
        and "[Figure 1: This one is green" in e.text
        and "(http://www.google.com)" in e.text
    ),
    "docx2python_example.docx": lambda e: (
        labels(e) == ["A jellyfish in water Description automatically generated"]
        and "| --- |" in e.text
        and "Text outside table" in e.text
    ),
    "pandoc_image_vml_as_object.docx": lambda e: (
        e.figures == [] and e.text == "Test with object as image:\n\nImages: 0 kept, 1 not kept (type: 1)"
    ),
    "python-docx_having-images.docx": lambda e: (
        len(e.figures) == 5 and e.text == "\n\n".join(f"[Figure {n}: image]" for n in range(1, 6))
    ),
    "pdfminer_README.md": lambda e: (
        e.kind == "markdown" and e.original is None and e.text.startswith("pdfminer.six\n=====")
    ),
    "ocrmypdf_linn.txt": lambda e: e.kind == "text" and e.original is None,
    "python-docx_jfif-iguana.jpg": lambda e: e.kind == "image" and sizes(e) == [(100, 68)],
    "python-docx_python-icon.jpeg": lambda e: (
        sizes(e) == [(204, 204)] and e.text == "[Figure 1: python-docx_python-icon]"
    ),
    "pillow_hopper.webp": lambda e: sizes(e) == [(128, 128)],
    "pdfminer_dmca.pdf": lambda e: e.pages == 18,
    "synthetic-mixed-image-formats.docx": lambda e: (
        labels(e)
        == [
            "Alt: red PNG rectangle",
            "Alt: blue JPEG rectangle",
            "Alt: yellow GIF rectangle",
            "Alt: purple WebP rectangle",
        ]
        and e.text.endswith("\n\nImages: 4 kept, 3 not kept (type: 3)")
    ),
    "synthetic-svg-image.docx": lambda e: (
        labels(e) == ["Alt: green circle logo (SVG with PNG fallback)"]
        and sizes(e) == [(96, 64)]
        and "Images:" not in e.text
    ),
    # Redaction is the classification step's job; reading keeps the text as written.
    "synthetic-fake-secrets.md": lambda e: e.kind == "markdown" and "AKIAIOSFODNN7EXAMPLE" in e.text,
}


@pytest.mark.parametrize("row", ROWS, ids=[row["file"] for row in ROWS])
def test_fixture_gets_its_manifest_outcome(row):
    path = FIXTURES_DIR / row["file"]
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == row["sha256"], "fixture differs from the manifest"
    expected = row["expected outcome"]
    if expected == "accept":
        extracted = read_upload(path.name, data)
        assert extracted.text.strip()
        check = ACCEPTED.get(path.name)
        assert check is not None, f"no expectations written for accepted fixture {path.name}"
        assert check(extracted), extracted.text[-500:]
        if extracted.kind in ("docx", "pdf", "image"):
            assert extracted.original == data
    else:
        label = expected.removeprefix("refuse:")
        with pytest.raises(Refused) as caught:
            read_upload(path.name, data)
        assert caught.value.reason == REASONS[label], caught.value.message


def test_the_pixel_bomb_is_refused_from_its_header():
    """Refused from what its header says: decoding 900 million pixels would take gigabytes, and the process's
    peak memory (a high-water mark, so no clock is read) would rise by them."""
    data = (FIXTURES_DIR / "synthetic-bomb-30000x30000.png").read_bytes()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(Refused) as caught:
        read_upload("bomb.png", data)
    assert caught.value.reason == "pixels"
    assert "30,000 × 30,000" in caught.value.message
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_kib < 256 * 1024


def test_refusal_messages_say_what_to_do():
    def message(name: str) -> str:
        with pytest.raises(Refused) as caught:
            read_upload(name, (FIXTURES_DIR / name).read_bytes())
        return caught.value.message

    assert "reading text from images is not supported yet" in message("ocrmypdf_c02-22.pdf")
    assert "remove the password, save, upload again" in message("pypdf_libreoffice-writer-password.pdf")
    assert "remove the password, save, upload again" in message("synthetic-encrypted-agile.docx")
    # the part that is damaged, in words an uploader reads, not the zip library's ("Bad CRC-32 for file …")
    assert message("synthetic-cd-byteflip.docx") == (
        "This Word file could not be read: it is possibly damaged (its part word/document.xml cannot be unpacked). "
        "Open it, save a new copy and upload that."
    )
    assert ".docx" in message("msoffcrypto_plain.doc")
    assert "8,000,000 pixels" in message("ocrmypdf_typewriter.png")
    assert "32 pixels" in message("synthetic-1x1.png")
