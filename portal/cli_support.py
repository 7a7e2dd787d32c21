"""Helpers shared by the command-line modules (portal/cli.py and each area's cli.py)."""

from __future__ import annotations

import json
import sys

import click

from portal import create_app
from portal.config import ConfigError


def app_context():
    """An app with its context pushed; commands never repair indexes at start (the server does)."""
    try:
        app = create_app({"CAIRN_REPAIR_INDEX_ON_START": False})
    except ConfigError as error:
        fail(str(error))
    app.app_context().push()
    return app


def fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def echo_listing(rows: list[dict], as_json: bool, line) -> None:
    """Print ``rows`` as one JSON array, or one ``line(row)`` each (with the company in brackets)."""
    if as_json:
        click.echo(json.dumps(rows))
        return
    for row in rows:
        company = f" ({row['company']})" if row.get("company") else ""
        click.echo(line(row) + company)
