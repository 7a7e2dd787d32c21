"""How pages write a count of things ("1 document", "3 documents", never "document(s)") and a moment."""

from __future__ import annotations

import datetime as dt


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``counted(1, "file")`` is "1 file", ``counted(2, "file")`` "2 files"; irregular plurals are passed."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def when(moment: dt.datetime) -> str:
    """A stored moment (UTC, naive) as every page writes it: "2026-12-01 09:30"; the page says "UTC"."""
    return moment.strftime("%Y-%m-%d %H:%M")


def when_to_the_second(moment: dt.datetime) -> str:
    """The same to the second, for a history whose entries may fall in one minute: "2026-12-01 09:30:05"."""
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def edit_stamp(moment: dt.datetime | None) -> str:
    """When a thing last changed, as an edit form carries it back (its ``based_on`` field): exact to the
    microsecond, "" for a thing never changed; compared as text by ``meanwhile.refuse_if_changed``."""
    return moment.isoformat() if moment else ""


def init_app(app) -> None:
    app.add_template_filter(counted)
    app.add_template_filter(when)
    app.add_template_filter(edit_stamp)
    app.add_template_filter(when_to_the_second)
