"""The document viewer, behind both of its doors: the staff viewer (``documents.show``) and a
member's cited document (``chat.document``).

Both show one revision's text, formatted or with line numbers, with a cited
passage highlighted and figures in place; only the address of a figure differs
(each door serves figures through its own permission check), so the caller
passes it in.
"""

from __future__ import annotations

import difflib
import threading
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from cachetools import LRUCache
from markupsafe import Markup

from portal.db import KeptSelect
from portal.documents.render import FigureImage, PassageLines, numbered_lines, render_markdown
from portal.documents.render_pdf import render_pdf_text
from portal.documents.sections import Section, SectionText, outline
from portal.models import Figure, Passage, Revision

VIEWS = ("formatted", "lines")
DIFF_VIEW = "diff"  # an older revision only: its changes up to the current text
DIFF_CONTEXT_LINES = 3
# The most lines (each counted once, and once more for each line of the current text equal to it) that
# matching the stretches between anchor lines may scan: past it, what is left unmatched is shown as
# removed and added, and the page says so (``DIFF_MATCHED_IN_PART``).
DIFF_WORK = 1_000_000
DIFF_MATCHED_IN_PART = (
    "Parts of this comparison are shown as removed and added whole: "
    "the texts differ in too many places to match line by line."
)


def chosen_view(requested: str | None, older: bool = False) -> str:
    """``lines`` (or, for an older revision, ``diff``) when asked for, else the formatted text."""
    if requested in VIEWS or (older and requested == DIFF_VIEW):
        return requested
    return "formatted"


@dataclass(frozen=True)
class DiffLine:
    """One line of a unified diff: ``kind`` is ``added``, ``removed``, ``hunk`` (a ``@@`` line) or ``same``."""

    kind: str
    text: str


@dataclass(frozen=True)
class TextDiff:
    """A unified diff's rows; ``note`` says when the work bound left parts unmatched (else ``None``)."""

    rows: list[DiffLine]
    note: str | None = None


def text_diff(older: Revision, current: Revision) -> TextDiff:
    """The changes from ``older``'s text to ``current``'s, as a unified diff by line: difflib's, with the
    matching anchored and bounded by ``DIFF_WORK`` (``_AnchoredMatcher``).

    Plain rows: the template escapes each one, so nothing in a document becomes markup.
    """
    old, new = older.text.split("\n"), current.text.split("\n")
    matcher = _AnchoredMatcher(old, new, DIFF_WORK)
    rows = []
    for group in matcher.get_grouped_opcodes(DIFF_CONTEXT_LINES):
        (_, old_start, _, new_start, _), (_, _, old_end, _, new_end) = group[0], group[-1]
        rows.append(DiffLine("hunk", f"@@ -{_hunk_range(old_start, old_end)} +{_hunk_range(new_start, new_end)} @@"))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [DiffLine("same", f" {line}") for line in old[i1:i2]]
                continue
            rows += [DiffLine("removed", f"-{line}") for line in old[i1:i2]]
            rows += [DiffLine("added", f"+{line}") for line in new[j1:j2]]
    return TextDiff(rows, DIFF_MATCHED_IN_PART if matcher.matched_in_part else None)


def _hunk_range(start: int, end: int) -> str:
    """Lines ``start`` to ``end`` (0-based, end excluded) as a unified diff's hunk header names them."""
    length = end - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


