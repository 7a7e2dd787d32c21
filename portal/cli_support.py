"""Helpers shared by the command-line modules (portal/cli.py and each area's cli.py)."""

from __future__ import annotations

import json
import sys

import click

from portal import create_app, repair_indexes_at_start
from portal.config import ConfigError


def app_context(check_every_index: bool = False, repair: bool = True):
    """An app with its context pushed, once what a killed process left is repaired.

    Every command indexes pending index work and sweeps leftover files (cheap when there is
    none); commands that search pass ``check_every_index`` to also rebuild a missing or lost
    index. ``cairn init`` repairs itself, after migrating.
    """
    try:
        app = create_app({"CAIRN_REPAIR_INDEX_ON_START": False})
    except ConfigError as error:
        fail(str(error))
    if repair:
        repair_indexes_at_start(app, check_every_index=check_every_index)
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
