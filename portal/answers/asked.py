"""A question that asks for a value, and whether a text holds one: part of the evidence check.

Covering a question's words is not answering it. "How many hours does the
team have to resolve a P4 incident?" is covered word for word by a review that
lists "P1 4 hours, P2 8 hours, P3 72 hours" and, elsewhere, "P4 resolved within
target: 62 of 64" — yet no sentence gives hours for P4. So when a question asks
for a value, one unit of the evidence (a sentence, a list item or a table row,
read with its heading, lead-in, heading path and document title), in a passage
naming the months the question names (one for each month when it names several),
and not itself about other months only, must hold a value of the kind asked for:

- **a count or a quantity** ("how many hours", "how much downtime", "what
  percentage", "what's the warning threshold"): a number that
  the question does not itself name (a number as counts are written: 312,
  9,999,999.99, 85min; not SM58, nor a date), in a unit that also names what is counted
  or the quantity's noun (any of those words the packs use at all; a word the
  packs never use is the asker's own, and does not decide). A percentage, a
  share, a number, a size, a limit or an amount is seldom written beside its
  value ("a 1.9 TB backup"): any number answers for those. Asked in a measure
  ("the resolution target in hours", "in TB"), the number is written in it or in
  one it converts to ("33 h 11 min" for minutes; never "90 percent" for hours).
  A percentage or an availability is asked in percent even when the question
  does not say so ("what percentage …": "Incidents P1; January: 1" is none);
  the mean time to restore is an MTTR;
- **a value named by a noun it is written after** ("which kernel patch level",
  "which version", "what is the password of …"): a token shaped like a value —
  with digits or an identifier, not a date — within a few words after that noun and in its
  clause ("patch level 200", "version 1.4", a table row "Version: 1.4; …"); so
  the noun alone, as in "the HANA revision update; app03 retired", is not an
  answer to "which HANA revision" (a default may also stand after its value: "14
  days by default");
- **a time**, for a question of one part asking "when": a time, date,
  weekday or duration (``written.TIME``) the question does not name itself;
- **a value of its own shape** (a phone number, an e-mail address, an amount of
  money, the name of a company or a person) is checked by ``portal.answers.shaped``.

Other nouns whose values are words (a status, a result) are left out: only a
value's shape can be checked without understanding the sentence. A question what
to do ("How do I limit how many …?") asks for steps, not for the value its clause
names. When the
question names identifiers, the unit (with its context) must name one of them, other than the noun asked
for: "the MTTR for P4" is not answered by the MTTR of P2.
A question of several parts ("…, and which program?") is not checked this way:
each part may be answered by a different passage.

How something went is checked by ``portal.answers.outcome``. The rules are
general; they were calibrated on the tuning half of the demo question set
(docs/retrieval-quality.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from portal.answers import written
from portal.answers.shaped import SHAPED_VALUES
from portal.search.analysis import as_read

Tokenizer = Callable[[str], list[str]]

# --- counts and named values ----------------------------------------------------------------

# Words that end the counted phrase ("how many tickets did …", "how much downtime in …"), a negation typed with or
# without its apostrophe among them: "how many didnt come out" counts what the sentence named, not "didnt come out".
_AFTER_PHRASE = (
    r"(?:(?:do|does|did|is|are|was|were|has|have|had|ca|could|wo|would|should)n['’]?t|"
    r"do|does|did|is|are|was|were|has|have|had|can|could|will|would|should|must|may|"
    r"in|of|per|for|at|on|to|the)"
)
_COUNT = re.compile(r"\bhow (?:many|much)\s+((?:[\w/-]+\s+){0,3}?)" + _AFTER_PHRASE + r"\b", re.IGNORECASE)
# ... or by a verb in the past ("how many IDocs failed", "how many letters went out"), or by the question's end
# ("how many jobs?"); the phrase has a word at least, so "how many failed IDocs were …" counts failed IDocs.
_COUNT_BEFORE_VERB = re.compile(
    r"\bhow (?:many|much)\s+((?:[\w/-]+\s+){0,2}?[\w/-]+)\s+"
    r"(?:\w+ed|went|came|got|ran|took|left|fell|sent|made|kept|broke|stuck)\b|"
    r"\bhow (?:many|much)\s+((?:[\w/-]+\s+){0,2}?[\w/-]+)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
_NOT_A_NOUN = (
    r"(?!(?:do|does|did|is|are|was|were|has|have|had|can|could|will|would|should|must|may|the|a|an|"
    r"if|when|and|or|to|for|of|in)\b)"
)
# How a question asking for a value opens: "which", "what", "what's the", "what was the".
_ASKING = r"\b(?:which|what(?:'s|’s|\s+(?:is|was|are|were))?(?:\s+the)?)\s+"
# In the plural only where the plural asks for values too ("the warning and critical thresholds"): "which
# targets failed", "which shares are mounted" ask for things. The group holds the noun in the singular.
_QUANTITY_NOUNS = (
    r"(number of|percentage|share|size|amount|price|cost|fee|rate|limit|threshold|target|availability|mttr|"
    r"mean time to (?:restore|repair|recover)|duration)"
    r"(?:(?:(?<=price)|(?<=cost)|(?<=fee)|(?<=rate)|(?<=limit)|(?<=threshold))s)?\b"
)
# A quantity asked for by its noun: right after "which" or "what", or after up to two words once "what is the"
# (or "what's") has said a thing is named ("what's the warning threshold"; not "what steps reduce MTTR"). The
# last noun is the one asked for ("the rate limit": a limit). Answered by a number.
QUANTITY_PATTERN = (
    r"\b(?:which|what)\s+"
    + _QUANTITY_NOUNS
    # ... or asked as what the user wants to know ("wants to know the resolution target in hours for P4. What is
    # it?", "can you tell me the warning threshold")
    + r"|\b(?:know|tell\s+me|give\s+me)\s+(?:the|our|its|their)\s+(?:"
    + _NOT_A_NOUN
    + r"[\w/-]+(?:['’]s)?\s+){0,2}"
    + _QUANTITY_NOUNS
    + r"|\bwhat(?:'s|’s|\s+(?:is|was|are|were))(?:\s+the)?\s+(?:[\w/-]+\s+(?:and|or)\s+)?(?:"
    + _NOT_A_NOUN
    + r"[\w/-]+(?:['’]s)?\s+){0,2}"
    + _QUANTITY_NOUNS
)
_QUANTITY = re.compile(QUANTITY_PATTERN, re.IGNORECASE)
# "How long did the import take", "how long till it shows up": a duration, which a time written in a unit gives ("30
# days", "ten minutes": ``written.TIME``), whatever the verb but a "be" or "get" ending its clause: "how long should a
# runbook be", "how long can a description get", "how long a password" and "how long is the window title" ask a
# length; "how long until the delivery can be billed" a duration.
_HOW_LONG = re.compile(
    r"\bhow\s+long\b(?!\s+(?:is|are|was|were|an?)\b)(?![^?.!;]*\b(?:be|get)\s*(?:$|[?.!;,]|at\s+(?:most|least)\b))"
    # ... "be" with a person doing or undergoing it: "how long were we locked out", "how long is it until …"
    r"|\bhow\s+long\s+(?:is|are|was|were)\s+(?:we|they|you|i|it|users|people)\b"
    # ... "be" with a verb of time: "how long are the logs kept?"
    r"|\bhow\s+long\b(?=(?:\s+[\w'’/-]+){0,8}?\s+(?:keep|keeps|kept|retain(?:s|ed)?|stor(?:e|es|ed)|last(?:s|ed)?|"
    r"take|takes|took|wait(?:s|ed)?|run|runs|ran|stay(?:s|ed)?|remain(?:s|ed)?|hold|holds|held|valid|down|offline|"
    r"delayed|late|blocked|stuck|locked|frozen|overr[ua]n)"
    # ... the verb of the clause, not a noun's first word ("how long should the run book be" asks a length)
    r"(?=\s*(?:[?.!,;:]|$|\b(?:for|in|on|at|after|before|until|since|during|by|when|while|and|or|then|so|to|from|"
    r"with|without|the|a|an|it|them|this|that|there|each|every|again|overall|altogether|approximately|about)\b)))"
    # ... or with a noun that is a span of time, ending its phrase ("how long is the resolution target for a P4
    # ticket?"); not one that only names another noun ("how long is the window title", "the list of targets")
    r"|\bhow\s+long\s+(?:is|was|are|were)\s+(?:the\s+|a\s+|an\s+|our\s+|its\s+|their\s+)?"
    r"(?:(?!(?:of|for)\b)[\w/-]+\s+){0,3}?"
    r"(?:targets?|periods?|windows?|downtimes?|outages?|freezes?|retention|delays?|waits?|validity|runtimes?|"
    r"intervals?|deadlines?)"
    r"(?=\s*(?:[?.!,;:]|$|\b(?:for|in|on|at|of|after|before|until|since|during|by|when|while|and|or|to|from|with)\b))",
    re.IGNORECASE,
)
# A quantity asked for by an adjective: how big something is asks for its size (any number answers), how available
# a system was for its availability.
_HOW_ADJECTIVE = (
    (re.compile(r"\bhow\s+(?:big|large|small|full)\b", re.IGNORECASE), "size"),
    (re.compile(r"\bhow\s+available\b", re.IGNORECASE), "availability"),
)
# Quantities whose noun is seldom written with their value ("2 percent", "12 of them"): any number answers.
_UNWRITTEN_NOUNS = frozenset(("percentage", "share", "number", "size", "limit", "amount"))
# Quantities with a measure of their own: a percentage or an availability is a number in percent. "Type: Incidents
# P1; February: 2; January: 1" gives no percentage of incidents resolved in January.
_MEASURE_OF_NOUN = {"percentage": "percent", "availability": "percent"}
# Nouns whose value is written right after them ("version 1.4", "patch level 200").
# Not: status, name, result (their values are words); number, id, parameter (the value is named without
# the noun as often as with it: "the change number" is "CHG-2026-0142"); a code, but for a return, error, reason
# or exit code ("return code 12"): as often program code ("what was the reprint code reusing?") or letters
# ("the area code BC").
_VERSION_NOUNS = frozenset(("version", "revision", "level"))
_VALUE_NOUNS = "version|revision|level|password|(?:(?<=return )|(?<=error )|(?<=reason )|(?<=exit ))code"
_NAMED_VALUE = re.compile(
    _ASKING + r"((?:" + _NOT_A_NOUN + r"[\w/-]+(?:['’]s)?\s+){0,3}?(" + _VALUE_NOUNS + r"))\b",
    re.IGNORECASE,
)
# Nouns asking for a value only as the head of their phrase: "the default (value) of enque/table_size", "which
# SAP note"; not "the default language of K4P" nor "the release note for R26.04", whose values are words.
_HEAD_NOUNS = {
    "default": re.compile(r"\bthe\s+default(?:\s+values?|\s+settings?)?\s+(?:of|for)\b", re.IGNORECASE),
    "note": re.compile(r"\bwhich\s+(?:SAP\s+)?notes?\b|\bSAP\s+notes?\s+(?:for|fixes|corrects)\b", re.IGNORECASE),
}
# "…, and which program?" / "… expire? And when …": a question of several parts.
# Where the next part of a question of several parts starts: ", and which step catches that?", or a second
# question after the first one's question mark.
_NEXT_PART = re.compile(
    r",?\s+and\s+(?=(?:(?:at|in|on|to|for|by|from|with|under)\s+)?(?:which|what|how|when|who|where|why)\b)"
    r"|(?<=[" + "".join(written.QUESTION_MARKS) + r"])\s+(?=\S)",
    re.IGNORECASE,
)


def question_parts(question: str) -> list[str]:
    """The parts of a question that asks several things at once; one part for a plain question."""
    return [part for part in _NEXT_PART.split(question) if part.strip()]


_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[_\-/.,][A-Za-z0-9]+)*")
# How many words after its noun a named value may stand ("patch level of K4P: 200").
NAMED_VALUE_WINDOW = 4
# ... and in its clause: up to a semicolon, a line's or a sentence's end (not a decimal point: "version 1.4").
_CLAUSE_END = re.compile(r"[;!?\n]|\.(?!\w)")


# The values asked for by what they are, not by a noun of the question: the "no evidence" note says "No passage
# found gives a name." rather than "a value for “name”".
VALUE_KINDS = frozenset(SHAPED_VALUES) | {"duration", "number"}


@dataclass(frozen=True)
class AskedValue:
    """What a question asks for: ``kind`` "count" (with the counted phrase), "quantity" or "named" (with
    its noun), "time" (a "when" question: ``evidence._time_asked``; a "how long", phrase "duration") or
    "identifier" (with the shapes the packs write that kind in: ``identifier_kind_asked``)."""

    kind: str
    phrase: str
    measure: str = ""  # the measure the value is asked in ("in hours", "in terabytes"): ``MEASURES``
    shapes: frozenset[str] = frozenset()  # kind "identifier": how the packs write the noun's identifiers


@dataclass(frozen=True)
class Unit:
    """A unit of a passage as the check reads it: its text, and the words around it that name its subject."""

    text: str
    context: str  # document title, heading path, the unit's heading and lead-in
    passage: str  # the whole passage it stands in, with its title and heading path
    document_months: frozenset[str] = frozenset()  # months asked its document is dated in (``ask._months_by_hit``)
    labels: tuple[str, ...] = ()  # a row's column headings (``units.Unit.labels``)


# A question typed as a noun phrase, without a word that asks ("mttr for p4 tickets in march?", "k4q
# availability in march, percent?"): its quantity noun is what it asks for.
_TERSE_QUANTITY = re.compile(r"\b" + _QUANTITY_NOUNS, re.IGNORECASE)
_ASKING_WORD = re.compile(
    r"\b(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|should|would|will|"
    r"has|have|had|may|might|must|shall|any|tell|show|give|list|explain|describe|need)\b",
    re.IGNORECASE,
)


# Without a question mark, a noun phrase asks for its quantity noun only where that noun heads it: at its end or
# before a preposition ("kbp availability in january", "p4 resolution target in hours"). "cost center blocked for
# postings" and "the rate limit change broke logons" say what happened.
_TERSE_HEAD = re.compile(
    r"\b" + _QUANTITY_NOUNS + r"(?=\s*$|\s*[,;:(\-–—]|\s+(?:for|in|of|at|on|per|by|during|since|from)\b)", re.IGNORECASE
)


def _terse_quantity(question: str) -> re.Match | None:
    """The quantity noun a question typed as a noun phrase, without a word that asks, asks for (or None)."""
    if _ASKING_WORD.search(question):
        return None
    if question.rstrip().endswith("?"):
        return _TERSE_QUANTITY.search(question)
    return _TERSE_HEAD.search(question)


# A question asking what to do: the steps answer it, whatever value its clause names. It may follow a clause that
# tells the situation ("If there was an error in the spool job, how do I restart it?").
_ASKS_WHAT_TO_DO = re.compile(
    r"(?:^|[.?!,;:]\s*)\W*how\s+(?:do|can|could|should|would|shall|must)\s+(?:i|we|you|one)\b"
    r"|(?:^|[.?!,;:]\s*)\W*how\s+to\b",
    re.IGNORECASE,
)


def asks_what_to_do(question: str) -> bool:
    """Whether ``question`` asks what to do ("How do I …", "…, how can we …", "how to …"): steps answer it."""
    return _ASKS_WHAT_TO_DO.search(question) is not None


# A question asking for a value in a measure: "what/which …" opening it, "in <measure>" after its noun ("What
# dialog response time in milliseconds did app04 show?", "What is the SLA for P4 incidents in hours?"); not "what
# happens when the job runs in minutes", nor "Which transaction shows the lock waits of app04 in seconds?".
_ASKS_IN_MEASURE = re.compile(
    r"^\W*(?:what|which)\s+(?!(?:happens|happened|if|do|does|did|can|should|would)\b)"
    # ... within its clause: "Which job cleans the spool when it grows in GB …" asks for a job
    r"(?:(?!(?:when|if|that|which|who|where|while|because|after|before|until|so)\b)[\w/-]+\s+){1,6}?"
    r"(?:in|as)\s+(?:a\s+)?(?:number\s+of\s+)?[\w%]+\b",
    re.IGNORECASE,
)


# A target of resolving, responding, restoring or fixing is a time ("What is the resolution target for a P4
# incident?", "the fix time target for a P4 ticket"): the share of P4 incidents resolved within their target is not
# one.
_TIME_TARGET = re.compile(
    # not an on-time target ("on-time target for deliveries: 95 percent")
    r"\b(?:(?:resolution|response|restor\w*|recovery|fix(?:ing)?|repair)\s+(?:time\s+)?|(?<!on-)(?<!on\s)time\s+)"
    r"targets?\b",
    re.IGNORECASE,
)


def _counted_noun(phrase: str) -> str:
    """The counted phrase up to its last plural noun, when words follow it: "how many stickers end up in one job"
    counts stickers, not "stickers end up" (the verb the counting patterns do not know ends it)."""
    words = phrase.split()
    plural = [i for i, word in enumerate(words[:-1]) if _PLURAL_WORD.fullmatch(word)]
    return " ".join(words[: plural[-1] + 1]) if plural and not _PLURAL_WORD.fullmatch(words[-1]) else phrase


_PLURAL_WORD = re.compile(r"[A-Za-z][\w-]{2,}s(?<![su]s)(?<!is)")


# What "how much …" counts in time: "how much warning do we get before a downtime" is answered by "ten working days".
_SPANS_COUNTED = frozenset({"time", "warning", "notice", "advance notice", "lead time", "heads-up", "heads up"})
# ... and "how much space / disk / memory" a size, in bytes of any measure ("2.1 TB"), whatever the unit calls it
_SIZES_COUNTED = frozenset({"space", "disk space", "disk", "storage", "memory"})


def asked_value(question: str) -> AskedValue | None:
    """The value ``question`` asks for, or None (it asks for none, it has several parts, or it asks for a value
    of a shape of its own, which ``SHAPED_VALUES`` checks: "the phone number of …" asks for no count)."""
    if len(question_parts(question)) > 1 or any(asked.search(question) for asked, _ in SHAPED_VALUES.values()):
        return None
    if asks_what_to_do(question):
        return None  # "How do I limit how many processes RFC can grab?" asks for steps, not for a count
    measure = asked_measure(question)
    # the shorter counted phrase of the two readings: "how many IDocs failed in K4P" counts IDocs, not "IDocs failed"
    count, before_verb = _COUNT.search(question), _COUNT_BEFORE_VERB.search(question)
    phrases = ([count.group(1)] if count else []) + (
        [before_verb.group(1) or before_verb.group(2)] if before_verb else []
    )
    if phrases:
        counted = _counted_noun(min((p.strip() for p in phrases), key=len))
        if counted.casefold() in _SPANS_COUNTED:  # "how much time do we have to …" asks a duration
            return AskedValue("time", "duration")
        if counted.casefold() in _SIZES_COUNTED and _HOW_MUCH.search(question):
            return AskedValue("quantity", "size", measure or "gigabytes")
        return AskedValue("count", counted, measure)
    if _HOW_LONG.search(question):
        return AskedValue("time", "duration")
    for how, noun in _HOW_ADJECTIVE:
        if how.search(question):
            return AskedValue("quantity", noun, measure or _MEASURE_OF_NOUN.get(noun, ""))
    quantity = _QUANTITY.search(question) or _terse_quantity(question)
    if quantity and any(
        n.start() < quantity.end() and quantity.start() < n.end() for n in _NAMING_NUMBER.finditer(question)
    ):
        quantity = None  # "what is the transport number of that correction?" asks for an identifier, not a count
    if quantity:  # a number answers it, in a unit naming the noun unless it is one seldom written (_UNWRITTEN_NOUNS)
        noun = next(group for group in quantity.groups() if group).removesuffix(" of")
        if noun.casefold().startswith("mean time to"):
            noun = "mean time to restore (MTTR)"  # as the reviews write it
        if not measure and _TIME_TARGET.search(question):
            measure = "hours"  # a time, in any of its measures: "Target: 90 percent" is none
        return AskedValue("quantity", noun, measure or _MEASURE_OF_NOUN.get(noun.casefold(), ""))
    named = _NAMED_VALUE.search(question)
    if named:
        return AskedValue("named", named.group(2))
    for noun, pattern in _HEAD_NOUNS.items():
        if pattern.search(question):
            return AskedValue("named", noun)
    if measure and _ASKS_IN_MEASURE.search(question):
        # "what dialog response time in milliseconds did app04 show?": whatever its noun, a number in that measure
        return AskedValue("quantity", "number", measure)
    return None


# A number that names a thing, not a count: "the transport number of", "the change number of".
_NAMING_NUMBER = re.compile(
    r"\b(?:transport|change|incident|problem|ticket|order|document|version|partner|material|serial|phone|note)\s+"
    r"number\s+of\b",
    re.IGNORECASE,
)
# "Which change number …", "which transport request …", "what is the job name …": an identifier of a kind the packs
# name after its noun. Only with "number", "request", "id" or a job's "name": "what did transport K4DK901670 change?"
# asks what the transport changed.
_KIND_ASKED = re.compile(
    r"\b(?:which|what(?:['’]s|\s+(?:is|was|are|were)\s+the)?)\s+(?:(?!(?:do|does|did|is|are|was|were|has|have|had|can|could|will|would)\b)[\w-]+\s+){0,2}?"
    r"((change|transport|incident|problem)\s+(?:number|request|id)|job\s+name)s?\b",
    re.IGNORECASE,
)


def identifier_kind_asked(question: str) -> tuple[str, str]:
    """The identifier ``question`` asks for by its noun ("change number" for "under which change number …") and the
    part of the question asking it, or ``("", question)``. A question of several parts asks it in one of them that asks
    no value ("Which transport numbers were imported in R26.01, and who approved each of them?")."""
    for part in question_parts(question):
        match = _KIND_ASKED.search(part)
        if match and (part == question or asked_value(part) is None):
            return " ".join(match.group(1).casefold().split()), part
    return "", question


def identifier_shape(token: str) -> str:
    """How an identifier is written, its digits aside: CHG-2026-0123 and CHG-2026-0130 alike, not INC-2026-0291."""
    return re.sub(r"\d", "9", token)


def identifier_shapes(kind: str, texts: Iterable[str]) -> frozenset[str]:
    """The shapes of the identifiers ``texts`` write right after the noun of ``kind`` ("change CHG-2026-0123",
    "transport K4DK901702"): what an identifier of that kind looks like in these packs."""
    noun = kind.split()[0]
    after = re.compile(rf"\b{re.escape(noun)}s?\s+([A-Za-z0-9]+(?:[_\-/.][A-Za-z0-9]+)*)", re.IGNORECASE)
    return frozenset(
        identifier_shape(m.group(1))
        for text in texts
        for m in after.finditer(text)
        if any(c.isdigit() for c in m.group(1)) and any(c.isalpha() for c in m.group(1))
    )


def months_asked(question: str) -> list[str]:
    """The months ``question`` names, each once, in order: "in Feb" is February, as search reads it."""
    return list(dict.fromkeys(written.months(as_read(question))))


def names_month(text: str, month: str) -> bool:
    """Whether ``text`` names ``month``, by its name or in a date (2026-03-14, 03-14)."""
    if month in written.months(text):
        return True
    number = written.MONTHS.index(month) + 1
    return re.search(rf"(?<![\w-])(?:\d{{4}}-)?{number:02d}-\d{{2}}(?![\w-])", text) is not None


# A number as a count or a quantity is written: 312, 9,999,999.99, 85min, 2h, 60GB; not SM58, ORDERS05 or
# K4DK901522 (the names of things), nor a date (2026-04-18, 03-14).
_NUMBER = re.compile(r"\d[\d.,]*(?:[A-Za-z]{1,3})?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{2}-\d{2}")


def _is_number(token: str) -> bool:
    return _NUMBER.fullmatch(token) is not None or any(
        part in written.NUMBER_WORDS for part in token.casefold().split("-")
    )


def _is_version(token: str) -> bool:
    """A version, revision or level (1.4, 200, SP05, v1.4, TLSv1.2), not the system named after the noun (K4P)."""
    # after "revision" a system's name (in any case) names the system, not a value
    return _is_value(token) and not written.is_system_name(token, as_typed=True)


def _is_value(token: str) -> bool:
    """A token shaped like a value: it has digits (12, K4DK901702, 15,2), or is an identifier (ZTW_EDI); a
    date is no version, level or code."""
    return (any(c.isdigit() for c in token) or "_" in token) and _DATE.fullmatch(token) is None


def _same_noun(word: str, noun: str) -> bool:
    return word.casefold().removesuffix("s") == noun.casefold().removesuffix("s")


def holds_named_value(unit: Unit, noun: str, named: set[str]) -> bool:
    """Whether ``unit`` has a value (not one the question names) within a few words after ``noun``. A
    table row reads "Version: 1.3; Date: …", so a column named by the noun counts too. A default is also
    written after its value ("14 days by default")."""
    for match in _TOKEN.finditer(unit.text):
        if _same_noun(match.group(), noun):
            # the value stands in the noun's clause: "HANA revision update; app03 retired" names none
            clause = _CLAUSE_END.split(unit.text[match.end() :], maxsplit=1)[0]
            following = _TOKEN.findall(clause)[:NAMED_VALUE_WINDOW]
            if noun.casefold() == "default":
                following += _TOKEN.findall(_CLAUSE_END.split(unit.text[: match.start()])[-1])[-NAMED_VALUE_WINDOW:]
            shaped = _is_version if noun.casefold() in _VERSION_NOUNS else _is_value
            if any(shaped(t) and t.casefold() not in named for t in following):
                return True
    return False


# A measure a value may be asked in ("the resolution target in hours") -> how a value in it is written
# ("4 hours", "4 h", "33 h 11 min"; "1.9 TB"). A value of another kind ("90 percent") does not answer.
MEASURES = {
    "milliseconds": r"ms|msecs?|milliseconds?",
    "seconds": r"s|secs?|seconds?",
    "minutes": r"min|mins|minutes?",
    "hours": r"h|hrs?|hours?",
    "days": r"d|days?|working\s+days?",
    "weeks": r"weeks?",
    "months": r"months?",
    "years": r"years?",
    "percent": r"%|percent|per\s+cent",
    "kilobytes": r"KB|kilobytes?",
    "megabytes": r"MB|megabytes?",
    "gigabytes": r"GB|gigabytes?",
    "terabytes": r"TB|terabytes?",
}
_MEASURE_ALIASES = {"%": "percent", "pct": "percent", "kb": "kilobytes", "mb": "megabytes", "gb": "gigabytes"}
_MEASURE_ALIASES |= {"tb": "terabytes", "hrs": "hours", "mins": "minutes", "secs": "seconds", "ms": "milliseconds"}
_ASKED_IN = re.compile(
    r"\b(?:in|as)\s+(?:a\s+)?(?:number\s+of\s+)?("
    + "|".join(sorted(set(MEASURES) | set(_MEASURE_ALIASES) - {"%"}, key=len, reverse=True))
    + r")\b|\bin\s+(%)",
    re.IGNORECASE,
)
# A value in hours answers a question asking in minutes (it converts), one in percent does not.
_KINDS = (
    ("seconds", "minutes", "hours", "days", "weeks", "months", "years"),
    ("kilobytes", "megabytes", "gigabytes", "terabytes"),
    ("percent",),
)
_IN_MEASURE = {
    measure: re.compile(
        r"(?<![\w.,/-])\d(?:[\d.,]*\d)?\s?(?:" + "|".join(MEASURES[m] for m in kind) + r")(?![\w])", re.IGNORECASE
    )
    for kind in _KINDS
    for measure in kind
}
# A response time asked in milliseconds is given in milliseconds or seconds, not in minutes ("an overrun of 70
# minutes"); a value in milliseconds answers no question asked in hours ("under 800 ms" is no resolution target).
_IN_MEASURE["milliseconds"] = re.compile(
    r"(?<![\w.,/-])\d(?:[\d.,]*\d)?\s?(?:" + MEASURES["milliseconds"] + "|" + MEASURES["seconds"] + r")(?![\w])",
    re.IGNORECASE,
)


# ... or typed right after the quantity's noun, as on a phone ("resolution target hrs for a p4 ticket?", "k4p
# availability % in march").
_MEASURE_AFTER_NOUN = re.compile(
    r"(?:"
    + _QUANTITY_NOUNS
    + r"\s+("
    + "|".join(sorted(set(MEASURES) | set(_MEASURE_ALIASES) - {"%"}, key=len, reverse=True))
    + r")\b|"
    + _QUANTITY_NOUNS
    + r"\s*(%))"
    # ... ending the noun phrase: "target hrs for a p4", not "the target MS SQL version"
    + r"(?=\s*(?:[?.,;:!]|$)|\s+(?:for|of|in|on|at|per|by|during|since)\b)",
    re.IGNORECASE,
)


def asked_measure(question: str) -> str:
    """The measure ``question`` asks its value in ("in hours", "target hrs" -> "hours"), or ""."""
    match = _ASKED_IN.search(question)
    if match:
        word = match.group(1) or match.group(2)
    else:
        match = _MEASURE_AFTER_NOUN.search(question)
        if not match:
            return ""
        word = match.group(2) or match.group(4)
    word = word.casefold()
    return _MEASURE_ALIASES.get(word, word)


# A number with a unit of time, size or share: a measure, not a count of things ("every 5 minutes" says nothing of
# how many errors fire an alert).
_MEASURED = re.compile(
    r"(?<![\w.,/-])\d(?:[\d.,]*\d)?\s?(?:" + "|".join(MEASURES.values()) + r")(?![\w])", re.IGNORECASE
)
_HOW_MANY = re.compile(r"\bhow\s+many\b", re.IGNORECASE)
_HOW_MUCH = re.compile(r"\bhow\s+much\b", re.IGNORECASE)
_MEASURE_WORD = re.compile(r"^(?:" + "|".join(MEASURES.values()) + r")\b", re.IGNORECASE)


def holds_count(
    unit: Unit, counted: set[str], named: set[str], tokenize: Tokenizer, measure: str = "", of_things: bool = False
) -> bool:
    """Whether ``unit`` gives a number (not one the question names), in the ``measure`` asked for if any,
    and names what is counted; ``of_things``: a count of things, which a measure ("5 minutes") is not."""
    text = _MEASURED.sub(" ", unit.text) if of_things else unit.text
    if not any(_is_number(t) and t.casefold() not in named for t in _TOKEN.findall(text)):
        return False
    if measure and not _IN_MEASURE[measure].search(unit.text):
        return False
    return not counted or bool(counted & set(tokenize(f"{unit.context} {unit.text}")))


def answered(
    question: str,
    asked: AskedValue,
    units: Iterable[Unit],
    tokenize: Tokenizer,
    in_packs: Callable[[str], bool],
    about: Callable[[str], bool],
) -> bool:
    """Whether one of ``units``, in a passage naming the months the question names (for a question naming
    several, one unit for each month, in a passage naming it, or of a document dated in it:
    ``Unit.document_months``), holds the value ``asked`` for.
    ``in_packs(term)`` says whether an analysed term occurs in the searched packs.

    ``about(text)`` says whether a unit, read with its context, is about what the question names: the
    evidence check asks for one of the question's identifiers there, so "P1 4 hours, P2 8 hours" does
    not give the hours of P4, while a digest's title names the incident its sentences are about.
    """
    holds = value_holder(question, asked, tokenize, in_packs)
    units = list(units)
    asked_months = months_asked(question)
    # "in February and in March": each month's value may stand in its own month's review
    periods = [[month] for month in asked_months] or [[]]
    return all(_held_in(units, period, holds, about) for period in periods)


def _held_in(units: list[Unit], months: list[str], holds: Callable[[Unit], bool], about: Callable[[str], bool]) -> bool:
    """Whether a unit about the question's subject, in a passage naming ``months``, holds the value."""
    # a passage's units share its text and document: it is read for the months once
    in_period: dict[tuple[str, frozenset[str]], bool] = {}
    for unit in units:
        key = (unit.passage, unit.document_months)
        if key not in in_period:
            in_period[key] = all(month in unit.document_months or names_month(unit.passage, month) for month in months)
        read = f"{unit.context}\n{unit.text}"
        if in_period[key] and not _of_other_months(read, months) and about(read) and holds(unit):
            return True
    return False