class _AnchoredMatcher(difflib.SequenceMatcher):
    """difflib's matcher, anchored first and bounded.

    difflib finds the longest match in a stretch of lines, then in the stretches either side of it,
    scanning each whole: a few edits spread through a long text cost lines × edits, and where the matches
    are single lines all through (every other line changed) that is quadratic, minutes for a long text.
    So the common first and last lines are matched first, then the lines that occur exactly once in
    both texts, in order (patience diff's anchors: the longest increasing run of their positions), each
    grown over the equal lines beside it, as difflib grows a match. difflib matches the short stretches
    between those blocks, with its own rules (popular lines seed no match). An ordinary edit gets
    difflib's diff. A stretch whose scan would pass what is left of ``work`` stays unmatched: its lines
    are shown removed and added, and ``matched_in_part`` says so.
    """

    def __init__(self, a: list[str], b: list[str], work: int):
        super().__init__(None, a, b)
        self.matched_in_part = False
        self._work_left = work
        # What scanning old lines 0..i costs: each line once, and once for each current line equal to it.
        self._cost_before = list(accumulate((1 + len(self.b2j.get(line, ())) for line in a), initial=0))

    def get_matching_blocks(self):
        if self.matching_blocks is None:
            self._work_left, work_kept = self._work_left // 2, self._work_left - self._work_left // 2
            found = self._difflib_blocks(0, len(self.a), 0, len(self.b))
            if self.matched_in_part:
                found = self._anchored_matching_blocks(work_kept)
            self.matching_blocks = [*_joined(found), difflib.Match(len(self.a), len(self.b), 0)]
        return self.matching_blocks

    def _anchored_matching_blocks(self, work_kept: int) -> list[difflib.Match]:
        """The blocks anchored on the common first and last lines and the unique common lines, and
        difflib's blocks in the stretches between them, under what is left of the work."""
        self.matched_in_part, self._work_left = False, self._work_left + work_kept
        found = []
        a_end = b_end = 0
        for block in [*self._anchored_blocks(), difflib.Match(len(self.a), len(self.b), 0)]:
            found += self._difflib_blocks(a_end, block.a, b_end, block.b)
            found.append(block)
            a_end, b_end = block.a + block.size, block.b + block.size
        return found

    def _anchored_blocks(self) -> list[difflib.Match]:
        """The common first and last lines, and each unique common line in order grown over the equal
        lines either side, as blocks in order (the last may be empty)."""
        a, b = self.a, self.b
        head = 0
        while head < min(len(a), len(b)) and a[head] == b[head]:
            head += 1
        tail = 0
        while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
            tail += 1
        blocks = [difflib.Match(0, 0, head)]
        a_end, b_end = len(a) - tail, len(b) - tail
        for i, j in _unique_common_lines(a, head, a_end, b, head, b_end):
            last = blocks[-1]
            if i < last.a + last.size:
                continue  # grown over already
            while i > last.a + last.size and j > last.b + last.size and a[i - 1] == b[j - 1]:
                i, j = i - 1, j - 1
            size = 0
            while i + size < a_end and j + size < b_end and a[i + size] == b[j + size]:
                size += 1
            blocks.append(difflib.Match(i, j, size))
        blocks.append(difflib.Match(a_end, b_end, tail))
        return blocks

    def _difflib_blocks(self, alo: int, ahi: int, blo: int, bhi: int) -> list[difflib.Match]:
        """difflib's matching blocks of ``a[alo:ahi]`` and ``b[blo:bhi]`` (``get_matching_blocks``' own walk)."""
        found, stretches = [], [(alo, ahi, blo, bhi)] if alo < ahi and blo < bhi else []
        while stretches:
            alo, ahi, blo, bhi = stretches.pop()
            i, j, size = match = self.find_longest_match(alo, ahi, blo, bhi)
            if size:
                found.append(match)
                if alo < i and blo < j:
                    stretches.append((alo, i, blo, j))
                if i + size < ahi and j + size < bhi:
                    stretches.append((i + size, ahi, j + size, bhi))
        return found

    def find_longest_match(self, alo=0, ahi=None, blo=0, bhi=None):
        ahi = len(self.a) if ahi is None else ahi
        bhi = len(self.b) if bhi is None else bhi
        cost = self._cost_before[ahi] - self._cost_before[alo]
        if cost > self._work_left:
            self.matched_in_part = True
            return difflib.Match(alo, blo, 0)
        self._work_left -= cost
        return super().find_longest_match(alo, ahi, blo, bhi)


def _unique_common_lines(a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int) -> list[tuple[int, int]]:
    """The lines that occur exactly once in ``a[alo:ahi]`` and once in ``b[blo:bhi]``, as (i, j) pairs: the
    most of them whose positions increase in both (a longest increasing subsequence, by patience sort)."""
    in_a, in_b = Counter(a[alo:ahi]), Counter(b[blo:bhi])
    where_in_b = {b[j]: j for j in range(blo, bhi) if in_b[b[j]] == 1}
    pairs = [(i, where_in_b[a[i]]) for i in range(alo, ahi) if in_a[a[i]] == 1 and a[i] in where_in_b]
    pile_tops: list[int] = []  # the smallest j ending an increasing run of each length
    pile_pairs: list[int] = []  # the index in ``pairs`` of that run's last pair
    before = [-1] * len(pairs)  # the pair before each one in its run
    for k, (_, j) in enumerate(pairs):
        length = bisect_left(pile_tops, j)
        before[k] = pile_pairs[length - 1] if length else -1
        if length == len(pile_tops):
            pile_tops.append(j)
            pile_pairs.append(k)
        else:
            pile_tops[length], pile_pairs[length] = j, k
    run, k = [], pile_pairs[-1] if pile_pairs else -1
    while k >= 0:
        run.append(pairs[k])
        k = before[k]
    return run[::-1]


def _joined(blocks: list[difflib.Match]) -> list[difflib.Match]:
    """Matching blocks in order, the empty ones left out and adjacent ones joined (as difflib gives them)."""
    joined: list[list[int]] = []
    for i, j, size in sorted(blocks):
        if not size:
            continue
        if joined and joined[-1][0] + joined[-1][2] == i and joined[-1][1] + joined[-1][2] == j:
            joined[-1][2] += size
        else:
            joined.append([i, j, size])
    return [difflib.Match(*block) for block in joined]


def outline_of(revision: Revision, kind: str) -> list[Section]:
    """The revision's sections; a revision never changes, so each process keeps the last few it read
    (parsing a long document's headings costs as much as rendering it)."""
    return list(_outline(revision.id, revision.sha256, kind))


