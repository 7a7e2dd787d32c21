"""The numbered references a run issues to the model, how they are labelled, and their grounding references."""

import re
from dataclasses import dataclass
from typing import NamedTuple

from portal.ingest.markdown_blocks import path_title
from portal.models.packs import DOCUMENT_ID_PATTERN


@dataclass(frozen=True)
class Reference:
    """One passage issued to the model as reference ``[n]``, exactly as issued.

    Retrieval builds these; the answer layer only reads them. ``page`` is set for
    PDF passages, ``heading_path`` (``Setup > Network > Proxy``) for Markdown and
    Word passages; either may be empty.
    """

    n: int
    passage_id: int
    document_id: int
    document_title: str
    pack: str
    pack_title: str
    version: int
    page: int | None
    heading_path: str
    line_start: int
    line_end: int
    text: str


_PATH_SEPARATOR = " > "


def section_path(heading_path: str, document_title: str) -> str:
    """The heading path without the document's title where that is its first heading.

    A document's ``# Title`` heads every passage's path; next to the title it only repeats it
    ("INC-1: Stuck (section INC-1: Stuck > Summary)" reads "INC-1: Stuck (section Summary)").
    """
    first, separator, rest = heading_path.partition(_PATH_SEPARATOR)
    if _same_title(first, document_title):
        return rest if separator else ""
    return heading_path


def _same_title(heading: str, title: str) -> bool:
    """A heading that names the title, emphasis or code marks and spacing aside."""

    def bare(text: str) -> str:
        return " ".join(text.replace("*", "").replace("_", "").replace("`", "").split()).casefold()

    # a heading path holds a long title cut (``markdown_blocks.path_title``), so the title is compared cut alike
    return bool(title) and bare(heading) == bare(path_title(title))


def label(ref: Reference) -> str:
    """``[n] Pack title — Document title (page N | section A > B)``, shown to model and reader."""
    where = ""
    section = section_path(ref.heading_path, ref.document_title)
    if ref.page is not None:
        where = f" (page {ref.page})"
    elif section:
        where = f" (section {section})"
    return f"[{ref.n}] {ref.pack_title} — {ref.document_title}{where}"


# A citation's grounding reference (SPEC 10): the document, the revision, the SHA-256 of that
# revision's full text (UTF-8) and the passage's 1-based, inclusive line range in it. Written
# by ``grounding_reference`` and read by ``parse_grounding_reference``, nowhere else.
GROUNDING_RE = re.compile(
    rf"document:(?P<document_id>{DOCUMENT_ID_PATTERN})@(?P<version>[1-9][0-9]*)"
    r"#(?P<sha256>[0-9a-f]{64}):L(?P<line_start>[1-9][0-9]*)-L(?P<line_end>[1-9][0-9]*)"
)


class Grounding(NamedTuple):
    document_id: str
    version: int
    sha256: str
    line_start: int
    line_end: int


def grounding_reference(
    document_id: str, version: int, sha256: str | None, line_start: int, line_end: int
) -> str | None:
    """``document:<id>@<version>#<sha256>:L<start>-L<end>``; None when the text's hash is not known."""
    if not sha256:
        return None
    return f"document:{document_id}@{version}#{sha256}:L{line_start}-L{line_end}"


def parse_grounding_reference(text: str) -> Grounding:
    """The parts of a grounding reference; ``ValueError`` for anything else."""
    match = GROUNDING_RE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a grounding reference: {text!r}")
    found = match.groupdict()
    return Grounding(
        found["document_id"], int(found["version"]), found["sha256"], int(found["line_start"]), int(found["line_end"])
    )
