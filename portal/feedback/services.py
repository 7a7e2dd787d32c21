"""Ratings of chat answers and their triage.

The ratings, reasons, statuses and the note limit are defined here once; forms, pages,
the CSV export (``review.py``) and the tests read them from here.
"""

from __future__ import annotations

import hashlib
import json

from peewee import IntegrityError

from portal.controls import shows_nothing
from portal.db import KeptSelect, database, locking
from portal.errors import Refused, too_long
from portal.models import Feedback, FeedbackTriage, Run, User, utcnow

RATINGS = {"helpful": "Helpful", "not_helpful": "Not helpful"}
REASONS = {
    "incorrect": "Incorrect",
    "incomplete": "Incomplete",
    "irrelevant_sources": "Irrelevant sources",
    "outdated": "Outdated",
    "did_not_cite": "Did not cite",
    "other": "Other",
}
STATUSES = {"new": "new", "in_review": "in review", "resolved": "resolved", "wont_fix": "won't fix"}
MAX_NOTE_CHARS = 2_000
REOPENED_NOTE = "The rating changed after review, so it is new again."
CHANGED_MESSAGE = (
    "This feedback changed while you were reviewing it: the member changed their rating, or another reviewer "
    "saved a triage. Nothing was saved. Read it again above; what you chose and wrote is kept below."
)


# --- Rating an answer -------------------------------------------------------------------


def checked_note(note: str | None, what: str = "A note") -> str:
    note = (note or "").replace("\r\n", "\n").strip()
    if shows_nothing(note):  # a note of zero-width spaces is no note
        note = ""
    if len(note) > MAX_NOTE_CHARS:
        raise too_long("note_too_long", what, MAX_NOTE_CHARS, len(note), " Nothing was saved.")
    return note


def checked_rating(rating: str, reasons, note: str | None) -> tuple[str, list[str], str]:
    """(rating, reasons in their listed order, note); Not helpful needs a reason. Refused otherwise."""
    if rating not in RATINGS:
        raise Refused("bad_rating", "Rate the answer Helpful or Not helpful. Nothing was saved.")
    if rating == "helpful":
        return rating, [], ""
    chosen = {r for r in reasons if r}
    unknown = chosen - set(REASONS)
    if unknown:
        raise Refused(
            "bad_reason",
            f"Unknown reason {', '.join(sorted(unknown))!r}; choose among "
            f"{', '.join(r.lower() for r in REASONS.values())}. Nothing was saved.",
        )
    if not chosen:
        raise Refused("no_reason", "Choose at least one reason why the answer was not helpful. Nothing was saved.")
    return rating, [r for r in REASONS if r in chosen], checked_note(note)


def rate_answer(user: User, run: Run, rating: str, reasons=(), note: str | None = None) -> Feedback:
    """Save ``user``'s one rating of ``run`` (a second call changes it); refuse a bad one, saving nothing.

    A Not helpful rating whose content changes after a reviewer triaged it goes back to "new".
    """
    rating, reasons, note = checked_rating(rating, reasons, note)
    with database().atomic():
        # Locked until the commit: a reviewer's triage saved meanwhile is read here (and decides whether
        # the rating goes back to "new"), never overwritten with what was read before it.
        feedback = _rating_locked.first(run.id, user.id)
        now = utcnow()  # after the wait for the lock: the history lists changes in the order they were made
        if feedback is None:
            try:
                with database().atomic():
                    return Feedback.create(
                        run=run.id,
                        user=user.id,
                        rating=rating,
                        reasons=reasons,
                        note=note,
                        created_at=now,
                        updated_at=now,
                    )
            except IntegrityError:  # the same person rated in another request a moment ago
                feedback = locking(_ratings_of(run.id, user.id)).get()
        if (feedback.rating, feedback.reasons, feedback.note) == (rating, reasons, note):
            return feedback
        if rating == "not_helpful" and feedback.status != "new":
            feedback.status = "new"
            FeedbackTriage.create(
                feedback=feedback,
                status="new",
                note=REOPENED_NOTE,
                actor=user.id,
                actor_email=user.email,
                created_at=now,
            )
        feedback.rating, feedback.reasons, feedback.note, feedback.updated_at = (rating, reasons, note, now)
        feedback.save(only=[Feedback.rating, Feedback.reasons, Feedback.note, Feedback.updated_at, Feedback.status])
    return feedback


def rating_of(user: User, run: Run) -> Feedback | None:
    return _rating.first(run.id, user.id)


def _ratings_of(run_id: int, user_id: int):
    """A person's rating of an answer, as a query (there is one at most)."""
    return Feedback.select().where((Feedback.run == run_id) & (Feedback.user == user_id))


# The rating widget of each source page, and each rating saved.
_rating = KeptSelect(_ratings_of)
_rating_locked = KeptSelect(lambda run_id, user_id: locking(_ratings_of(run_id, user_id)))


# --- Triage ---------------------------------------------------------------------------------


def seen_state(feedback: Feedback) -> str:
    """What a reviewer is shown of ``feedback`` (the rating, its reasons and note, the triage), as a digest the
    triage form sends back: a triage applies to what the reviewer read, not to what changed meanwhile."""
    shown = [feedback.rating, feedback.reasons, feedback.note, feedback.status, feedback.reviewer_note]
    return hashlib.sha256(json.dumps(shown).encode()).hexdigest()[:16]


def triage(actor: User, feedback: Feedback, status: str, note: str | None, seen: str | None = None) -> Feedback:
    """Set the status and reviewer note; every change is kept in the history with who and when.

    ``seen``: the ``seen_state`` the reviewer's page showed; when the feedback changed since (the member
    rated again, another reviewer triaged), nothing is saved (``Refused`` "changed").
    """
    if status not in STATUSES:
        raise Refused("bad_status", f"The status is one of: {', '.join(STATUSES.values())}. Nothing was saved.")
    note = checked_note(note, "A reviewer note")
    with database().atomic():
        # Locked, as a rating change locks it: each sees the other's commit, and the history's order
        # (by time) is the order the changes were made in.
        feedback = locking(Feedback.select().where(Feedback.id == feedback.id)).get()
        if seen is not None and seen != seen_state(feedback):
            raise Refused("changed", CHANGED_MESSAGE)
        if (feedback.status, feedback.reviewer_note) == (status, note):
            return feedback
        now = utcnow()
        feedback.status, feedback.reviewer_note, feedback.reviewed_by, feedback.reviewed_at = (
            status,
            note,
            actor.id,
            now,
        )
        feedback.save(only=[Feedback.status, Feedback.reviewer_note, Feedback.reviewed_by, Feedback.reviewed_at])
        FeedbackTriage.create(
            feedback=feedback, status=status, note=note, actor=actor.id, actor_email=actor.email, created_at=now
        )
    return feedback


def triage_history(feedback: Feedback) -> list[FeedbackTriage]:
    return list(
        FeedbackTriage.select()
        .where(FeedbackTriage.feedback == feedback)
        .order_by(FeedbackTriage.created_at.desc(), FeedbackTriage.id.desc())
    )
