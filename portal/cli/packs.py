"""``cairn packs create|list``, ``cairn ingest``, ``cairn sync``, ``cairn search`` and ``cairn index rebuild``."""

from __future__ import annotations

import json
import sys

import click

from portal.cli.support import app_context, echo_listing, fail, say
from portal.models import ROLES, VISIBILITIES


@click.group()
def packs():
    """Manage packs."""


@packs.command("create")
@click.argument("slug")
@click.option("--title", required=True)
@click.option("--kind", type=click.Choice(["generic", "company"]), default="generic", show_default=True)
@click.option("--company", default=None, help="The company of a company pack (added when new).")
@click.option("--description", default="")
@click.option(
    "--vocabulary",
    type=click.File(encoding="utf-8-sig"),
    default=None,
    help="A file of the words readers type for what the documents name otherwise, one 'user words => document "
    "words' a line.",
)
def packs_create(slug, title, kind, company, description, vocabulary):
    """Create a pack."""
    from portal.errors import Refused
    from portal.packs.services import create_pack

    app_context()
    try:
        text = vocabulary.read() if vocabulary is not None else ""
    except UnicodeDecodeError:
        fail(f"The vocabulary file {vocabulary.name} is not UTF-8 text.")
    try:
        pack = create_pack(slug, title, kind, company, description, add_company=True, vocabulary=text)
    except Refused as refusal:
        fail(refusal.message)
    say(f"created pack {pack.slug}")


@packs.command("list")
@click.option("--json", "as_json", is_flag=True)
def packs_list(as_json):
    """List packs with their live document counts."""
    from portal.models import Pack
    from portal.packs.services import packs_as_json

    app_context()
    echo_listing(
        packs_as_json(Pack.live().order_by(Pack.slug)),
        as_json,
        lambda row: f"{row['slug']:40} {row['kind']:8} {row['documents']:5}  {row['title']}",
    )


def outcome_json(path: str, outcome) -> dict:
    """One file's line of `cairn ingest --json`: accepted (with the stored revision) or refused (with why)."""
    from portal.documents.ingest_files import not_embedded
    from portal.models import Passage

    if not outcome.accepted:
        return {
            "file": path,
            "status": "refused",
            "reason": outcome.refused.reason,
            "message": outcome.refused.message,
            "document": None,
        }
    revision = outcome.revision
    message = "unchanged: identical to the current version, no new revision" if outcome.unchanged else None
    return {
        "file": path,
        "status": "accepted",
        "reason": None,
        "message": outcome.replaced_notes() or message,
        "document": {
            "id": outcome.document.doc_id,
            "version": revision.version,
            "sha256": revision.sha256,
            "passages": Passage.select().where(Passage.revision == revision).count(),
            "not_embedded": not_embedded(outcome.document.title, revision),
            "images": {"kept": outcome.images_kept, "not_kept": outcome.images_not_kept},
        },
    }


@click.command()
@click.argument("pack")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file.")
@click.option(
    "--visibility",
    type=click.Choice(VISIBILITIES),
    default=None,
    help="Who may read the documents directly (SPEC 2); default: each keeps its own, a new one is staff only.",
)
@click.option(
    "--reader-role",
    "reader_roles",
    multiple=True,
    type=click.Choice(ROLES),
    help="Narrow reading to these roles (exact matches; repeat for several). Needs --visibility.",
)
def ingest(pack, files, as_json, visibility, reader_roles):
    """Add files to a pack; exit 1 when any was refused."""
    from portal.documents.ingest_files import ingest_paths
    from portal.documents.readers import ReaderAccess

    if reader_roles and visibility is None:
        fail("--reader-role needs --visibility: say who may read the documents")
    app_context(check_every_index=True)
    reader_access = ReaderAccess(visibility, tuple(reader_roles)) if visibility else None
    any_refused = False
    # each line as soon as its file is stored (say prints through click.echo, which flushes)
    for path, outcome in ingest_paths(pack, files, reader_access):
        line = outcome_json(path, outcome)
        any_refused |= line["status"] == "refused"
        if as_json:
            say(json.dumps(line))
        elif line["status"] == "accepted":
            doc = line["document"]
            without_vector = f", {doc['not_embedded']} without a vector" if doc["not_embedded"] else ""
            say(
                f"{line['file']}: accepted as {doc['id']} v{doc['version']} "
                f"({doc['passages']} passages{without_vector})"
                f"{' — ' + line['message'] if line['message'] else ''}"
            )
        else:
            say(f"{line['file']}: refused ({line['reason']}) — {line['message']}")
    sys.exit(1 if any_refused else 0)


