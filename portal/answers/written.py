"""How months, numbers and identifiers are written: read here by the question type, the asked-value rules
and the evidence check alike, so the three never disagree on what is a month or a number."""

from __future__ import annotations

import re

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
# A month by its name. "may" is a month only where a date or a preposition of time says so, written as a
# name ("2 May", "in May", "mid-May", "May 7") or with a year ("may 2026"): in "how fast the MES may send" or
# "in step 3 may run" it is a verb, and a question about it asks no month.
MONTH_PATTERN = (
    r"\b(?:"
    + "|".join(month for month in MONTHS if month != "may")
    + r")\b|(?:\b\d{1,2}\.?\s+|\b(?:in|of|since|until|till|by|from|to|during|before|after|early|late)\s+|\bmid-?\s*)"
    r"(?-i:May)\b|\b(?-i:May)\s+\d|\bmay\s+\d{4}\b"
)
_MONTH = re.compile(MONTH_PATTERN, re.IGNORECASE)

# Numbers written as words count as numbers ("eleven of the twelve").
NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred thousand "
    "half".split()
)
# A unit carries a number for the answerer with a multiplier too ("double the volume"); a multiplier is no value
# the evidence check accepts ("Double-check the threshold" gives none).
NUMBER_WORD_PATTERN = r"\b(?:" + "|".join(sorted(NUMBER_WORDS | {"double"})) + r")\b"

# A token of letters, digits and joiners, as identifiers are written: INC-2026-0266, VL02N,
# Z_PP_CONF_IDOC_PROCESS, R26.04, 2026-03-14.
IDENTIFIER_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[_\-/.][A-Za-z0-9]+)*")


def months(text: str) -> list[str]:
    """The months ``text`` names, in order (``may`` only as a date: see ``MONTH_PATTERN``)."""
    return [_month_of(match.group()) for match in _MONTH.finditer(text)]


def _month_of(mention: str) -> str:
    """The month a mention names: ``march`` for "March", ``may`` for "2 May" or "in May"."""
    words = re.findall(r"[A-Za-z]+", mention.casefold())
    return next(word for word in reversed(words) if word in MONTHS)
