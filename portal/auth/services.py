"""Users: creation and password checks (hashed with werkzeug's scrypt)."""

from __future__ import annotations

import re

from peewee import IntegrityError
from werkzeug.security import check_password_hash, generate_password_hash

from portal.companies import company_named
from portal.db import database
from portal.errors import Refused
from portal.models import MEMBER, ROLES, User

MIN_PASSWORD_LENGTH = 8
PASSWORD_HASH_METHOD = "scrypt"  # werkzeug's default; the test suite swaps in a cheap one for speed
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
# Checked against when the e-mail is unknown, so a wrong e-mail and a wrong
# password take the same time and cannot be told apart.
_DUMMY_HASH = generate_password_hash("not-a-real-password")


class UserError(ValueError):
    """A user could not be created; the message says why."""


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UserError(f"The password must have at least {MIN_PASSWORD_LENGTH} characters.")


def create_user(email: str, password: str, roles, company_name: str | None = None) -> User:
    email = email.strip().lower()
    if not EMAIL_RE.match(email):
        raise UserError(f"{email!r} is not an e-mail address.")
    _check_password(password)
    roles = set(roles)
    unknown = roles - set(ROLES)
    if unknown or not roles:
        raise UserError(f"Roles must be among {', '.join(ROLES)}.")
    if MEMBER in roles and not company_name:
        raise UserError("A Member belongs to a company: give --company.")
    if User.by_email(email) is not None:
        raise _email_taken(email)
    password_hash = generate_password_hash(password, method=PASSWORD_HASH_METHOD)  # slow: outside the transaction
    try:
        with database().atomic():
            company = company_named(company_name, add=True)  # the command line and the seed set people up
            user = User(email=email, password_hash=password_hash, company=company)
            user.roles = roles
            user.save()
    except Refused as refused:
        raise UserError(refused.message) from None
    except IntegrityError:
        if User.by_email(email) is None:  # some other constraint: not the race this handles, so not hidden
            raise
        # another set-up command created this e-mail after the check: nothing of this one stays
        raise _email_taken(email) from None
    return user


def _email_taken(email: str) -> UserError:
    return UserError(f"A user {email} exists already.")


def set_password(user: User, password: str) -> None:
    """Replace the password and end every session of the user: a cookie from before signs no one in."""
    _check_password(password)
    User.update(password_hash=generate_password_hash(password, method=PASSWORD_HASH_METHOD)).where(
        User.id == user.id
    ).execute()
    user.end_every_session()


def authenticate(email: str, password: str) -> User | None:
    user = User.by_email(email or "")
    if user is None or not user.active:
        check_password_hash(_DUMMY_HASH, password or "")
        return None
    return user if check_password_hash(user.password_hash, password or "") else None
