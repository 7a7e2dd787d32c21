"""``cairn users create|set-password``: passwords are read from standard input."""

from __future__ import annotations

import sys

import click

from portal.cli.support import app_context, fail, say
from portal.models import ROLES


@click.group()
def users():
    """Manage users."""


@users.command("create")
@click.argument("email")
@click.option(
    "--role",
    "roles",
    multiple=True,
    required=True,
    type=click.Choice(ROLES),
    help="Repeat for several.",
)
@click.option("--company", default=None, help="Company of a Member.")
def users_create(email, roles, company):
    """Create a user; the password is read from standard input."""
    from portal.auth.services import UserError, create_user

    app_context()
    password = (
        sys.stdin.readline().rstrip("\n")
        if not sys.stdin.isatty()
        else click.prompt("Password", hide_input=True, confirmation_prompt=True)
    )
    try:
        user = create_user(email, password, set(roles), company)
    except UserError as error:
        fail(str(error))
    say(f"created {user.email} ({', '.join(sorted(user.roles))})")


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
    password = (
        sys.stdin.readline().rstrip("\n")
        if not sys.stdin.isatty()
        else click.prompt("New password", hide_input=True, confirmation_prompt=True)
    )
    try:
        set_password(user, password)
    except UserError as error:
        fail(str(error))
    say(f"new password set for {user.email}; every earlier session of it has ended")
