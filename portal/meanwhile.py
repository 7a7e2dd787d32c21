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
    """Both changes to one form; without ``base`` (a form that did not carry what it showed, such as a page
    opened before this rule) this person's values stand and every field whose current value differs is named."""
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
    """Nothing was saved: the thing changed after the form was opened. The page shows ``form`` (both changes),
    based on ``current`` and ``based_on``: the row as the refusal read it, locked, so a change made after the
    refusal is caught by the next save again."""

    def __init__(self, what: str, changed_at, merge: Merge, current: Mapping, names: Mapping | None = None):
        self.form, self.current, self.based_on = merge.form, dict(current), wording.edit_stamp(changed_at)
        named = names or {}
        theirs, both = [named.get(n, n) for n in merge.theirs], [named.get(n, n) for n in merge.both]
        at = f" at {wording.when(changed_at)} UTC" if changed_at else ""
        differs = f" They changed its {_listed(theirs)}: the form below shows theirs." if theirs else ""
        if both:
            differs += f" You both changed its {_listed(both)}: the form keeps yours."
        super().__init__(
            "changed_meanwhile",
            f"Someone else changed this {what}{at}, after you opened this form. Nothing was saved.{differs} "
            "Check it and save again.",
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
    """``ChangedMeanwhile`` when the thing changed after the form was opened (``based_on``, as
    ``wording.edit_stamp`` wrote it, is not the row's) and saving ``mine`` would undo some of that change. A
    change to nothing the form shows (an agent offered meanwhile), or the same change made by both, is no
    conflict. None: a caller that read no form (the command line, the seed) is not checked. ``names``: how the
    message names a field ("granted packs" for ``packs``)."""
    if based_on is None or based_on == wording.edit_stamp(changed_at):
        return
    merge = merged(base, mine, current)
    if base is not None and not (merge.theirs or merge.both):  # nothing of theirs would be undone
        return
    raise ChangedMeanwhile(what, changed_at, merge, current, names)


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
