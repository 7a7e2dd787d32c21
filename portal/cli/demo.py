"""``cairn seed-demo``: the demo packs, documents, agents and users (portal/demo/)."""

from __future__ import annotations

import sys

import click

from portal.cli.support import app_context, say


@click.command("seed-demo")
@click.option(
    "--if-empty",
    is_flag=True,
    help="Seed only into a fresh database (no user, no pack), or finish a seed that was stopped; otherwise say why "
    "not and exit 0.",
)
@click.option(
    "--force", is_flag=True, help="Seed even though the database has users of its own (adds the demo administrator)."
)
def seed_demo(if_empty, force):
    """Load the demo packs, documents, agents and one user per role (idempotent).

    The demo users have published passwords, so a database with users of its own
    (a real deployment) is refused unless --force says so.
    """
    from portal.demo.catalog import DEMO_USERS
    from portal.demo.seed import is_empty, unfinished, users_of_its_own
    from portal.demo.seed import seed_demo as run_seed

    app_context()
    if if_empty and unfinished():
        say("finishing a demo seed that was stopped before its end")
    elif if_empty and not is_empty():
        say(
            "demo seed skipped: the database is not empty (it has users or packs already); "
            "the demo is loaded only into a fresh database."
        )
        return
    own = users_of_its_own()
    if own and not force:
        say(
            f"demo seed skipped: this database has users of its own ({', '.join(own[:3])}"
            f"{', …' if len(own) > 3 else ''}), so it looks like a real deployment, and the demo would add "
            f"an administrator with a published password. Run `cairn seed-demo --force` to load it anyway.",
            err=True,
        )
        sys.exit(1)
    report = run_seed()
    say(
        f"packs created: {len(report.packs_created)}; documents added: {len(report.documents_added)}, "
        f"updated: {len(report.documents_updated)}, unchanged: {report.documents_unchanged}; "
        f"agents created: {len(report.agents_created)}, returned to catalog settings: "
        f"{len(report.agents_reset)}; users created: {len(report.users_created)}"
    )
    for name in report.documents_deleted:
        say(f"skipped document {name}: an administrator deleted it, and the seed does not bring it back")
    for slug in report.packs_deleted:
        say(f"skipped pack {slug}: an administrator deleted it, and the seed does not bring it back")
    for slug in report.agents_deleted:
        say(f"skipped agent {slug}: an administrator deleted it, and the seed does not bring it back")
    say("Demo sign-ins (demo only, never use these passwords elsewhere):")
    for user in DEMO_USERS:
        say(f"  {', '.join(user['roles']):14} {user['email']:28} {user['password']}")
