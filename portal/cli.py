"""The ``cairn`` command line: set-up, users, packs, ingest, search and the index."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from portal.cli_support import app_context, echo_listing, fail

PROJECT_ROOT = Path(__file__).resolve().parents[1]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main():
    """Cairn: knowledge packs, BM25 search and cited answers."""
    from portal.config import ConfigError, check_settings, environment_settings

    try:
        check_settings(environment_settings())
    except ConfigError as error:
        fail(f"{error}\nCairn does not start until this setting is fixed.")


@main.command()
def init():
    """Migrate the database; create the first PlatformAdmin from CAIRN_ADMIN_EMAIL/PASSWORD."""
    from portal import repair_indexes_at_start
    from portal.auth.services import UserError, create_user
    from portal.migrate import migrate
    from portal.models import User

    app = app_context(repair=False)
    ran = migrate(app.config["DATABASE"])
    click.echo(f"migrations applied: {', '.join(ran) if ran else 'none (up to date)'}")
    repair_indexes_at_start(app, check_every_index=False)
    email, password = app.config["CAIRN_ADMIN_EMAIL"], app.config["CAIRN_ADMIN_PASSWORD"]
    if email and password and User.by_email(email) is None:
        try:
            create_user(email, password, {"PlatformAdmin"})
        except UserError as error:
            fail(str(error))
        click.echo(f"created PlatformAdmin {email}")


@main.group()
def users():
    """Manage users."""


@users.command("create")
@click.argument("email")
@click.option("--role", "roles", multiple=True, required=True,
              type=click.Choice(["PlatformAdmin", "AgentBuilder", "Auditor", "Member"]), help="Repeat for several.")
@click.option("--company", default=None, help="Company of a Member.")
def users_create(email, roles, company):
    """Create a user; the password is read from standard input."""
    from portal.auth.services import UserError, create_user

    app_context()
    password = sys.stdin.readline().rstrip("\n") if not sys.stdin.isatty() else click.prompt(
        "Password", hide_input=True, confirmation_prompt=True)
    try:
        user = create_user(email, password, set(roles), company)
    except UserError as error:
        fail(str(error))
    click.echo(f"created {user.email} ({', '.join(sorted(user.roles))})")


@users.command("set-password")
@click.argument("email")
def users_set_password(email):
    """Give a user a new password (read from standard input); every session of that user ends."""
    from portal.auth.services import UserError, set_password
    from portal.models import User

    app_context()
    user = User.by_email(email)
    if user is None:
        fail(f"no user {email}")
    password = sys.stdin.readline().rstrip("\n") if not sys.stdin.isatty() else click.prompt(
        "New password", hide_input=True, confirmation_prompt=True)
    try:
        set_password(user, password)
    except UserError as error:
        fail(str(error))
    click.echo(f"new password set for {user.email}; every earlier session of it has ended")


@main.group()
def packs():
    """Manage packs."""


@packs.command("create")
@click.argument("slug")
@click.option("--title", required=True)
@click.option("--kind", type=click.Choice(["generic", "company"]), default="generic", show_default=True)
@click.option("--company", default=None)
@click.option("--description", default="")
def packs_create(slug, title, kind, company, description):
    """Create a pack."""
    from portal.errors import Refused
    from portal.packs.services import create_pack

    app_context()
    try:
        pack = create_pack(slug, title, kind, company, description)
    except Refused as refusal:
        fail(refusal.message)
    click.echo(f"created pack {pack.slug}")


@packs.command("list")
@click.option("--json", "as_json", is_flag=True)
def packs_list(as_json):
    """List packs with their live document counts."""
    from portal.models import Pack
    from portal.packs.services import packs_as_json

    app_context()
    echo_listing(packs_as_json(Pack.select().order_by(Pack.slug)), as_json,
                 lambda row: f"{row['slug']:40} {row['kind']:8} {row['documents']:5}  {row['title']}")


@main.command()
@click.argument("pack")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file.")
def ingest(pack, files, as_json):
    """Add files to a pack; exit 1 when any was refused."""
    from portal.documents.ingest_report import ingest_paths

    app_context(check_every_index=True)
    any_refused = False
    for line in ingest_paths(pack, files):  # each line as soon as its file is stored (click.echo flushes)
        any_refused |= line["status"] == "refused"
        if as_json:
            click.echo(json.dumps(line))
        elif line["status"] == "accepted":
            doc = line["document"]
            not_embedded = f", {doc['not_embedded']} without a vector" if doc["not_embedded"] else ""
            click.echo(f"{line['file']}: accepted as {doc['id']} v{doc['version']} "
                       f"({doc['passages']} passages{not_embedded})"
                       f"{' — ' + line['message'] if line['message'] else ''}")
        else:
            click.echo(f"{line['file']}: refused ({line['reason']}) — {line['message']}")
    sys.exit(1 if any_refused else 0)


@main.command()
@click.argument("query")
@click.option("--pack", "pack_slugs", multiple=True, required=True, help="Repeat to search several packs.")
@click.option("--limit", default=8, show_default=True, type=click.IntRange(1, 50))
@click.option("--json", "as_json", is_flag=True)
def search(query, pack_slugs, limit, as_json):
    """Search the given packs (BM25, or hybrid when CAIRN_RETRIEVAL=hybrid)."""
    from portal.models import Pack
    from portal.search.service import search_packs

    app_context(check_every_index=True)
    found = {p.slug: p for p in Pack.select().where(Pack.slug.in_(pack_slugs))}
    missing = [s for s in pack_slugs if s not in found]
    if missing:
        fail(f"no such pack: {', '.join(missing)}")
    results = search_packs([found[s] for s in pack_slugs], query, limit)
    if as_json:
        click.echo(json.dumps({"query": query, "hits": [h.as_json() for h in results.hits]}))
        return
    if results.no_evidence:
        click.echo("no evidence found")
    for n, hit in enumerate(results.hits, 1):
        where = f"page {hit.page}" if hit.page else (hit.heading_path or f"lines {hit.line_start}-{hit.line_end}")
        click.echo(f"{n}. [{hit.score:.3f}] {hit.pack}/{hit.document_id} v{hit.version} — {where}")
        click.echo("   " + " ".join(hit.text.split())[:200])


@main.group()
def index():
    """The Lucene indexes (derived from the database)."""


@index.command("rebuild")
def index_rebuild():
    """Rebuild every pack index from the database."""
    from portal.search.service import rebuild_all

    app_context()
    for slug, count in rebuild_all().items():
        click.echo(f"{slug}: {count} passages")


@main.command("seed-demo")
@click.option("--if-empty", is_flag=True,
              help="Seed only into a fresh database (no user, no pack); otherwise say why not and exit 0.")
@click.option("--force", is_flag=True,
              help="Seed even though the database has users of its own (adds the demo administrator).")
def seed_demo(if_empty, force):
    """Load the demo packs, documents, agents and one user per role (idempotent).

    The demo users have published passwords, so a database with users of its own
    (a real deployment) is refused unless --force says so.
    """
    from portal.demo.catalog import DEMO_USERS
    from portal.demo.seed import is_empty, users_of_its_own
    from portal.demo.seed import seed_demo as run_seed

    app_context()
    if if_empty and not is_empty():
        click.echo("demo seed skipped: the database is not empty (it has users or packs already); "
                   "the demo is loaded only into a fresh database.")
        return
    own = users_of_its_own()
    if own and not force:
        click.echo(f"demo seed skipped: this database has users of its own ({', '.join(own[:3])}"
                   f"{', …' if len(own) > 3 else ''}), so it looks like a real deployment, and the demo would add "
                   f"an administrator with a published password. Run `cairn seed-demo --force` to load it anyway.",
                   err=True)
        sys.exit(1)
    report = run_seed()
    click.echo(f"packs created: {len(report.packs_created)}; documents added: {len(report.documents_added)}, "
               f"updated: {len(report.documents_updated)}, unchanged: {report.documents_unchanged}; "
               f"agents created: {len(report.agents_created)}, returned to catalog settings: "
               f"{len(report.agents_reset)}; users created: {len(report.users_created)}")
    for name in report.documents_deleted:
        click.echo(f"skipped document {name}: an administrator deleted it, and the seed does not bring it back")
    for slug in report.agents_deleted:
        click.echo(f"skipped agent {slug}: an administrator deleted it, and the seed does not bring it back")
    click.echo("Demo sign-ins (demo only, never use these passwords elsewhere):")
    for user in DEMO_USERS:
        click.echo(f"  {', '.join(user['roles']):14} {user['email']:28} {user['password']}")


@main.command("eval")
@click.option("--questions", "questions_path", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Question set (JSON). Default: the demo set, run on a fresh temporary seed.")
@click.option("--current", is_flag=True, help="Evaluate against this database instead of a fresh demo seed.")
@click.option("--cranfield", "cranfield_dir", type=click.Path(file_okay=False), default=None,
              help="Cranfield folder (default: ../shared/corpora/cranfield when present).")
@click.option("--no-cranfield", is_flag=True, help="Skip the Cranfield collection.")
@click.option("--json", "as_json", is_flag=True)
@click.option("--details", is_flag=True, help="List every question that missed.")
@click.option("--no-regressions", is_flag=True, help="Skip the regression cases recorded from answer feedback.")
@click.option("--regressions-only", is_flag=True,
              help="Run only the regression cases (this database): is each expected document in the top 8 now?")
@click.option("--split", type=click.Choice(["tune", "check"]),
              help="Only the questions of this half of the question set.")
def evaluate(questions_path, current, cranfield_dir, no_cranfield, as_json, details, no_regressions,
             regressions_only, split):
    """Retrieval and answer quality: Recall@8 and nDCG@10 of a question set, its answers through `ask`
    (key fact stated, expected document cited, "no evidence" right and wrong, p95 latency), Cranfield
    next to plain Lucene, and the regression cases recorded from answer feedback."""
    from portal.evaluation.runner import run_evaluation

    report = run_evaluation(Path(questions_path) if questions_path else None, current,
                            None if no_cranfield else (Path(cranfield_dir) if cranfield_dir else "default"),
                            regressions=not no_regressions, only_regressions=regressions_only, split=split)
    click.echo(json.dumps(report.as_json()) if as_json else report.as_text(details))


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True)
def serve(host, port):
    """Serve the portal with gunicorn (one worker process: the JVM lives in it, never forked)."""
    os.execvp(sys.executable, [
        sys.executable, "-m", "gunicorn", "--chdir", str(PROJECT_ROOT), "--workers", "1", "--threads", "8",
        "--timeout", "120", "--bind", f"{host}:{port}", "--access-logfile", "-", "app:app"])


from portal.agents.cli import agents, ask  # noqa: E402  (the commands attach to ``main`` defined above)

main.add_command(agents)
main.add_command(ask)


if __name__ == "__main__":
    main()
