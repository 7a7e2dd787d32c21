"""Typed errors raised by services; one handler per type renders them."""


class CairnError(Exception):
    """Base class for errors a service raises on purpose."""


class Refused(CairnError):
    """An upload or edit was refused; nothing was stored.

    ``reason`` is a short machine code (``too_large``, ``empty`` …) and
    ``message`` the sentence shown to people, naming the limit that was hit.
    """

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason
        self.message = message


def too_long(reason: str, what: str, limit: int, length: int, then: str = "") -> Refused:
    """Typed text over its length limit, worded once for every field: "A title has at most 255 characters;
    this one has 300." ``what`` is the sentence's subject ("A pack's title"); ``then`` follows it."""
    return Refused(reason, f"{what} has at most {limit:,} characters; this one has {length:,}.{then}")


class VersionConflict(CairnError):
    """A write was based on a version that is no longer current."""

    def __init__(self, expected: int, current: int):
        self.expected = expected
        self.current = current
        # What happened, for a page that goes on to say what the person can do now (the edit page). Version 0 is
        # a document to create: one that exists already was not "edited" (an API client sending expected_version
        # 0, or two creating the same id at once).
        self.what_happened = (
            f"This document already exists, at version {current}, and you asked to create it. Nothing was saved"
            if expected == 0
            else f"This document changed while you were working: you edited version "
            f"{expected}, but it is now at version {current}. Nothing was saved"
        )
        super().__init__(
            f"{self.what_happened}; reload to see the current text."
            if current
            else f"This document no longer exists (you edited version {expected}). Nothing was saved."
        )


class DeleteConflict(VersionConflict):
    """A deletion confirmed on a version that is no longer current, or of a document someone else deleted first
    (``current`` 0): "you edited" and "nothing was saved" do not fit a person who asked to delete."""

    DELETED_FIRST = "Someone else deleted this document first; there was nothing left to delete."

    def __init__(self, expected: int, current: int):
        super().__init__(expected, current)
        if current:
            self.what_happened = (
                f"This document changed while you were deciding: you confirmed deleting version {expected}, "
                f"but it is now at version {current}. Nothing was deleted"
            )
            self.args = (f"{self.what_happened}; look at the new version and delete it again if you still want to.",)
        else:
            self.what_happened = "Someone else deleted this document first"
            self.args = (self.DELETED_FIRST,)


class NotFound(CairnError):
    """Missing, or not visible to the principal: both look the same."""


class PackDeleted(NotFound):
    """A change to a pack that someone else deleted meanwhile: nothing of it was stored."""

    message = (
        "This pack was deleted by someone else while your change was being saved; nothing of the change was stored."
    )


class NoLongerToReview(NotFound):
    """A feedback item a reviewer may read, but its asker has rated the answer Helpful since: nothing to review."""


class TitleConflict(VersionConflict):
    """A new title was based on a title someone else has changed meanwhile (a title keeps the version)."""

    def __init__(self, version: int, title: str):
        super().__init__(version, version)
        self.what_happened = f"Someone gave this document the title “{title}” while you were working. Nothing was saved"
        self.args = (f"{self.what_happened}; reload to see it.",)
