"""``cairn init`` (migrate, first administrator) and ``cairn serve`` (gunicorn)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from portal.cli.support import app_context, fail, say

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@click.command()
def init():
    """Migrate the database; create the first PlatformAdmin from CAIRN_ADMIN_EMAIL/PASSWORD."""
    from portal import repair_indexes_at_start
    from portal.auth.services import UserError, create_user
    from portal.migrate import migrate
    from portal.models import ADMIN, User

    app = app_context(repair=False)
    ran = migrate(app.config["DATABASE"])
    say(f"migrations applied: {', '.join(ran) if ran else 'none (up to date)'}")
    repair_indexes_at_start(app, check_every_index=False)
    email, password = app.config["CAIRN_ADMIN_EMAIL"], app.config["CAIRN_ADMIN_PASSWORD"]
    if email and password and User.by_email(email) is None:
        try:
            create_user(email, password, {ADMIN})
        except UserError as error:
            fail(str(error))
        say(f"created {ADMIN} {email}")


DEFAULT_WORKERS = 2
DEFAULT_THREADS = 4
"""Threads per worker. A request is CPU work under one process's GIL; with more threads than that
work needs, they take turns mid-request and every page waits longer (bench/load_bench.py at 32
connections: 4 threads gave a page p99 of 141-188 ms where 8 gave 207-259 ms; docs/performance.md).
A deployment whose chat waits seconds on a remote model wants more (``--threads``)."""


def gunicorn_arguments(
    host: str, port: int, workers: int = DEFAULT_WORKERS, threads: int = DEFAULT_THREADS
) -> list[str]:
    """gunicorn's command line as ``cairn serve`` runs it (bench/load_bench.py serves the same way).

    Never ``--preload``: each worker imports the app after the fork and starts its own JVM
    on first use (a JVM does not survive a fork). Workers share nothing but the database
    and the data folder: Lucene's ``write.lock`` lets one writer at a time into a pack's
    index, and every search reopens a reader whose index another worker has committed to.
    """
    return [
        "--chdir",
        str(PROJECT_ROOT),
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--timeout",
        "120",
        # a search of MAX_SEARCH_CHARS characters, percent-encoded, is longer than gunicorn's default request line
        # (4,094 bytes), which answered with its own bare 414 page; 8,190 is the most gunicorn allows, enough for
        # 2,000 characters of ASCII punctuation (3 bytes each encoded), not for 2,000 of most other scripts
        "--limit-request-line",
        "8190",
        "--bind",
        f"{host}:{port}",
        "app:app",
    ]


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--workers",
    default=DEFAULT_WORKERS,
    show_default=True,
    # gunicorn takes 0 and then answers nothing, never saying why
    type=click.IntRange(min=1),
    envvar="WEB_CONCURRENCY",
    help="Worker processes, each with its own JVM (docs/operations.md, Serving). Env: WEB_CONCURRENCY.",
)
@click.option(
    "--threads",
    default=DEFAULT_THREADS,
    show_default=True,
    type=click.IntRange(min=1),
    help="Threads per worker process.",
)
def serve(host, port, workers, threads):
    """Serve the portal with gunicorn: worker processes with threads, each starting its JVM after the fork."""
    arguments = gunicorn_arguments(host, port, workers, threads)
    os.execvp(sys.executable, [sys.executable, "-m", "gunicorn", "--access-logfile", "-", *arguments])
