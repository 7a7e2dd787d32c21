"""Packs: creation rules and listings."""

from __future__ import annotations

import re

from peewee import IntegrityError, fn

from portal import access
from portal.audit import audit
from portal.companies import company_named
from portal.controls import readable_text, shows_nothing
from portal.db import database, locking
from portal.errors import NotFound, Refused, too_long
from portal.meanwhile import refuse_if_changed
from portal.models import MAX_ID_CHARS, MAX_TITLE_CHARS, PACK_KINDS, Document, Pack, User, utcnow
from portal.paging import ListPage
from portal.search import vocabulary
from portal.wording import counted

# A pack's or an agent's slug; the forms' ``pattern`` attribute is this too (``\-``: valid in its v-mode).
SLUG_PATTERN = rf"[a-z0-9][a-z0-9\-]{{0,{MAX_ID_CHARS - 1}}}"
SLUG_RE = re.compile(f"^{SLUG_PATTERN}$")
DOCUMENTS_PER_PAGE = 50  # a pack page lists its documents a page at a time, as the Library does
SLUG_RULE = f"1–{MAX_ID_CHARS} lowercase letters, digits and hyphens, starting with a letter or digit"
# A pack's description is a lead paragraph over its documents (the demo's are under 200 characters). Without a
# limit a form of 4 MB stored one, which the pack page drew on every visit and each later change's audit entry held
# twice.
MAX_DESCRIPTION_CHARS = 2_000


def _checked_title(title: str) -> str:
    title = title.strip()
    if shows_nothing(title):
        raise Refused("bad_title", "A pack needs a title.")
    if len(title) > MAX_TITLE_CHARS:
        raise too_long("bad_title", "A pack's title", MAX_TITLE_CHARS, len(title))
    return title


def _checked_description(description: str) -> str:
    # A browser counts a line break as one character against maxlength and sends it as two (CRLF).
    description = description.replace("\r\n", "\n").strip()
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise too_long("bad_description", "A pack's description", MAX_DESCRIPTION_CHARS, len(description))
    return description


def create_pack(
    slug: str,
    title: str,
    kind: str = "generic",
    company_name: str | None = None,
    description: str = "",
    *,
    add_company: bool = False,
    vocabulary: str = "",
) -> Pack:
    """A new pack; a company pack names an existing company, or with ``add_company`` (the command line and the
    demo seed, which set a deployment up) a new one. The browser form chooses among the existing ones, so a
    name typed into it never adds a company."""
    slug = slug.strip()
    if not SLUG_RE.match(slug):
        raise Refused("bad_slug", f"A pack slug has {SLUG_RULE}.")
    title, description = _checked_title(title), _checked_description(description)
    vocabulary = _checked_vocabulary(vocabulary)
    if kind not in PACK_KINDS:
        raise Refused("bad_kind", "A pack is either generic or company.")
    if kind == "company" and shows_nothing(company_name or ""):  # zero-width characters name no company either
        raise Refused(
            "bad_company",
            "Choose the company whose material this company pack holds, or make it a generic pack. Nothing was saved.",
        )
    if kind == "generic" and not shows_nothing(company_name or ""):
        raise Refused(
            "bad_company",
            "A generic pack belongs to no company: clear the company, or make it a company pack. Nothing was saved.",
        )
    with database().atomic():  # the check and the insert together: two admins creating one slug get one pack
        taken = Pack.get_or_none(Pack.slug == slug)
        if taken is not None and taken.is_deleted:
            raise Refused(
                "slug_reused",
                f"A deleted pack was called {slug!r}; pack slugs are never reused, so choose another slug.",
            )
        if taken is not None:
            raise _slug_taken(slug)
        company = company_named(company_name, add=add_company) if kind == "company" else None
        try:
            with database().atomic():
                return Pack.create(
                    slug=slug, title=title, kind=kind, company=company, description=description, vocabulary=vocabulary
                )
        except IntegrityError:  # PostgreSQL: the other admin's pack was committed after this check
            raise _slug_taken(slug) from None


def _slug_taken(slug: str) -> Refused:
    return Refused("slug_taken", f"A pack {slug!r} exists already.")


# What a pack's edit form shows and saves.
EDITED_FIELDS = ("title", "description", "vocabulary")


def edit_pack(
    actor: User | None,
    pack: Pack,
    title: str,
    description: str,
    vocabulary: str | None = None,
    based_on: str | None = None,
    base: dict | None = None,
) -> Pack:
    """Change a pack's title, description and vocabulary (None: kept; its slug, kind and company stay: grants
    and citations name them); the row as this change left it. ``based_on`` and ``base``: when the pack had last
    changed as the form showed it (``wording.edit_stamp``), and the values it showed; ``ChangedMeanwhile`` when it
    has changed since (``portal.meanwhile``)."""
    title, description = _checked_title(title), _checked_description(description)
    vocabulary = None if vocabulary is None else _checked_vocabulary(vocabulary)
    with database().atomic():
        # Locked, and what changed read from it: two saves at once audited their change from the title each
        # request had read before, so the later one's "from" was never the title it replaced.
        locked = locking(Pack.select().where((Pack.id == pack.id) & Pack.deleted_at.is_null())).first()
        if locked is None:
            raise NotFound(pack.slug)  # deleted by someone else meanwhile
        current = {name: getattr(locked, name) for name in EDITED_FIELDS}
        wanted = {"title": title, "description": description, "vocabulary": current["vocabulary"]}
        if vocabulary is not None:
            wanted["vocabulary"] = vocabulary
        differing = [name for name, value in wanted.items() if current[name] != value]
        if differing:
            refuse_if_changed("pack", locked.updated_at, based_on, base, wanted, current)
        changed = {name: _audited(name, getattr(locked, name), wanted[name]) for name in differing}
        if changed:
            for name in differing:
                setattr(locked, name, wanted[name])
            locked.updated_at = utcnow()
            locked.save(only=[Pack.title, Pack.description, Pack.vocabulary, Pack.updated_at])
            audit(actor, "pack.update", locked, {"slug": locked.slug, "changed": changed})
    return locked


def _audited(name: str, old: str, new: str) -> list:
    """A changed field as the audit log keeps it: a vocabulary by its count of entries (its text may be long)."""
    if name == "vocabulary":
        return [counted(vocabulary.entry_count(text), "entry", "entries") for text in (old, new)]
    return [old, new]


def _checked_vocabulary(text: str) -> str:
    """A vocabulary as stored: no byte-order mark or control characters but line breaks and tabs (a file given
    to the command line is read as a form's text is), line breaks as one character, every line an entry or a
    comment."""
    text = readable_text(text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")).strip()
    vocabulary.parsed(text)
    return text


def all_packs() -> list[Pack]:
    return list(Pack.live().order_by(Pack.slug))


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


def documents_page(user: User, pack: Pack, page: int) -> ListPage:
    """Page ``page`` of the pack's documents ``user`` may open, by title; past the end, the last page. A pack of
    thousands of documents costs its page (and each upload's answer, which shows the list again) one page."""
    return ListPage(access.readable_documents(user, pack), DOCUMENTS_PER_PAGE, page)
