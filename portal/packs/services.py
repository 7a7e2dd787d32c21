"""Packs: creation rules and listings."""

from __future__ import annotations

import re

from peewee import fn

from portal.errors import Refused
from portal.models import PACK_KINDS, Company, Document, Pack

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")


def create_pack(
    slug: str, title: str, kind: str = "generic", company_name: str | None = None, description: str = ""
) -> Pack:
    slug, title = slug.strip(), title.strip()
    if not SLUG_RE.match(slug):
        raise Refused(
            "bad_slug", "A pack slug has 1–80 lowercase letters, digits and hyphens, starting with a letter or digit."
        )
    if not title:
        raise Refused("bad_title", "A pack needs a title.")
    if kind not in PACK_KINDS:
        raise Refused("bad_kind", "A pack is either generic or company.")
    if kind == "company" and not (company_name or "").strip():
        raise Refused("bad_company", "A company pack names the company whose material it holds.")
    if kind == "generic" and company_name:
        raise Refused("bad_company", "A generic pack names no company.")
    if Pack.get_or_none(Pack.slug == slug) is not None:
        raise Refused("slug_taken", f"A pack {slug!r} exists already.")
    company = Company.get_or_create(name=company_name.strip())[0] if kind == "company" else None
    return Pack.create(slug=slug, title=title, kind=kind, company=company, description=description.strip())


def all_packs() -> list[Pack]:
    return list(Pack.select().order_by(Pack.slug))


def live_document_counts() -> dict[int, int]:
    rows = (
        Document.select(Document.pack, fn.COUNT(Document.id).alias("n"))
        .where(Document.deleted_at.is_null())
        .group_by(Document.pack)
        .tuples()
    )
    return {pack_id: n for pack_id, n in rows}


def packs_as_json(packs) -> list[dict]:
    counts = live_document_counts()
    return [
        {
            "slug": p.slug,
            "title": p.title,
            "kind": p.kind,
            "company": p.company.name if p.company_id else None,
            "documents": counts.get(p.id, 0),
        }
        for p in packs
    ]
