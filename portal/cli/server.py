"""``cairn init`` (migrate, first administrator) and ``cairn serve`` (gunicorn)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from portal.cli.support import app_context, fail

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@click.command()
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


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True)
def serve(host, port):
    """Serve the portal with gunicorn (one worker process: the JVM lives in it, never forked)."""
    os.execvp(
        sys.executable,
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--chdir",
            str(PROJECT_ROOT),
            "--workers",
            "1",
            "--threads",
            "8",
            "--timeout",
            "120",
            "--bind",
            f"{host}:{port}",
            "--access-logfile",
            "-",
            "app:app",
        ],
    )
