"""Companies: the one rule for naming a company and for when a name may add one.

A pack, an agent and a Member each name a company. The browser forms choose among the
existing companies, so a name typed or crafted into a form never adds one; only the
command line and the demo seed, which set a deployment up, add companies (``add=True``).
"""

from __future__ import annotations

from peewee import IntegrityError

from portal.controls import shows_nothing
from portal.db import database
from portal.errors import Refused, too_long
from portal.models import Company

MAX_NAME_CHARS = 255  # the width of the column (PostgreSQL enforces it)


def checked_name(name: str | None) -> str:
    """A company's name as stored: trimmed, no wider than its column ("" for none)."""
    name = (name or "").strip()
    if shows_nothing(name):  # no name, not a company nobody can read
        name = ""
    if len(name) > MAX_NAME_CHARS:
        raise too_long("bad_company", "A company's name", MAX_NAME_CHARS, len(name))
    return name


def company_named(name: str | None, *, add: bool = False) -> Company | None:
    """The company called ``name`` (None for no name); a name no company has is refused, or added with ``add``."""
    name = checked_name(name)
    if not name:
        return None
    company = Company.get_or_none(Company.name == name)
    if company is not None:
        return company
    if not add:
        raise Refused(
            "unknown_company",
            f"The Company field names “{name}”, which is no existing company: choose one of the list. "
            "Nothing was stored.",
        )
    try:
        with database().atomic():
            return Company.create(name=name)
    except IntegrityError:  # another set-up command added it after the lookup
        return Company.get(Company.name == name)


def company_names() -> list[str]:
    """Every company's name, as the forms offer them."""
    return [c.name for c in Company.select().order_by(Company.name)]
