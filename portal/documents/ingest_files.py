"""Ingest files from paths (``cairn ingest``): each through the upload service, the index updated in batches."""

from __future__ import annotations

import mimetypes
from collections.abc import Iterator
from pathlib import Path

from portal.documents.readers import ReaderAccess
from portal.documents.services import UploadOutcome, upload_file
from portal.errors import Refused
from portal.ingest import limits
from portal.models import Pack, Passage
from portal.search.embedding import can_embed, passage_text
from portal.search.service import batched_index_updates


def not_embedded(title: str, revision) -> int:
    """Passages that get no vector (nothing to embed): indexed for BM25 only, and said so in the ingest line."""
    passages = Passage.select(Passage.heading_path, Passage.text).where(Passage.revision == revision)
    return sum(not can_embed(passage_text(title, p.heading_path, p.text)) for p in passages)


def ingest_paths(
    pack_slug: str, paths, reader_access: ReaderAccess | None = None
) -> Iterator[tuple[str, UploadOutcome]]:
    """Each file (as given) and its outcome, yielded once it is stored (or refused): a killed run has
    shown what it stored. ``reader_access``: who may read each document (None: each keeps its own).

    The index catches up at the end (and every few dozen documents); what a kill interrupts is
    indexed at the next start (portal/search/service.py).
    """
    pack = Pack.live().where(Pack.slug == pack_slug).first()
    with batched_index_updates():
        for raw in paths:
            yield _ingest_path(pack, pack_slug, raw, reader_access)


def _ingest_path(pack: Pack | None, pack_slug: str, raw, reader_access) -> tuple[str, UploadOutcome]:
    path = Path(raw)
    if pack is None:
        outcome = UploadOutcome(path.name, refused=Refused("no_pack", f"There is no pack {pack_slug!r}."))
    elif not path.is_file():
        outcome = UploadOutcome(path.name, refused=Refused("not_found", f"{raw} is not a readable file."))
    elif path.stat().st_size > limits.MAX_FILE_BYTES:
        outcome = UploadOutcome(path.name, refused=limits.refuse_too_large(path.stat().st_size))
    else:
        content_type = mimetypes.guess_type(path.name)[0]
        outcome = upload_file(
            pack, path.name, path.read_bytes(), None, content_type=content_type, reader_access=reader_access
        )
    return str(raw), outcome
