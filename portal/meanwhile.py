"""A form saved after someone else changed what it shows: who changed what, and the form both changes make.

An edit form carries the values it showed (its ``base_…`` fields) and when its thing had last changed
(``based_on``, ``wording.edit_stamp``). When the thing has changed since, nothing is saved
(``ChangedMeanwhile``), and the page shows a form that keeps both changes: the other person's value
for each field this person left as shown, this person's for each field they changed, and for the set
of granted packs what each added and took away. The message names what the other person changed and
where both changed one field (the form holds this person's), so a second save is an informed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from portal import wording
from portal.errors import Refused


@dataclass
class Merge:
    form: dict  # the values the page shows now: both changes
    theirs: list[str] = field(default_factory=list)  # fields only the other person changed
    both: list[str] = field(default_factory=list)  # fields both changed, to different values


def merged(base: Mapping | None, mine: Mapping, current: Mapping) -> Merge:
    """Both changes to one form; without ``base`` (a form that did not carry it) this person's values
    stand and every field whose current value differs from theirs is named as changed."""
    if base is None:
        return Merge(dict(mine), [name for name in mine if mine[name] != current[name]])
    form, theirs, both = {}, [], []
    for name, value in mine.items():
        was, now = base[name], current[name]
        if now == was or now == value:
            form[name] = value
        elif value == was:
            form[name], theirs = now, [*theirs, name]
        elif isinstance(value, frozenset):  # each person's additions and removals
            form[name], both = (now | (value - was)) - (was - value), [*both, name]
        else:
            form[name], both = value, [*both, name]
    return Merge(form, theirs, both)


class ChangedMeanwhile(Refused):
    """Nothing was saved: the thing changed after the form was opened. ``form`` is what the page shows now."""

    def __init__(self, what: str, changed_at, merge: Merge, based: bool, names: Mapping | None = None):
        self.form = merge.form
        named = names or {}
        merge = Merge(merge.form, [named.get(n, n) for n in merge.theirs], [named.get(n, n) for n in merge.both])
        at = f" at {wording.when(changed_at)} UTC" if changed_at else ""
        if not based:  # a form that did not carry what it showed: only what differs now is known
            differs = f" The current {_listed(merge.theirs)} {_verb(merge.theirs)} from yours." if merge.theirs else ""
            then = " Your text is still below: save again to replace their change with it."
        else:
            differs = f" They changed its {_listed(merge.theirs)}: the form below shows theirs." if merge.theirs else ""
            if merge.both:
                differs += f" You both changed its {_listed(merge.both)}: the form keeps yours."
            then = " Check it and save again."
        super().__init__(
            "changed_meanwhile",
            f"Someone else changed this {what}{at}, after you opened this form. Nothing was saved.{differs}{then}",
        )


def refuse_if_changed(
    what: str,
    changed_at,
    based_on: str | None,
    base: Mapping | None,
    mine: Mapping,
    current: Mapping,
    names: Mapping | None = None,
) -> None:
    """``ChangedMeanwhile`` when the form was based on another moment of change than the row's (``based_on``
    as ``wording.edit_stamp`` wrote it; None: a caller that read no form, such as the command line, is not
    checked). ``names``: how the message names a field ("granted packs" for ``packs``)."""
    if based_on is not None and based_on != wording.edit_stamp(changed_at):
        raise ChangedMeanwhile(what, changed_at, merged(base, mine, current), base is not None, names)


def shown_base(form: Mapping, names, sets=()) -> dict | None:
    """The values an edit form showed (its ``base_…`` fields; ``sets``: fields of several values), or None for a
    form that carried no ``based_on``."""
    if form.get("based_on") is None:
        return None
    # a browser sends the line breaks of every field as CRLF, and the services store LF
    base = {name: form.get(f"base_{name}", "").replace("\r\n", "\n") for name in names}
    base.update({name: frozenset(form.getlist(f"base_{name}")) for name in sets})
    return base


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _verb(names: list[str]) -> str:
    return "differs" if len(names) == 1 else "differ"
