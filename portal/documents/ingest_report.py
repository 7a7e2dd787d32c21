"""Ingest files from paths and report each outcome in the shape `cairn ingest --json` prints."""

from __future__ import annotations

import mimetypes
from collections.abc import Iterator
from pathlib import Path

from portal.documents.services import UploadOutcome, upload_file
from portal.errors import Refused
from portal.ingest import limits
from portal.models import Pack, Passage
from portal.search.embedding import can_embed, passage_text
from portal.search.service import batched_index_updates


def outcome_json(path: str, outcome: UploadOutcome) -> dict:
    if not outcome.accepted:
        return {"file": path, "status": "refused", "reason": outcome.refused.reason,
                "message": outcome.refused.message, "document": None}
    revision = outcome.revision
    return {
        "file": path, "status": "accepted", "reason": None,
        "message": "unchanged: identical to the current version, no new revision" if outcome.unchanged else None,
        "document": {
            "id": outcome.document.doc_id, "version": revision.version, "sha256": revision.sha256,
            "passages": Passage.select().where(Passage.revision == revision).count(),
            "not_embedded": _not_embedded(outcome.document.title, revision),
            "images": {"kept": outcome.images_kept, "not_kept": outcome.images_not_kept},
        },
    }


def _not_embedded(title: str, revision) -> int:
    """Passages that get no vector (nothing to embed): indexed for BM25 only, and said so in the ingest line."""
    passages = Passage.select(Passage.heading_path, Passage.text).where(Passage.revision == revision)
    return sum(not can_embed(passage_text(title, p.heading_path, p.text)) for p in passages)


def ingest_paths(pack_slug: str, paths) -> Iterator[dict]:
    """Each file's outcome, yielded once it is stored (or refused): a killed run has shown what it stored.

    The index catches up at the end (and every few dozen documents); what a kill interrupts is
    indexed at the next start (portal/search/service.py).
    """
    pack = Pack.get_or_none(Pack.slug == pack_slug)
    with batched_index_updates():
        for raw in paths:
            yield _ingest_path(pack, pack_slug, raw)


def _ingest_path(pack: Pack | None, pack_slug: str, raw) -> dict:
    path = Path(raw)
    if pack is None:
        outcome = UploadOutcome(path.name, refused=Refused("no_pack", f"There is no pack {pack_slug!r}."))
    elif not path.is_file():
        outcome = UploadOutcome(path.name, refused=Refused("not_found", f"{raw} is not a readable file."))
    elif path.stat().st_size > limits.MAX_FILE_BYTES:
        outcome = UploadOutcome(path.name, refused=limits.refuse_too_large(path.stat().st_size))
    else:
        content_type = mimetypes.guess_type(path.name)[0]
        outcome = upload_file(pack, path.name, path.read_bytes(), None, content_type=content_type)
    return outcome_json(str(raw), outcome)
