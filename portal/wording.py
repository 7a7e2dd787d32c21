"""How pages write a count of things: "1 document", "3 documents", "0 revisions" — never "document(s)"."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``counted(1, "file")`` is "1 file", ``counted(2, "file")`` "2 files"; irregular plurals are passed."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def init_app(app) -> None:
    app.add_template_filter(counted)