@lru_cache(maxsize=32)
def _outline(revision_id: int, sha256: str, kind: str) -> tuple[Section, ...]:
    # Keyed by the text's hash too, so a reused row id can never return another text's outline.
    return tuple(outline(Revision.get_by_id(revision_id).text, kind))


def passages_of(revision: Revision) -> list[Passage]:
    return _passages.rows(revision.id)


# Every view of a document reads its passages and figures.
_passages = KeptSelect(
    lambda revision_id: Passage.select().where(Passage.revision == revision_id).order_by(Passage.ordinal)
)
_figure_sizes = KeptSelect(
    lambda revision_id: Figure.select(Figure.number, Figure.width, Figure.height).where(Figure.revision == revision_id)
)


def document_body(
    revision: Revision,
    kind: str,
    passages: list[Passage],
    view: str,
    highlighted: Passage | None,
    figure_url: Callable[[int], str],
    sections: list[Section] = (),
) -> Markup | list:
    """The text as HTML (``formatted``) or as numbered lines (``lines``), ``highlighted`` marked.

    A PDF's text keeps its lines and marks exactly the passage's characters (``render_pdf``);
    other kinds are Markdown, marked by block. ``figure_url(number)`` is asked only for figures
    the revision has; a marker naming another number stays text. Each of ``sections`` gets its
    anchor, for the outline.
    """
    if view == "lines":
        return numbered_lines(revision.text, (highlighted.line_start, highlighted.line_end) if highlighted else None)
    figures = _kept_figures(revision, figure_url)
    anchors = tuple(PassageLines(p.ordinal, p.line_start, p.line_end) for p in passages)
    section_anchors = tuple((s.line_start, s.anchor) for s in sections)
    if kind == "pdf":
        highlight = (highlighted.char_start, highlighted.char_end) if highlighted else None
    else:
        highlight = (highlighted.line_start, highlighted.line_end) if highlighted else None
    # Everything the HTML depends on is in the key (the revision's own text by id and hash, the
    # figure addresses of this door): a hit is the same HTML the renderer would give this request.
    key = (revision.id, revision.sha256, kind, anchors, highlight, section_anchors, tuple(sorted(figures.items())))
    body = rendered_bodies.get(key)
    if body is None:
        figure = figures.get
        if kind == "pdf":
            body = render_pdf_text(revision.text, list(anchors), highlight, figure, dict(section_anchors))
        else:
            body = render_markdown(revision.text, list(anchors), highlight, figure, dict(section_anchors))
        rendered_bodies.put(key, body)
    return body


class RenderedBodies:
    """The last document bodies rendered in this process, up to ``max_chars`` of HTML in all: a
    ``cachetools.LRUCache`` that measures each body by its characters, behind a lock (a worker may
    serve requests on several threads).

    Rendering a revision's Markdown and sanitizing it costs milliseconds to a second (a long
    document) and a revision never changes, so a body read again (a cited document opened by
    its readers, a staff page reloaded) is served from here. Only a caller that already passed
    its door asks, with the revision it may read: the key holds the revision, so a body is
    never another revision's.
    """

    def __init__(self, max_chars: int):
        self.max_chars = max_chars
        self._bodies: LRUCache[tuple, Markup] = LRUCache(maxsize=max_chars, getsizeof=len)
        self._lock = threading.Lock()

    def get(self, key: tuple) -> Markup | None:
        with self._lock:
            return self._bodies.get(key)  # a hit becomes the most recently used

    def put(self, key: tuple, body: Markup) -> None:
        if len(body) > self.max_chars // 4:  # a huge body would push out many ordinary ones
            return
        with self._lock:
            if key not in self._bodies:
                self._bodies[key] = body  # the least recently used go until the new one fits


RENDERED_BODIES_MAX_CHARS = 16_000_000  # about 16 MB (or 64 MB of wide characters) per worker process
rendered_bodies = RenderedBodies(RENDERED_BODIES_MAX_CHARS)


def section_body(revision: Revision, shown: SectionText, view: str, figure_url: Callable[[int], str]) -> Markup | list:
    """One section's text alone, formatted or as lines numbered as in the whole text."""
    if view == "lines":
        return numbered_lines(shown.text, None, first=shown.section.line_start + 1)
    figure = _kept_figures(revision, figure_url).get
    if revision.document.kind == "pdf":
        return render_pdf_text(shown.text, [], None, figure)
    return render_markdown(shown.text, [], None, figure)


def _kept_figures(revision: Revision, figure_url: Callable[[int], str]) -> dict[int, FigureImage]:
    """Each kept figure's address and stored size (the page reserves its room), by number; a marker
    naming a figure the revision does not have is not among them."""
    return {f.number: FigureImage(figure_url(f.number), f.width, f.height) for f in _figure_sizes.rows(revision.id)}


def figure_of(revision: Revision, number: int) -> Figure | None:
    """Figure ``number`` of ``revision`` (the caller checked that it may be read)."""
    return Figure.get_or_none((Figure.revision == revision) & (Figure.number == number))
