"""Time an older revision's diff to the current text (``viewer.text_diff``) near the text limit.

    .venv/bin/python bench/diff_bench.py [--work 1000000 4000000]

Texts of 400,000 characters (about 37,000 lines) in the shapes that cost most: every other line
changed (each line once only, and the text twice over so that no line is), every other line of a
text whose lines repeat just under difflib's "popular" count, two entirely different texts, and
ordinary edits (one line in 1,000, 100 or 10 changed). Each is timed with each ``--work`` as
``viewer.DIFF_WORK``, with its rows and whether the page would say parts are matched whole.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from portal.documents import viewer  # noqa: E402
from portal.ingest.limits import MAX_TEXT_CHARS  # noqa: E402


def within_limit(lines):
    kept, size = [], 0
    for line in lines:
        if size + len(line) + 1 > MAX_TEXT_CHARS:
            break
        kept.append(line)
        size += len(line) + 1
    return kept


def every_other_changed(lines):
    return [line if n % 2 else f"x{line}" for n, line in enumerate(lines)]


def one_changed_in(lines, every):
    return [f"e{line}" if n % every == every // 2 else line for n, line in enumerate(lines)]


def shapes():
    text = within_limit(f"line {n}" for n in range(100_000))
    half = text[: len(text) // 2]
    repeats = within_limit(f"r{n % 100}" for n in range(len(text)))
    yield "every other line changed", text, every_other_changed(text)
    yield "every other line changed, text twice over", half + half, every_other_changed(half + half)
    yield "every other line changed, lines repeated", repeats, every_other_changed(repeats)
    yield "entirely different", text, [f"y{line}" for line in text]
    for every in (1_000, 100, 10):
        yield f"one line in {every:,} changed", text, one_changed_in(text, every)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=int, nargs="+", default=[viewer.DIFF_WORK])
    args = parser.parse_args()
    for work in args.work:
        viewer.DIFF_WORK = work
        for name, old, new in shapes():
            start = time.perf_counter()
            diff = viewer.text_diff(SimpleNamespace(text="\n".join(old)), SimpleNamespace(text="\n".join(new)))
            took = time.perf_counter() - start
            print(
                f"work {work:>11,}  {name:44} {len(old):>6} lines  {len(diff.rows):>6} rows  "
                f"{'matched in part' if diff.note else 'matched whole  '}  {took:.2f} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
