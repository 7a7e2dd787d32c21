"""What happened to one uploaded file, and the sentences its result line adds: images, redaction, a browser
edit it replaced."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from portal.errors import Refused
from portal.ingest.classify import REDACTION_MARKER
from portal.ingest.limits import IMAGE_REASON_TEXT, IMAGE_REASONS
from portal.models import Document, Revision
from portal.wording import counted, when

# What stands where a figure was in a redacted Word or PDF file's text (SPEC 4).
REDACTED_FIGURE = "[image not kept: document redacted]"


@dataclass(frozen=True)
class Redaction:
    """What redaction took out of an upload: its credentials always, and with them, for a Word or PDF
    file, the file itself and its images (SPEC 4); a redacted document is never a member's download."""

    kinds: tuple[str, ...]  # the kinds of credential found, with where: "private key (text)"
    original_dropped: bool = False  # a Word or PDF file
    original_for_staff_only: bool = False  # an image file: kept, but never a member's download
    images_dropped: int = 0  # the images the file held, none kept

    def summary(self) -> str:
        found = f"credentials found ({', '.join(self.kinds)}) were" if self.kinds else "credentials found were"
        sentences = [f"Redacted: the {found} replaced by {REDACTION_MARKER}."]
        if self.original_dropped:
            images = {0: "", 1: f", and its image was not kept (it became {REDACTED_FIGURE})"}.get(
                self.images_dropped,
                f", and its {self.images_dropped} images were not kept (each became {REDACTED_FIGURE})",
            )
            sentences.append(f"The original file is not kept, so it cannot be downloaded{images}.")
        elif self.original_for_staff_only:
            sentences.append("Members cannot download the file.")
        return " ".join(sentences)


@dataclass(frozen=True)
class BrowserEdit:
    """The revision whose text was written in the browser (``revisions.text_edited_in_browser``)."""

    version: int
    edited_by: str | None  # the editor's e-mail; None once that user is deleted
    edited_at: dt.datetime  # UTC, naive, as stored

    def replaced_summary(self) -> str:
        """What an upload that replaced this text says (docs/decisions.md: replaced, and said so)."""
        by = self.edited_by or "a deleted user"
        return (
            f"Version {self.version} was edited in the browser by {by} on {when(self.edited_at)} UTC; "
            f"this upload replaced that text. Version {self.version} stays in the history."
        )


@dataclass
class UploadOutcome:
    """What happened to one uploaded file."""

    filename: str
    document: Document | None = None
    revision: Revision | None = None
    created: bool = False
    unchanged: bool = False
    refused: Refused | None = None
    images_kept: int = 0
    images_not_kept: dict[str, int] = field(default_factory=dict)
    redaction: Redaction | None = None
    replaced_edit: BrowserEdit | None = None  # the browser's text this upload replaced as the current one
    replaced_file: str | None = None  # the name of the file it replaced, when that is not this one's

    def replaced_notes(self) -> str:
        """What a command's line says of the text this upload replaced: a browser edit, a file of another name."""
        edit = self.replaced_edit.replaced_summary() if self.replaced_edit else ""
        return " ".join(note for note in (edit, self.replaced_file_sentence()) if note)

    def replaced_file_sentence(self) -> str:
        """What the result line says of a text read from a file of another name that this upload replaced."""
        if not self.replaced_file:
            return ""
        return (
            f"It replaced the text read from “{self.replaced_file}”, another file with the same document id; "
            "if they are different documents, rename one and upload it again."
        )

    @property
    def accepted(self) -> bool:
        return self.refused is None

    def images_sentence(self) -> str:
        """What the result line says of the file's images, in words: ``4 images kept; 3 not kept: 2 not a PNG, …;
        1 more than … pixels.`` (each reason as ``IMAGE_REASON_TEXT`` words it). Empty for a file without images."""
        not_kept = sum(self.images_not_kept.values())
        if not self.images_kept and not not_kept:
            return ""
        kept = f"{counted(self.images_kept, 'image')} kept"
        if not not_kept:
            return f"{kept}."
        reasons = [
            (self.images_not_kept[r], IMAGE_REASON_TEXT[r]) for r in IMAGE_REASONS if self.images_not_kept.get(r)
        ]
        why = reasons[0][1] if len(reasons) == 1 else "; ".join(f"{count} {text}" for count, text in reasons)
        return f"{kept}; {not_kept} not kept: {why}."
