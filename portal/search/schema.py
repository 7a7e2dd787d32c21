"""What a pack's index holds and where: its fields, its commit's user data, its folders.

``index.py`` writes these fields and ``searcher.py`` reads them; both take the
names from here, so a field is named once. Changing what a passage is found by
(``indexed_text``) or how a hit names its passage (``hit_key``) needs a rebuild.

A pack's index is partitioned by access class (SPEC 2 and 6, ranking
independence): every document's passages live in the Lucene index of its
class, ``<root>/<pack>/<partition>/``, the partition named by the document's
visibility and reader roles (``partition_name``). A reader's search combines
exactly the partitions it may read, so BM25 statistics come from exactly the
readable set; an agent's search combines every partition of its granted packs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from portal.search.jvm import J

FIELD_KEY = "id"
FIELD_PASSAGE_ID = "passage_id"
FIELD_DOCUMENT_ID = "document_id"
FIELD_CONTENTS = "contents"
GENERATION_KEY = "generation"
# --- hybrid retrieval: passage vectors (see portal/search/embedding.py) ---
FIELD_VECTOR = "vector"
MODEL_KEY = "embedding_model"
VECTOR_SIMILARITY = "DOT_PRODUCT"
"""Vectors are unit length, so Lucene's dot product is the cosine; its score is (1 + cosine) / 2."""

_PACK_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_PARTITION = re.compile(r"(?P<visibility>[a-z]+)(?:-for-(?P<roles>[A-Za-z]+(?:-[A-Za-z]+)*))?")
_ROLES_MARK = "-for-"

DEFAULT_PARTITION = "staff"
"""The partition of a document with the default access (visibility ``staff``, no reader roles).

It is also the pack's anchor: every write to a pack commits this partition too,
and its generation is the one the whole pack shows (``index.py``).
"""


def partition_name(visibility: str, reader_roles=()) -> str:
    """The partition (folder name) of an access class: ``shared``, ``company-for-Auditor-Member`` …"""
    roles = sorted(set(reader_roles))
    name = visibility + (_ROLES_MARK + "-".join(roles) if roles else "")
    if not _PARTITION.fullmatch(name):
        raise ValueError(f"Not an access class usable as a partition name: {visibility!r}, {roles!r}")
    return name


def partition_class(name: str) -> tuple[str, frozenset[str]] | None:
    """Inverse of ``partition_name``: (visibility, reader roles); None for a folder that is not a partition."""
    match = _PARTITION.fullmatch(name)
    if match is None:
        return None
    roles = match.group("roles")
    return match.group("visibility"), frozenset(roles.split("-")) if roles else frozenset()


@dataclass(frozen=True)
class IndexedPassage:
    """A passage as the index needs it; ``title`` is its document's title."""

    passage_id: int
    document_id: str
    pack: str
    text: str
    title: str = ""
    heading_path: str = ""
    partition: str = DEFAULT_PARTITION


def indexed_text(passage: IndexedPassage) -> str:
    """The text that is searched for a passage: its document title, heading path and body.

    The one place that decides what a passage is found by; change it here and rebuild.
    """
    return "\n".join(part for part in (passage.title, passage.heading_path, passage.text) if part)


def hit_key(passage_id: int, document_id: str) -> str:
    """The only stored field, ``id``: both ids in one string, read back for all hits in one Java call.

    ``id`` is Anserini's name for a document's external id, which its
    ``ScoredDocs`` reads for a whole page of hits. Storing nothing else keeps
    that read small: it is the largest cost of a search after Lucene's own.
    """
    return f"{passage_id}:{document_id}"


def parse_hit_key(key: str) -> tuple[int, str]:
    """Inverse of ``hit_key``; passage ids are digits, so the first colon separates."""
    passage_id, _, document_id = key.partition(":")
    return int(passage_id), document_id


def checked_pack_slug(pack_slug: str) -> str:
    """``pack_slug`` itself, once it is known not to point outside the index root."""
    if not _PACK_SLUG.fullmatch(pack_slug):
        raise ValueError(f"Not a pack slug usable as an index folder name: {pack_slug!r}")
    return pack_slug


def pack_index_path(root: Path, pack_slug: str) -> Path:
    """The folder of a pack's index: its partitions' folders, and the pack's writer lock."""
    return root / checked_pack_slug(pack_slug)


def partition_path(root: Path, pack_slug: str, partition: str) -> Path:
    """The folder of one partition of a pack's index (a Lucene index of its own)."""
    if partition_class(partition) is None:
        raise ValueError(f"Not a partition name: {partition!r}")
    return pack_index_path(root, pack_slug) / partition


def partitions_of(pack_path: Path) -> list[str]:
    """The partitions a pack's folder holds (sorted; the anchor among them once the pack has been written)."""
    try:
        entries = list(os.scandir(pack_path))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(e.name for e in entries if e.is_dir() and partition_class(e.name) is not None)


def open_directory(path: str | Path):
    """A Lucene ``FSDirectory`` on ``path`` (memory-mapped on 64-bit systems)."""
    return J().JFSDirectory.open(J().JFile(str(path)).toPath())


class PassageDocument:
    """One Lucene document whose fields are refilled for every passage.

    Fields: ``id`` (stored only, see ``hit_key``), ``passage_id`` and
    ``document_id`` (exact terms, not stored: deletes and per-document counts)
    and ``contents`` (analyzed ``indexed_text``, not stored: the database keeps
    the text). Reusing the field objects is Lucene's own advice for fast
    indexing, and here it also means four Java calls per passage instead of a dozen.
    """

    def __init__(self):
        classes = J()
        self._key = classes.JStoredField(FIELD_KEY, "")
        self._passage_id = classes.JStringField(FIELD_PASSAGE_ID, "", classes.JFieldStore.NO)
        self._document_id = classes.JStringField(FIELD_DOCUMENT_ID, "", classes.JFieldStore.NO)
        self._contents = classes.JTextField(FIELD_CONTENTS, "", classes.JFieldStore.NO)
        self.document = classes.JDocument()
        for field in (self._key, self._passage_id, self._document_id, self._contents):
            self.document.add(field)

    def fill(self, passage: IndexedPassage):
        self._key.setStringValue(hit_key(passage.passage_id, passage.document_id))
        self._passage_id.setStringValue(str(passage.passage_id))
        self._document_id.setStringValue(passage.document_id)
        self._contents.setStringValue(indexed_text(passage))
        return self.document


class VectorPassageDocument(PassageDocument):
    """A ``PassageDocument`` that also carries the passage's vector (a reused ``KnnFloatVectorField``)."""

    def __init__(self, dimensions: int):
        super().__init__()
        classes = J()
        similarity = getattr(classes.JVectorSimilarityFunction, VECTOR_SIMILARITY)
        self._vector = classes.JKnnFloatVectorField(FIELD_VECTOR, [0.0] * dimensions, similarity)
        self.document.add(self._vector)

    def fill_with_vector(self, passage: IndexedPassage, vector: list[float]):
        self._vector.setVectorValue(vector)
        return self.fill(passage)
