"""The Answer feedback filters and order: a GET form (WTForms) read from the address, so a filtered,
sorted list is a link.

A value that names nothing (an unknown reason, status or order, a malformed date,
an agent slug no agent can have) is left out and named in ``problems``; the page
lists what the other filters match, never an error. The review list, its pages
and the CSV export read the same form.
"""

from __future__ import annotations

import datetime as dt
import re

from wtforms import Form, SelectField, StringField
from wtforms.fields import DateField, SelectChoice
from wtforms.validators import ValidationError

from portal.feedback.review import ReviewFilters
from portal.feedback.services import REASONS, STATUSES
from portal.feedback.sorting import DEFAULT_SORT, SORTS
from portal.packs.services import SLUG_RE


def _stripped(value: str | None) -> str:
    return (value or "").strip()


def _choices(anything: str, labels: dict[str, str]) -> list[SelectChoice]:
    """No filter first, then every key with its label."""
    return [SelectChoice("", anything), *(SelectChoice(key, label) for key, label in labels.items())]


def _naming_one(exists, what: str):
    """A validator: a value for which ``exists(value)`` is false names no ``what``."""

    def check(form, field) -> None:
        if field.data and not exists(field.data):
            raise ValidationError(f"There is no {what} {field.data[:40]!r}; that filter was not applied.")

    return check


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


class IsoDateField(DateField):
    """A day as YYYY-MM-DD (UTC); a malformed one is named and gives no date."""

    def process_formdata(self, valuelist) -> None:
        text = _stripped(valuelist[0] if valuelist else "")
        self.data = None
        if not text:
            return
        try:
            # the form first: Python 3.11's fromisoformat reads "20260101" and "2026-W01-1" as days too
            if not _DAY.fullmatch(text):
                raise ValueError(text)
            self.data = dt.date.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{text[:40]!r} is not a date (YYYY-MM-DD); that filter was not applied.") from None


class ReviewFilterForm(Form):
    # Rendered by hand: the choices are the agents with feedback, plus the one asked for.
    agent = StringField(
        "Agent", id="filter-agent", filters=[_stripped], validators=[_naming_one(SLUG_RE.match, "agent")]
    )
    reason = SelectField(
        "Reason",
        id="filter-reason",
        choices=_choices("Any reason", REASONS),
        validate_choice=False,
        filters=[_stripped],
        validators=[_naming_one(REASONS.__contains__, "reason")],
    )
    status = SelectField(
        "Status",
        id="filter-status",
        choices=_choices("Any status", STATUSES),
        validate_choice=False,
        filters=[_stripped],
        validators=[_naming_one(STATUSES.__contains__, "status")],
    )
    date_from = IsoDateField("From", id="filter-from", name="from")
    date_to = IsoDateField("To", id="filter-to", name="to")
    # Set by the column headings' links, not shown as a field.
    sort = StringField("Sort", filters=[_stripped])

    def validate_sort(self, field) -> None:
        if field.data and field.data not in SORTS:
            raise ValidationError(f"There is no sort order {field.data[:40]!r}; the list is sorted newest first.")

    def validate_date_to(self, field) -> None:
        if self.date_from.data and field.data and self.date_from.data > field.data:
            raise ValidationError("The date range ends before it starts, so nothing can match.")

    @property
    def problems(self) -> list[str]:
        """What was not applied (or cannot match), in the order of the fields."""
        return [message for field in self for message in field.errors]

    def filters(self) -> ReviewFilters:
        """The values that name something; a range that ends before it starts is kept (it matches nothing)."""

        def valid(field) -> str:
            return field.data if field.data and not field.errors else ""

        return ReviewFilters(
            agent=valid(self.agent),
            reason=valid(self.reason),
            status=valid(self.status),
            date_from=self.date_from.data,
            date_to=self.date_to.data,
            sort=valid(self.sort) or DEFAULT_SORT,
        )


def read_filters(args) -> ReviewFilterForm:
    """The filter form filled from the query string ``args`` and checked."""
    form = ReviewFilterForm(args)
    form.validate()
    return form
