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

# What ends a question: the question mark, and the full-width and Arabic ones.
QUESTION_MARKS = ("?", "\uff1f", "\u061f")

# A time, a date, a weekday, a frequency or a duration as units write them: what a question asking "when" asks for.
# "business days", "operating hours": a span counted in some of its units.
_COUNTED_IN = r"(?:(?:business|working|calendar|operating|running)\s+)?"
TIME = re.compile(
    r"\bevery\s+(?:\w+\s+)?"
    + _COUNTED_IN
    + r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|nights?|shifts?|mornings?|evenings?)\b|"
    r"\b\d{1,2}:\d{2}\b|\b\d{4}-\d{2}-\d{2}\b|\b(mon|tues|wednes|thurs|fri|satur|sun)days?\b|\b(daily|weekly|"
    r"monthly|hourly|nightly|yearly|annually|every|each|midnight|noon|quarter-end|month-end|year-end|weekend)\b|"
    + MONTH_PATTERN
    + r"|"
    r"\b\d+\s*" + _COUNTED_IN + r"(seconds?|minutes?|mins?|hours?|hrs?|h|days?|weeks?|wks?|months?|"
    r"mos?|years?|yrs?)\b|\b\d{1,2}\s*(am|pm)\b"
    # how often, in words: "twice a day", "three times per shift", "once a week", "every two hours"; a year ("in
    # 2027", not the 2026 of INC-2026-0266) or a quarter
    r"|\b(?:once|twice|\w+\s+times)\s+(?:a|an|per|each|every)\s+\w+"
    r"|(?<![\w-])(?:19|20)\d{2}(?![\w-])|\bQ[1-4]\b",
    re.IGNORECASE,
)

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

_SYSTEM_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]{2}")


def is_system_name(token: str, as_typed: bool = False) -> bool:
    """Whether ``token`` is shaped like a system's three-character name (K4P, KXQ, KBP): a letter, then letters or
    digits; in capitals as documents write it, or in any case as a question may type it (``as_typed``: "k4p")."""
    return _SYSTEM_NAME.fullmatch(token) is not None and (as_typed or token.isupper())


def months(text: str) -> list[str]:
    """The months ``text`` names, in order (``may`` only as a date: see ``MONTH_PATTERN``)."""
    return [_month_of(match.group()) for match in _MONTH.finditer(text)]


def _month_of(mention: str) -> str:
    """The month a mention names: ``march`` for "March", ``may`` for "2 May" or "in May"."""
    words = re.findall(r"[A-Za-z]+", mention.casefold())
    return next(word for word in reversed(words) if word in MONTHS)


# A day of a month, as dates are written: "16 April", "Thu 16 April 2026", "April 16", "2026-04-16", and in
# the tables of monthly reviews "04-16" (month first; read in passages only: a question writes the month).
# "May" is the month here only with its capital, as MONTH_PATTERN has it: "in step 3 may run" names no day.
# Next to a day, a month may be cut short as people type it ("6 feb", "Sept 3").
_ABBREVIATIONS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_MONTH_NAMES = (
    "|".join([m for m in MONTHS if m != "may"] + sorted(_ABBREVIATIONS, key=len, reverse=True)) + r"|(?-i:May)"
)
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\.?\s+(?:of\s+)?(" + _MONTH_NAMES + r")\.?\b", re.IGNORECASE)
# Two days of one month: "the run of 24-25 February", "24–25 Feb" (each is a day; "24-25" is no name).
_DAY_RANGE = re.compile(
    r"\b(\d{1,2})\s*[-–]\s*(\d{1,2})(?:st|nd|rd|th)?\.?\s+(?:of\s+)?(" + _MONTH_NAMES + r")\.?\b", re.IGNORECASE
)
_MONTH_DAY = re.compile(r"\b(" + _MONTH_NAMES + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?![:.,]\d)", re.IGNORECASE)
_ISO_DAY = re.compile(r"\b\d{4}-(\d{2})-(\d{2})\b")
_SHORT_DAY = re.compile(r"(?<![\w-])(\d{2})-(\d{2})(?![\w-])")
# Day first, as Europeans write it with a slash: "14/3", "23/02", "23/02/2026" (not "24/7", around the clock).
_SLASH_DAY = re.compile(r"(?<![\w/.-])(?!24/7\b)(\d{1,2})/(\d{1,2})(?:/(?:\d{4}|\d{2}))?(?![\w/-])")
# Day first with dots, as Germans write it: "14.03.", "14.03.2026" (a two-digit month: "1.5" is a version).
_DOTTED_DAY = re.compile(r"(?<![\w.])(\d{1,2})\.(\d{2})\.(?:\d{4}|\d{2})?(?![\w])")
# A time of day: "07:40", "7am", "7:30 pm".
_TIME_OF_DAY = re.compile(r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b", re.IGNORECASE)


# A quarter of a year, as documents and people write it: "the second quarter 2026", "Q2", "3rd quarter" (not
# "quarter-end", which names none).
_QUARTER = re.compile(r"\b(?:(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter|q([1-4]))\b", re.IGNORECASE)
_QUARTER_NUMBER = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}