@click.command()
@click.argument("pack")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--dry-run", is_flag=True, help="Say what would change; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file, then the summary.")
@click.option(
    "--overwrite-edits",
    is_flag=True,
    help="Documents edited in the browser since the last sync take the folder's version (theirs stays as an "
    "older revision), and those whose file is gone are removed, instead of being reported as conflicts.",
)
def sync(pack, folder, dry_run, as_json, overwrite_edits):
    """Keep PACK in step with FOLDER: add new files, update changed ones, remove those gone; exit 1 on any
    refusal or conflict."""
    from portal.documents.sync import summary, sync_folder
    from portal.errors import Refused
    from portal.models import Pack

    app_context()
    found = Pack.live().where(Pack.slug == pack).first()
    if found is None:
        fail(f"no such pack: {pack}")
    lines = []
    try:
        for line in sync_folder(found, folder, dry_run, overwrite_edits):  # each line as soon as its file is done
            lines.append(line)
            say(json.dumps(line.as_json()) if as_json else _sync_text(line, dry_run))
    except Refused as refusal:
        fail(refusal.message)
    counts = summary(lines)
    if as_json:
        say(json.dumps({"summary": counts, "dry_run": dry_run, "folder": str(folder), "pack": pack}))
    else:
        done = ", ".join(f"{n} {action}" for action, n in counts.items())
        say(f"{'dry run, nothing changed — would be: ' if dry_run else ''}{done}")
    sys.exit(1 if counts["refused"] or counts["conflict"] else 0)


def _sync_text(line, dry_run: bool) -> str:
    would = "would be " if dry_run and line.action in ("added", "updated", "removed") else ""
    version = f" v{line.version}" if line.version and not would else ""
    document = f" as {line.document}{version}" if line.document and line.action != "refused" else ""
    reason = f" ({line.reason})" if line.reason else ""
    message = f" — {line.message}" if line.message else ""
    return f"{line.path}: {would}{line.action}{document}{reason}{message}"


@click.command()
@click.argument("query")
@click.option("--pack", "pack_slugs", multiple=True, required=True, help="Repeat to search several packs.")
@click.option("--limit", default=8, show_default=True, type=click.IntRange(1, 50))
@click.option("--json", "as_json", is_flag=True)
def search(query, pack_slugs, limit, as_json):
    """Search the given packs (BM25, or hybrid when CAIRN_RETRIEVAL=hybrid)."""
    from portal.models import Pack
    from portal.search.service import search_packs

    app_context(check_every_index=True)
    found = {p.slug: p for p in Pack.live().where(Pack.slug.in_(pack_slugs))}
    missing = [s for s in pack_slugs if s not in found]
    if missing:
        fail(f"no such pack: {', '.join(missing)}")
    results = search_packs([found[s] for s in pack_slugs], query, limit)
    if as_json:
        say(json.dumps({"query": query, "hits": [h.as_json() for h in results.hits]}))
        return
    if results.no_evidence:
        say("no evidence found")
    for n, hit in enumerate(results.hits, 1):
        where = f"page {hit.page}" if hit.page else (hit.heading_path or f"lines {hit.line_start}-{hit.line_end}")
        say(f"{n}. [{hit.score:.3f}] {hit.pack}/{hit.document_id} v{hit.version} — {where}")
        say("   " + " ".join(hit.text.split())[:200])


@click.group()
def index():
    """The Lucene indexes (derived from the database)."""


@index.command("rebuild")
def index_rebuild():
    """Rebuild every pack index from the database."""
    from portal.search.service import rebuild_all

    app_context()
    for slug, count in rebuild_all().items():
        say(f"{slug}: {count} passages")
