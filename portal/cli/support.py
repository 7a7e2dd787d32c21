"""What every command shares: the group that builds the app through Flask's ``ScriptInfo``, the
app context a command runs in, the error exit, the listing printer and ``say``, which every command prints with."""

from __future__ import annotations

import json
import os
import sys

import click
from flask.cli import AppGroup, ScriptInfo

from portal import create_app, repair_indexes_at_start
from portal.config import ConfigError
from portal.controls import readable_text, strip_control_characters


def cli_app():
    """The app a command runs against: settings from the environment; the command repairs, not the factory."""
    return create_app({"CAIRN_REPAIR_INDEX_ON_START": False})


class CairnGroup(AppGroup):
    """The ``cairn`` group: hands its commands a ``ScriptInfo`` that builds the app with ``cli_app``.

    ``app.test_cli_runner().invoke(main, [...])`` passes its own ``ScriptInfo`` (the test's app)
    instead. Commands are plain click commands, not ``AppGroup.command``'s ``with_appcontext``:
    each builds its app itself (``app_context``), so a bad setting ends with a message and exit 2
    and ``eval``/``serve`` build none.
    """

    def make_context(self, info_name, args, parent=None, **extra):
        if "obj" not in extra and "obj" not in self.context_settings:
            extra["obj"] = ScriptInfo(create_app=cli_app, set_debug_flag=False)
        return super().make_context(info_name, [_as_sent(arg) for arg in args], parent=parent, **extra)


def _as_sent(arg: str) -> str:
    """An argument as the browser's forms read text (``request_text``): without the bidirectional reordering
    controls and the other control characters but tab and line breaks, which a title or a name would store as
    one thing and show as another. A path to a file that exists is kept as typed (passwords come from standard
    input, never from an argument)."""
    cleaned = readable_text(arg)
    return arg if cleaned != arg and os.path.lexists(arg) else cleaned


def app_context(check_every_index: bool = False, repair: bool = True):
    """An app with its context pushed for the rest of the command, once what a killed process left is repaired.

    Every command indexes pending index work and sweeps leftover files (cheap when there is
    none); commands that search pass ``check_every_index`` to also rebuild a missing or lost
    index. ``cairn init`` repairs itself, after migrating.
    """
    ctx = click.get_current_context()
    info = ctx.find_object(ScriptInfo) or ScriptInfo(create_app=cli_app, set_debug_flag=False)
    try:
        app = info.load_app()
    except ConfigError as error:
        fail(str(error))
    if repair:
        repair_indexes_at_start(app, check_every_index=check_every_index)
    ctx.with_resource(app.app_context())
    return app


def say(text: str = "", err: bool = False) -> None:
    """Print ``text`` as a line for a terminal. What it holds came from documents, file names and questions,
    so it loses the control characters a terminal would run (ESC and CSI start sequences that clear the
    screen or retitle the window; a CR overwrites the line): text stored before its upload lost them, and
    the one lost now, print alike. JSON output is ``json.dumps``'s, which writes them as escapes."""
    click.echo(strip_control_characters(text).replace("\r", ""), err=err)


def fail(message: str) -> None:
    say(f"error: {message}", err=True)
    sys.exit(2)


def echo_listing(rows: list[dict], as_json: bool, line) -> None:
    """Print ``rows`` as one JSON array, or one ``line(row)`` each (with the company in brackets)."""
    if as_json:
        say(json.dumps(rows))
        return
    for row in rows:
        company = f" ({row['company']})" if row.get("company") else ""
        say(line(row) + company)
