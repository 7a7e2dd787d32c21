"""Time what a document's text goes through, on hostile texts at the upload limit.

    .venv/bin/python bench/hostile_text_bench.py [--size 400000] [--shape NAME ...]

Each shape is one the Markdown parser, the sanitizer or the splitter finds hardest, repeated up to
``--size`` characters (the text limit by default): runs of brackets, unclosed references, wide
tables, one-line headings, ampersands, quoted wildcards, a long title over many short sections.
Timed in CPU seconds, each stage as its caller runs it: ingest (``split_passages``, then each
passage's answer units and excerpts), the outline, and the viewer's render of the whole text (with its
passage and outline anchors, as a Markdown document and as a PDF's text). The text grows with ``--size``;
a stage whose time grows faster than that is the one to look at (docs/performance.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from portal.answers.units import passage_units  # noqa: E402
from portal.documents.excerpts import passage_excerpt  # noqa: E402
from portal.documents.render import PassageLines, render_markdown  # noqa: E402
from portal.documents.render_pdf import render_pdf_text  # noqa: E402
from portal.documents.sections import outline  # noqa: E402
from portal.ingest.limits import MAX_TEXT_CHARS  # noqa: E402
from portal.ingest.passages import split_passages  # noqa: E402

SHAPES = {
    "[ run": lambda n: "[" * n,
    "![ run": lambda n: "![" * (n // 2),
    "[ lines": lambda n: "[\n" * (n // 2),
    "[a]: unclosed lines": lambda n: "[a\n" * (n // 3),
    "table of 200 columns": lambda n: "|" + "a|" * 200 + "\n|" + "-|" * 200 + "\n" + ("|" * 200 + "\n") * (n // 201),
    "list items": lambda n: "- a\n" * (n // 4),
    "one-line headings": lambda n: "# a\n" * (n // 4),
    "& run": lambda n: "&" * n,
    "& run, then emoji": lambda n: "&" * (n // 2) + "\U0001f600" * (n // 2),
    'quoted wildcards "*"': lambda n: '"*"' * (n // 3),
    "long title over short sections": lambda n: "# " + "title " * (n // 12) + "\n" + "## b\nc\n" * (n // 14),
}


def stages(text: str) -> dict[str, float]:
    """CPU seconds of each stage on ``text``."""
    took = {}
    start = time.process_time()
    passages = split_passages(text, "md")
    took["split"] = time.process_time() - start
    start = time.process_time()
    for passage in passages:
        passage_units(passage.text)
        passage_excerpt(passage.text, "whole")
        passage_excerpt(passage.text, "snippet")
    took["units+excerpts"] = time.process_time() - start
    start = time.process_time()
    sections = outline(text, "md")
    took["outline"] = time.process_time() - start
    anchors = [PassageLines(p.ordinal, p.line_start, p.line_end) for p in passages]
    start = time.process_time()
    render_markdown(text, anchors, (1, 3), lambda _number: None, {s.line_start: s.anchor for s in sections})
    took["render"] = time.process_time() - start
    start = time.process_time()
    render_pdf_text(text, anchors, (0, 100), lambda _number: None)
    took["render as PDF"] = time.process_time() - start
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, nargs="+", default=[MAX_TEXT_CHARS])
    parser.add_argument("--shape", nargs="+", choices=sorted(SHAPES), default=list(SHAPES))
    args = parser.parse_args()
    for size in args.size:
        for name in args.shape:
            text = SHAPES[name](size)
            took = stages(text)
            shown = "  ".join(f"{stage} {seconds:5.2f}" for stage, seconds in took.items())
            total = sum(took.values())
            print(f"{size:>7,}  {name:32} {len(text):>7,} chars  {shown}  total {total:5.2f} s", flush=True)


if __name__ == "__main__":
    main()
