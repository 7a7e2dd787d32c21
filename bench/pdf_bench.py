"""Time reading a generated 300-page text PDF, end to end through read_upload.

    .venv/bin/python bench/pdf_bench.py [--runs 5]

Three PDFs are generated (not timed): one near the text limit (300 pages of
about 1,300 characters: accepted), the same text drawn one word per text
object (as typeset PDFs with kerning are), and a dense one (300 pages of about
4,500 characters: refused as over 400,000 characters once the limit is
passed, around page 90; pypdfium2 in-process reads all of it). The times
include starting the reading child process. pypdf and pdfminer.six are timed
on the same files when they are importable (they are not project dependencies).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from portal.errors import Refused  # noqa: E402
from portal.ingest.formats import read_upload  # noqa: E402
from resources.make_fixtures import image_bytes, text_pdf  # noqa: E402

TARGET_SECONDS = 2.0


def timed(function, runs: int) -> tuple[float, float, object]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), max(times), result


def read_or_refusal(name: str, data: bytes):
    try:
        return read_upload(name, data)
    except Refused as refusal:
        return refusal


def in_process_pdfium(data: bytes) -> int:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    total = 0
    for page in document:
        textpage = page.get_textpage()
        total += len(textpage.get_text_range())
        textpage.close()
        page.close()
    document.close()
    return total


def with_pypdf(data: bytes) -> int:
    import io

    from pypdf import PdfReader

    return sum(len(page.extract_text() or "") for page in PdfReader(io.BytesIO(data)).pages)


def with_pdfminer(data: bytes) -> int:
    import io

    from pdfminer.high_level import extract_text

    return len(extract_text(io.BytesIO(data)))


def upload_end_to_end(data: bytes, runs: int) -> tuple[float, float, object]:
    """``documents.services.upload_file`` into a fresh data folder: read, classify, split, store, index."""
    import tempfile

    from portal import create_app
    from portal.documents.services import upload_file
    from portal.migrate import migrate
    from portal.packs.services import create_pack

    with tempfile.TemporaryDirectory(prefix="cairn-pdf-bench-") as scratch:
        app = create_app({"CAIRN_DATA_DIR": scratch, "SECRET_KEY": "bench", "CAIRN_REPAIR_INDEX_ON_START": False})
        with app.app_context():
            migrate(app.config["DATABASE"])
            pack = create_pack("bench", "Benchmark")
            upload_file(pack, "warm-up.md", b"# Warm up\n\nStarts the JVM outside the timing.\n", None)
            counter = iter(range(10**6))
            return timed(lambda: upload_file(pack, f"manual-{next(counter)}.pdf", data, None), runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs

    files = {
        "300 pages, ~1,300 chars/page": text_pdf(300, lines_per_page=16, width=85),
        "same, one text object per word": text_pdf(300, lines_per_page=16, width=85, word_objects=True),
        "300 pages, ~4,500 chars/page (dense)": text_pdf(300, lines_per_page=50, width=92),
    }
    rows = []
    median, worst, _ = timed(lambda: read_upload("tiny.png", image_bytes(64, 64)), runs)
    rows.append(("child process start + a 64 px PNG", "read_upload", median, worst, "kept"))
    for label, data in files.items():
        median, worst, result = timed(lambda data=data: read_or_refusal("bench.pdf", data), runs)
        outcome = (
            f"refused: {result.reason}" if isinstance(result, Refused) else f"accepted: {len(result.text):,} chars"
        )
        rows.append((f"{label}, {len(data) / 1e6:.2f} MB", "read_upload", median, worst, outcome))
        median, worst, chars = timed(lambda data=data: in_process_pdfium(data), runs)
        rows.append((label, "pypdfium2 in-process", median, worst, f"{chars:,} chars"))
        for name, reader in (("pypdf", with_pypdf), ("pdfminer.six", with_pdfminer)):
            try:
                median, worst, chars = timed(lambda reader=reader, data=data: reader(data), 1)
            except ImportError:
                rows.append((label, name, None, None, "not installed"))
                continue
            rows.append((label, name, median, worst, f"{chars:,} chars"))

    data = files["300 pages, ~1,300 chars/page"]
    median, worst, outcome = upload_end_to_end(data, runs)
    passages = outcome.revision.passages.count() if outcome.accepted else 0
    rows.append(
        (
            "300 pages, ~1,300 chars/page",
            "upload end to end",
            median,
            worst,
            f"stored {outcome.revision.pages} pages, {passages} passages, indexed"
            if outcome.accepted
            else f"refused: {outcome.refused.reason}",
        )
    )

    print(f"{'file':48} {'reader':22} {'median':>8} {'max':>8}  outcome")
    for label, reader, median, worst, outcome in rows:
        shown = f"{median:7.2f}s {worst:7.2f}s" if median is not None else f"{'-':>8} {'-':>8}"
        print(f"{label:48} {reader:22} {shown}  {outcome}")
    slowest = max(m for _, r, m, _, _ in rows if r in ("read_upload", "upload end to end"))
    verdict = "within" if slowest < TARGET_SECONDS else "OVER"
    print(f"\nslowest read_upload / upload median {slowest:.2f}s: {verdict} the {TARGET_SECONDS:.0f} s target")


if __name__ == "__main__":
    main()