def _of_other_months(text: str, months: list[str]) -> bool:
    """Whether ``text`` (a unit with its context) names months, none of them one of ``months``: in a review
    comparing months, March's row ("Total; March: 191; February: 173") gives no count for April."""
    if not months:
        return False
    named = set(written.months(text)) | {written.MONTHS[month - 1] for month, _ in written.days(text)}
    return bool(named) and not named & set(months)


# Words that say a time is asked ("what time", "how long", "how often"), or that something takes place ("when does the
# job run"), or that the time asked is the present one ("how often does it run now"), not what it is the time of: a
# job's row gives its start time without the word "run".
_TIME_WORDS = frozenset(
    """time times date dates day days hour hours minute minutes week weeks month months year years long often
    run runs ran start starts started begin begins began end ends ended finish finishes finished stop stops stopped
    happen happens happened occur occurs occurred take takes took schedule scheduled plan planned due
    now currently today nowadays""".split()
)


def _subject_terms(question: str, tokenize: Tokenizer, in_packs: Callable[[str], bool]) -> set[str]:
    """The terms of what a question asks the time of, the packs use: its words but the names of things (those with a
    digit, an ``_`` or in capitals: "When is the disaster recovery test for KBP?" asks of a disaster recovery test,
    which a unit naming KBP and a time need not be about) and the words asking for a time."""
    words = [
        word
        for word in _TOKEN.findall(question)
        if not (any(c.isdigit() for c in word) or "_" in word or word.isupper())
        and word.casefold() not in _TIME_WORDS
        and word.casefold() not in written.CALENDAR_NAMES
    ]
    return {term for term in tokenize(" ".join(words)) if in_packs(term)}