def quarters(text: str) -> dict[int, str]:
    """The quarters ``text`` names, as numbers mapped to how each was first written."""
    found: dict[int, str] = {}
    for m in _QUARTER.finditer(text):
        found.setdefault(_QUARTER_NUMBER[m.group(1).casefold()] if m.group(1) else int(m.group(2)), m.group())
    return found


def days(text: str, short_form: bool = True) -> dict[tuple[int, int], str]:
    """The days ``text`` names, as ``(month, day)`` mapped to how each was first written; ``short_form``:
    "04-16" counts too."""
    found: dict[tuple[int, int], str] = {}
    named = [(m, _month_number(m.group(2)), int(m.group(1))) for m in _DAY_MONTH.finditer(text)]
    # both days of a range, each written as the range: a passage naming one of them names the range
    named += [(m, _month_number(m.group(3)), int(m.group(n))) for m in _DAY_RANGE.finditer(text) for n in (1, 2)]
    named += [(m, _month_number(m.group(1)), int(m.group(2))) for m in _MONTH_DAY.finditer(text)]
    named += [(m, int(m.group(1)), int(m.group(2))) for m in _ISO_DAY.finditer(text)]
    named += [
        (m, int(m.group(2)), int(m.group(1))) for pattern in (_SLASH_DAY, _DOTTED_DAY) for m in pattern.finditer(text)
    ]
    if short_form:
        named += [(m, int(m.group(1)), int(m.group(2))) for m in _SHORT_DAY.finditer(text)]
    for match, month, day in sorted(named, key=lambda named: named[0].start()):
        if 1 <= month <= 12 and 1 <= day <= 31:
            found.setdefault((month, day), match.group())
    return found


# A duration in words: "ten minutes", "a few days", "an hour", "half a day" ("a second" is as often an ordinal). It
# answers "how long", not "when": "renew it a week before it expires" does not say when it expires.
DURATION_IN_WORDS = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|"
    r"ninety|several|a\s+few|a\s+couple\s+of)\s+(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b"
    r"|\b(?:half\s+)?(?:an?\s+)(?:minute|hour|day|week|month|year)\b(?!-)",
    re.IGNORECASE,
)


def times(text: str, durations_in_words: bool = False) -> set[str]:
    """The times ``text`` writes (``TIME``, and days however written: "20.02.2026", "14 March"), folded; "each" and
    "every" alone are none. ``durations_in_words``: "ten minutes", "a few days" too (``DURATION_IN_WORDS``)."""
    found = {m.group().casefold() for m in TIME.finditer(text)} - {"each", "every"}
    if durations_in_words:
        found |= {m.group().casefold() for m in DURATION_IN_WORDS.finditer(text)}
    return found | {text[low:high].casefold() for low, high in day_spans(text)}


def day_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` writes a day ("12 March", "March 12", "2026-03-12", "14/3") or a time of day ("7am"): the
    numbers there name no thing."""
    patterns = (_DAY_RANGE, _DAY_MONTH, _MONTH_DAY, _ISO_DAY, _SLASH_DAY, _DOTTED_DAY, _TIME_OF_DAY)
    return [m.span() for pattern in patterns for m in pattern.finditer(text)]


def _month_number(name: str) -> int:
    name = name.casefold()
    return MONTHS.index(name) + 1 if name in MONTHS else _ABBREVIATIONS[name]


def day_prefilters(month: int, day: int) -> tuple[str, str]:
    """Two strings one of which every writing of the day that ``days`` reads contains (case aside): the
    first three letters of the month's name, and "MM-DD". A database search narrows by them; ``days``
    decides."""
    return MONTHS[month - 1][:3], f"{month:02d}-{day:02d}"


# Names of months and days: capitalised, but no name of a thing a pack might not know ("on 3 March").
CALENDAR_NAMES = frozenset(
    MONTHS + tuple(_ABBREVIATIONS) + ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
)


def dated_month(text: str) -> str | None:
    """The month a document's opening text is dated in: the first month it names, by name or in a date
    ("Monthly service review: March 2026", an incident's "Opened: 2026-02-12"); None when it names none. Later
    dates in it (a fix planned for April, an earlier change) do not date it."""
    found = [(m.start(), _month_of(m.group())) for m in _MONTH.finditer(text)]
    found += [
        (m.start(), MONTHS[int(m.group(1)) - 1])
        for pattern in (_ISO_DAY, _SHORT_DAY)
        for m in pattern.finditer(text)
        if 1 <= int(m.group(1)) <= 12
    ]
    return min(found)[1] if found else None