def _about_subject(unit: Unit, subject: set[str], tokenize: Tokenizer) -> bool:
    """Whether ``unit`` is about what a question asks the time of: it or its context names one of ``subject``, or
    its passage names half of them ("It ended at 07:10." in a passage about the MRP job)."""
    if not subject or subject & set(tokenize(f"{unit.context} {unit.text}")):
        return True
    return 2 * len(subject & set(tokenize(unit.passage))) >= len(subject)


# A number per some span or thing: "50 per minute", "200 IDocs/s", "ten an hour".
_RATE = re.compile(
    r"\d[\d.,]*\s*(?:[A-Za-z-]+\s*){0,2}?(?:\bper\s+(?!cent\b)\w+|/\s?(?:s|sec|second|min|minute|h|hour|day)\b"
    r"|(?:an?|each)\s+(?:second|minute|hour|day)\b)",
    re.I,
)


def value_holder(
    question: str, asked: AskedValue, tokenize: Tokenizer, in_packs: Callable[[str], bool]
) -> Callable[[Unit], bool]:
    """Whether a unit holds a value of the kind ``asked`` for (``answered`` without the months and the
    subject): the evidence check asks it of the passages, the extractive answer prefers the units it holds."""
    named = {m.group().casefold() for m in _TOKEN.finditer(question)}
    question_times = written.times(question) if asked.kind == "time" else set()
    counted = (
        {t for t in tokenize(asked.phrase) if in_packs(t)}
        if asked.kind == "count" or (asked.kind == "quantity" and asked.phrase.casefold() not in _UNWRITTEN_NOUNS)
        else set()
    )

    subject = _subject_terms(question, tokenize, in_packs) if asked.kind == "time" else set()
    # "how many errors …" counts things; "how many hours …", "how much downtime …", or a count asked in a measure,
    # does not
    of_things = (
        asked.kind == "count"
        and not asked.measure
        and not _MEASURE_WORD.match(asked.phrase)
        and _HOW_MANY.search(question) is not None
    )

    def holds(unit: Unit) -> bool:
        if asked.kind == "time":  # a time the question does not name itself, about what it is the time of
            given = written.times(unit.text, durations_in_words=asked.phrase == "duration")
            # a row's column heading is no time of the row: "Type: Incidents P4; February: 64" gives none
            given -= {time for label in unit.labels for time in written.times(label)}
            return bool(given - question_times) and _about_subject(unit, subject, tokenize)
        if asked.kind == "quantity" and asked.phrase.casefold() == "rate":
            # a rate is written "50 IDocs per minute" as often as "a rate of 50 a minute"
            return holds_count(unit, set(), named, tokenize, asked.measure) and (
                _RATE.search(unit.text) is not None or bool(counted & set(tokenize(f"{unit.context} {unit.text}")))
            )
        if asked.kind in ("count", "quantity"):
            return holds_count(unit, counted, named, tokenize, asked.measure, of_things)
        if asked.kind == "identifier":
            return any(
                identifier_shape(t) in asked.shapes and t.casefold() not in named for t in _TOKEN.findall(unit.text)
            )
        return holds_named_value(unit, asked.phrase, named)

    return holds
