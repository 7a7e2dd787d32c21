"""Which passages an agent gets for a question, and whether they are evidence: one rule, one place.

Pure: the question's analyzed terms, the searched packs' own statistics and
the search hits in; a ``Choice`` out. ``portal.runs.ask`` feeds it and stores
the outcome.

**The evidence check.** Sharing a word is not evidence: "a good recipe for
apple strudel" shares "good" (stemmed "goods") with goods-issue passages. Each
informative term of the question (analyzer terms without stopwords) weighs its
BM25 idf in the searched packs, so rare terms say more about the subject than
common ones; a term that occurs nowhere in those packs (``strudel``, ``PFCG``)
weighs the most a term can, and is uncovered by definition. A passage covers
the terms in its text, heading path or title. There is evidence when

- the best ``MAX_JOINED`` passages together cover at least
  ``MIN_JOINED_COVERAGE`` of the question's weight (a question of several parts
  may be answered by several passages), or, when the packs lack most of its
  words, a passage that carries some of the weight reads like the question to
  the embedding model (``LIKE_A_PASSAGE``: in a pack of one document every
  passage says "runbook", which weighs nothing there). The word after "how" that
  only asks for a kind of value ("how long", "how often", "how quickly") weighs nothing, nor does "a lot of": a
  passage about the job need not say "long". Conversely, a question most of
  whose weight (``MOSTLY_UNCOVERED``) no passage found holds needs a passage that
  reads more like it than ``UNLIKE_A_PASSAGE`` ("pallet jack broken - who do i
  call" shares only "pallet" and "call" with a dock runbook), unless a word of it
  is found only through the packs' vocabulary;
- every identifier the question names (incident and change numbers,
  transaction codes, job, message and document ids, numbers; adjacent ones as
  one run, "ZTW_EDI 017") occurs verbatim, case aside, in one passage, and a
  passage naming it covers at least ``MIN_ANCHORED_COVERAGE``: a question about
  INC-2026-0427 is not answered by INC-2026-0412. When the user tells the
  situation before asking, the identifiers of the sentences that do not ask
  (``asking_part``) are context: one of them must occur in the evidence, not each.
  In a question of several parts the passage naming an identifier need cover only
  the part that names it. An ordinal (the 2nd) is no identifier, nor is the day of a date
  or a time; a range (P1-P3) is its two names, a plural (P3s) the name, and a name
  ending in a digit may begin a longer one written in letters (S/4HANA); a product
  line (S/4, R/3) is no identifier. A number a noun numbers ("return code 16",
  "status 51", "sold-to party 200719") is named only after that noun (or in the
  noun's column of a table), not as a day or a time (``names_numbered``). A
  three-letter system name after "in", "to", "from" or "at" says where something
  happens ("shows up in SAP"), not what is asked, and is not required; nor is one
  no passage found writes a sibling of ("take SAP offline": the product, not one
  system of several as KXQ is beside KXP);
- a day the question names ("12 March", "feb 6", "2026-03-12") is named by a
  passage, or by another passage of a document searched (an incident's date
  stands in its record, not in its summary), in any of the ways dates are written;
- no capitalised name inside the question (Poland) is one the packs never use, and
  a name of several capitalised words (Solution Manager) occurs as one in the passages;
- a question asking for a value of a kind that has a shape of its own (a phone,
  mobile or fax number; an e-mail address; the name of a company or a person; an
  amount of money: ``shaped.SHAPED_VALUES``) is answered only by
  a passage holding a value of that shape, and that passage, too, must cover at
  least ``MIN_ANCHORED_COVERAGE``: "the mobile phone number of the DBA on call"
  is not answered by "alert the DBA on-call phone". The shapes are general, not
  this corpus's; an ISO date is not a phone number;
- a question asking for a count or for a value named by its noun ("how many hours
  …", "which patch level …") is answered only when one unit of the issued passages
  gives such a value, in a passage naming the months the question names (and the
  days it names, in the passage or elsewhere in its document: "on 31 March" is not
  answered by the count of 12 March; the months it names, in the passage or a
  document dated in them), the unit with its context naming the question's
  identifiers ("P1 4 hours, P2 8 hours" does not answer for P4; a job's, not
  only the system it runs on; ``portal.answers.asked``), but for a three-letter name no unit writes a sibling
  of ("the SAP support team": the product every unit is about); a question of one
  part asking "when" asks for a time the same way ("When does the KXQ certificate
  expire?" is not answered by the other systems' expiry dates), and one asking
  "which change number" (or transport request, incident or problem number) an
  identifier written as the passages write one after that noun ("change
  CHG-2026-0123": an INC-2026-0291 is none);
- a question about one of a family of names written alike (plant TW20; TW10 and
  TW30 are its siblings, as K4Q is K4P's and KXP is KBP's) is not answered when the
  units closest to it (``CLOSEST_UNITS``) all name a sibling and none of them
  (with its context) names the name asked: the MRP job of TW10 does not answer
  for TW20. A sibling the question names itself says nothing;
- a question how something went ("Did the rehearsal finish with return code
  0?", "Was PRB-2026-007 closed …?", "What came out of the DR test?", "How long
  did the downtime overrun?") is not answered when the units closest to it
  (``CLOSEST_UNITS``) only say what is to happen ("must finish", "will confirm",
  a proposed action, the rows of a calendar or an outlook): the result of
  something planned is not in the documents; nor is a question what was done on
  a day ("What did the board decide at its meeting on 19 March?") answered when
  the units naming that day closest to it only announce it ("Next meeting:
  Thursday 2026-03-19") and report nothing done;
- the question is not an everyday one ("how do I book a meeting room", "second
  monitor for my desk") that none of the hits speaks to: more like a list of
  everyday questions than like any passage found, by the embedding model
  (``portal.answers.everyday``). Word statistics cannot tell the desk's monitor
  from SM13's; the model reads the topic.

The thresholds were
calibrated on the tuning half of the demo question set; the distributions are
in docs/retrieval-quality.md.

**The passages issued.** When there is evidence, the first ``REFERENCES_PER_RUN``
hits (in ranking order) that carry some of the question's weight; when there
is none, no passage at all.
"""

from __future__ import annotations

import functools
import math
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from portal.answers import asked as asked_values
from portal.answers import outcome, question_type, shaped, written
from portal.answers.units import passage_units
from portal.search.analysis import (
    PRODUCT_ACRONYMS,
    PRODUCT_NAME,
    STOPWORDS,
    UNTIL_AS_TYPED,
    as_read,
    return_codes_written_out,
)

REFERENCES_PER_RUN = 8
# Hits read before the ones carrying none of the question's weight are dropped, so up to 8 remain.
CANDIDATES_PER_RUN = 2 * REFERENCES_PER_RUN

# Calibrated on the tuning half (docs/retrieval-quality.md, "The evidence check").
# The best MAX_JOINED passages together must cover this share of the question's weight ...
MIN_JOINED_COVERAGE = 0.15
MAX_JOINED = 3
# ... unless a passage found is at least this like the question (cosine, by the embedding model): the answerable
# questions refused by coverage alone came to 0.46-0.61 on the tuning sets, the unanswerable ones to 0.20 at most
# (docs/retrieval-quality.md, "Words users bring, values as they ask for them, and each month asked").
LIKE_A_PASSAGE = 0.45
# A question most of whose weight (this share) no passage found holds is answered only when a passage found is more
# like it than ``UNLIKE_A_PASSAGE`` (cosine): the off-topic questions the words let through came to 0.13-0.20 on the
# tuning sets, the answerable ones so uncovered to 0.24 at least.
MOSTLY_UNCOVERED = 0.55
UNLIKE_A_PASSAGE = 0.2
# A passage covering at least this share of the weight of a question of at least ``WORDS_TO_HOLD`` weighted terms
# speaks to it: the question is not an everyday one (``answers.everyday``), however like one it reads to the
# embedding model. The everyday questions the tuning sets and an opened held-out set refused came to 0.69 at most;
# a question of two or three words ("print double sided") is held whole by a passage on something else too often.
HOLDS_THE_QUESTION = 0.9
WORDS_TO_HOLD = 4
# ... and for each identifier the question names, a passage naming it must cover this share.
MIN_ANCHORED_COVERAGE = 0.3
# The units closest to a question cover at least this share of the best unit's weight of its terms: a question
# about a past outcome is answered when one of them states something other than a plan, one about a name (TW20)
# when one of them names it rather than only a sibling (TW10).
CLOSEST_UNITS = 0.9
# The most names of a question read for siblings.
MAX_SIBLING_NAMES = 4

Tokenizer = Callable[[str], list[str]]
# For each hit, which of the given days (month, day) its document names anywhere (``ask.retrieve`` reads them).
DaysInDocuments = Callable[[set[tuple[int, int]]], list[set[tuple[int, int]]]]
# ... and which of the given months (``written.MONTHS`` names) its document is dated in.
MonthsInDocuments = Callable[[set[str]], list[set[str]]]
# Whether the question is an everyday one none of the hits speaks to (``answers.everyday``, by the embedding model).
Everyday = Callable[[Sequence["Searched"]], bool]
# Each hit's cosine to the question (``answers.everyday.Likeness``), None without the model.
LikePassage = Callable[[Sequence["Searched"]], list[float] | None]


class Searched(Protocol):
    """A search hit as the evidence check reads it (``portal.search.hits.SearchHit``)."""

    text: str
    document_title: str
    heading_path: str


def is_identifier(token: str) -> bool:
    """Whether a question's token names one thing: it mixes letters and digits (INC-2026-0266,
    VL02N, TW30, P4), joins words with ``_`` (ZTW_EDI), is a number of two or more digits
    (IDoc status 51, message 017), or is an upper-case code of four or more letters (PFCG).
    Three-letter upper-case words (KBP, ERP) are identifiers only where the packs use them:
    see ``choose``."""
    letters = any(c.isalpha() for c in token)
    digits = sum(c.isdigit() for c in token)
    if _ORDINAL.fullmatch(token):
        return False  # "the 2nd", "21st": a day or a rank, no name of a thing
    if _MAGNITUDE.fullmatch(token):
        return False  # "20k IDocs", "5GB", "30min": a quantity as people type it, no name of a thing
    if "_" in token or (letters and digits):
        return True
    if not letters:
        return digits >= 2
    return len(token) >= 4 and token.isupper() and token.isalpha()


_LOCATIVE = re.compile(r"\b(?:in|into|inside|within|to|from|at|out\s+of)\s+(?:the\s+)?$", re.IGNORECASE)
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)", re.IGNORECASE)
_MAGNITUDE = re.compile(
    r"\d+(?:[.,]\d+)?(?:k|m|bn|[kmgt]b|ms|s|h|hrs?|mins?|d|x"
    r"|-(?:seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|percent))",  # "the 3-day target"
    re.IGNORECASE,
)
# An identifier in the plural, as people write it: "P3s", "KBPs" (the identifier ends in a digit or a capital).
_PLURAL = re.compile(r"(.*[0-9A-Z])['’]?s")


def _tokens(question: str) -> list[tuple[str, int, int]]:
    """The question's tokens with where each starts and ends; a range or a pair of two names of one shape
    ("P1-P3", "TW10-TW30", "MCEX11/MCEX13", "MCEX11/13") as the two names: the documents write "P1 to P3",
    "MCEX11 and MCEX13"."""
    tokens = []
    for match in written.IDENTIFIER_TOKEN.finditer(question):
        start, end = match.span()
        low, dash, high = match.group().partition("/" if "/" in match.group() else "-")
        high = _singular(high)  # "the P1-P3s"
        if high.isdigit() and _RANGE_END.fullmatch(low) and len(high) == len(low) - len(low.rstrip(_DIGITS)):
            high = low.rstrip(_DIGITS) + high  # "MCEX11/13": the second name's letters are the first's
        if dash and (
            (_RANGE_END.fullmatch(low) and _RANGE_END.fullmatch(high) and low.rstrip(_DIGITS) == high.rstrip(_DIGITS))
            or (dash == "/" and is_identifier(low) and _shape(low) == _shape(high))  # "K4P/K4Q"
            or (written.is_system_name(low) and written.is_system_name(high))  # "the KXQ-K4Q connection"
        ):
            tokens += [(low, start, start + len(low)), (high, start + len(low) + 1, end)]
        else:
            tokens.append((match.group(), start, end))
    return tokens


_RANGE_END = re.compile(r"[A-Za-z]{1,4}\d{1,3}")
_DIGITS = string.digits


def _shape(token: str) -> str:
    """A token's shape: its letters as ``A`` and its digits as ``9`` (K4P and K4Q: ``A9A``)."""
    return re.sub(r"[^\W\d_]", "A", re.sub(r"\d", "9", token))


def _singular(token: str) -> str:
    plural = _PLURAL.fullmatch(token)
    return plural.group(1) if plural and (is_identifier(plural.group(1)) or _is_acronym(plural.group(1))) else token


def _is_acronym(token: str) -> bool:
    return len(token) == 3 and token.isupper() and token.isalpha()


def _is_proper_noun(token: str, at_start: bool) -> bool:
    """A capitalised word inside a sentence (Poland, Reykjavik): it names a place, a company, a thing."""
    return (
        not at_start
        and len(token) > 2
        and token[0].isupper()
        and token[1:].islower()
        and token.isalpha()
        and token.casefold() not in STOPWORDS
        and token.casefold() not in UNTIL_AS_TYPED  # "How long Till release R26.04 goes live?"
        and token.casefold() not in written.CALENDAR_NAMES
    )


def _proper_noun_matches(question: str) -> list[re.Match]:
    """The capitalised words of ``question`` that do not start one of its sentences."""
    return [
        m
        for m in written.IDENTIFIER_TOKEN.finditer(question)
        if _is_proper_noun(
            m.group(), not question[: m.start()].strip() or question[: m.start()].rstrip()[-1] in ".?!:;\"'“‘("
        )
    ]


def _proper_nouns(question: str) -> list[str]:
    return [m.group() for m in _proper_noun_matches(question)]


def proper_names(question: str) -> list[str]:
    """Names of two or more capitalised words inside a sentence ("Solution Manager", "Service Desk"): each
    word may be in the packs while the name is not."""
    names_: list[list[re.Match]] = []
    for match in _proper_noun_matches(question):
        if names_ and not question[names_[-1][-1].end() : match.start()].strip(" "):
            names_[-1].append(match)
        else:
            names_.append([match])
    return [" ".join(m.group() for m in name) for name in names_ if len(name) > 1]


def identifier_runs(question: str, known: Callable[[str], bool] = lambda token: False) -> list[list[str]]:
    """The identifiers ``question`` names, adjacent ones joined into one run (``ZTW_EDI 017``,
    ``FS-SD-030 REQ-09``): a run names one thing, so its parts must occur in one passage.
    ``known(token)`` says whether the searched packs contain a three-letter acronym."""
    # "the production S/4 system" names K4P, which is asked; "rc8" is return code 8, which a passage writes
    question = as_read(question)
    runs: list[list[str]] = []
    previous_end = -1
    dates = written.day_spans(question)
    for token, start, end in _tokens(question):
        in_date = any(low <= start < high for low, high in dates)  # "12 March", "7am": no number
        token = _singular(token)
        if PRODUCT_NAME.fullmatch(token):  # "the S/4HANA production system" is the kind of system, not one of them
            previous_end = -1
            continue
        where = _is_acronym(token) and _LOCATIVE.search(question[:start]) is not None
        if in_date or where or not (is_identifier(token) or (_is_acronym(token) and known(token))):
            previous_end = -1
            continue
        gap = question[previous_end:start] if previous_end >= 0 else None
        if runs and gap is not None and not gap.strip():
            if token.casefold() not in (t.casefold() for t in runs[-1]):
                runs[-1].append(token)
        elif not any(token.casefold() == t.casefold() for run in runs for t in run):
            runs.append([token])
        previous_end = end
    return runs


# A noun that numbers things, and the number after it: "return code 16", "IDoc status 51", "message 017", "sold-to
# party 200719". Not any word before a number: "reached 92 percent" is answered by "at 92 percent". After the nouns
# marked True, one digit names a thing too ("packing line 5", "return code 8", "IDoc status 3"); not after the others,
# whose things a list numbers without the noun ("step 2" is a numbered list's second item).
_NUMBERING_NOUNS = {
    "codes?": True,
    "status(?:es)?": True,
    "messages?": True,
    "errors?": True,
    "clients?": True,
    "ports?": True,
    "lines?": True,
    "plants?": True,
    "tickets?": True,
    "notes?": False,
    "steps?": False,
    "levels?": False,
    "types?": False,
    "rules?": False,
    "items?": False,
    "part(?:y|ies)": False,
    "partners?": False,
    "customers?": False,
    "vendors?": False,
    "suppliers?": False,
    "orders?": False,
    "accounts?": False,
    "documents?": False,
    "invoices?": False,
    "deliver(?:y|ies)": False,
    "materials?": False,
    "requests?": False,
}
_NUMBERED = re.compile(r"\b(" + "|".join(_NUMBERING_NOUNS) + r")\s+(\d{2,})\b", re.IGNORECASE)
# ... unless a unit follows the digit: "a ticket 2 hours ago", "an error 3 times in a row" count, name nothing
_NUMBERED_ONE = re.compile(
    r"\b(" + "|".join(noun for noun, one in _NUMBERING_NOUNS.items() if one) + r")\s+(\d)\b(?![.,]\d)"
    r"(?!\s*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|d|weeks?|wks?|months?|mos?|years?|yrs?|times?|x|"
    r"percent|%|am|pm)\b)",
    re.IGNORECASE,
)
# ... and where a passage names a range of them ("lines 1-4")
_NUMBERED_RANGE = re.compile(r"([A-Za-z]+)\W{1,3}(\d+)\s*(?:-|–|to)\s*(\d+)(?![\w.,]*\d)", re.IGNORECASE)
_DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def numbers_named_by_noun(question: str) -> dict[str, str]:
    """The bare numbers of ``question`` that a noun before them says what they number, each with its noun."""
    return {m.group(2): m.group(1) for pattern in (_NUMBERED, _NUMBERED_ONE) for m in pattern.finditer(question)}


def numbers_named_alone(question: str) -> list[list[str]]:
    """The one-digit numbers a noun names (``_NUMBERED_ONE``), as runs: no identifier by their shape, they must be
    in the evidence as one is ("packing line 5" is not answered by lines 1 to 4)."""
    return [[m.group(2)] for m in _NUMBERED_ONE.finditer(question)]


def names_numbered(hit: Searched, noun: str, number: str) -> bool:
    """Whether ``hit`` names ``number`` as the question does, after its noun: "return code 16" is not answered
    by a passage of 16 March, nor "status 51" by "51 minutes". A table row is read as ``Header: value``, so a
    column "Return code" names the 16 of its row. A number is also named with leading zeros ("status 03" for
    "status 3"), after "No." or "#", in a range ("lines 1-4" names line 3) and, of one digit, in a word ("line
    three")."""
    texts = [searched_text(hit)] + [unit.text for unit in passage_units(hit.text) if unit.kind == "row"]
    return numbered_in(texts, noun, number) or _defines_values(hit.text, noun, _written_as(number))


def _written_as(number: str) -> str:
    value = int(number)
    return rf"0*{value}" + (rf"|{_DIGIT_WORDS[value]}" if value < len(_DIGIT_WORDS) else "")


def numbered_in(texts: Sequence[str], noun: str, number: str) -> bool:
    """Whether one of ``texts`` (a passage, or a unit: a row reads ``Header: value``) writes ``number`` after
    ``noun``, or in a range after it (``names_numbered``)."""
    value = int(number)
    before = re.compile(
        rf"([A-Za-z]+)\W{{1,3}}(?:(?:no|nr)\.?\s*|#\s*)?(?:{_written_as(number)})(?![\w.,:-]*\d)(?!\w)", re.IGNORECASE
    )
    # a passage may write a return code as people type it ("RC 12", "rc12"), as the question was read
    texts = [return_codes_written_out(text) for text in texts]
    return any(_one_noun(m.group(1), noun) for text in texts for m in before.finditer(text)) or any(
        _one_noun(m.group(1), noun) and int(m.group(2)) <= value <= int(m.group(3))
        for text in texts
        for m in _NUMBERED_RANGE.finditer(text)
    )


# A number after a word ("return code 8", "status: 51"), as ``numbered_in`` reads one.
_NUMBER_AFTER = re.compile(r"([A-Za-z]+)\W{1,3}(?:(?:no|nr)\.?\s*|#\s*)?(\d+)(?![\w.,:-]*\d)(?!\w)", re.IGNORECASE)


def numbers_another(text: str, noun: str, number: str) -> bool:
    """Whether ``text`` writes a number other than ``number`` after ``noun`` and not ``number`` itself anywhere:
    "return code 8" is about another return code than the 16 asked, "return codes 12 and 16" is not."""
    text = return_codes_written_out(text)
    if re.search(rf"(?<![\w.,:]){int(number)}(?![\w]|[.,:]\d)", text):
        return False
    return any(_one_noun(m.group(1), noun) and int(m.group(2)) != int(number) for m in _NUMBER_AFTER.finditer(text))


# A line defining a noun ("**IDoc status**: a two-digit code. … Inbound: 64 ready, 51 not posted …", as a glossary
# writes its entries): its label, up to the first colon.
_DEFINED = re.compile(r"^\W*([A-Za-z][\w /-]{0,60}?)\W*:", re.MULTILINE)


def _defines_values(text: str, noun: str, written_as: str) -> bool:
    """Whether a line of ``text`` defines ``noun`` (its label ends with it) and lists the number among its values:
    the glossary's "IDoc status" entry names status 51 without writing "status 51". A value of the list opens an
    item (after the label, a colon, a comma or a semicolon) and is told by a word: "51 not posted", not "retried 51
    times", "page 51" or "; 51 orders failed" (a count of something)."""
    number = re.compile(rf"(?:^|[:,;])\s*(?:{written_as})\s+(?![a-z]*s\b)[a-z]")
    for line in text.splitlines():
        label = _DEFINED.match(line)
        if label and _one_noun(label.group(1).split()[-1], noun) and number.search(line[label.end() - 1 :]):
            return True
    return False


def _names_run(hit: Searched, text: str, run: list[str], numbered: dict[str, str], counts: set[str]) -> bool:
    """Whether ``hit`` (its searched ``text``) names a run of the question's identifiers: a number a noun names
    alone, after that noun ("status 3" as "status 03"); otherwise each token as written, a count as counted."""
    if len(run) == 1 and run[0] in numbered:
        return names_numbered(hit, numbered[run[0]], run[0])
    return all(
        names(text, token)
        or (token in counts and names_count(text, token))
        or (token in numbered and names_numbered(hit, numbered[token], token))
        for token in run
    )


def _one_noun(word: str, noun: str) -> bool:
    """Whether two nouns are one in the singular or the plural (status, statuses; party, parties)."""

    def singular(w: str) -> str:
        w = w.casefold()
        if w.endswith("ies"):
            return w[:-3] + "y"
        if w.endswith(("ses", "xes")):
            return w[:-2]
        return w[:-1] if w.endswith("s") and not w.endswith(("ss", "us")) else w

    return singular(word) == singular(noun)


def days_asked(question: str) -> dict[tuple[int, int], str]:
    """The days the asking sentences of ``question`` name (``asking_part``), each as the question writes it."""
    return written.days(asking_part(question)[0], short_form=False)


def asking_part(question: str) -> tuple[str, str]:
    """``(asked, told)``: the sentences of ``question`` ending with ``?``, and the others. A user who
    tells the situation first ("Our label printers at TW30 flood the spool. The cleanup job RSPO1041 has
    not run. How do I fix a full spool number range?") names where it happens, not what is asked: the
    identifiers that must be in the evidence are the asking sentences'. A question without a sentence
    ending in ``?`` is asked whole."""
    sentences = _sentences(question)
    asked = [sentence for sentence in sentences if sentence.endswith(_QUESTION_MARKS)]
    if not asked or len(sentences) == 1:
        return question, ""
    if all(word.casefold() in _BACK_REFERENCE for sentence in asked for word in _WORD.findall(sentence)):
        # "… wants to know the resolution target in hours for a P4 incident. What is it?" asks what was told
        return question, ""
    return " ".join(asked), " ".join(sentence for sentence in sentences if not sentence.endswith(_QUESTION_MARKS))


_QUESTION_MARKS = written.QUESTION_MARKS
# An asking sentence of only these words ("What is it?", "Which one?") asks about what the sentences before it told.
_BACK_REFERENCE = STOPWORDS | {"one", "ones"}


def _sentences(text: str) -> list[str]:
    """``text`` cut after ``.``, ``!`` or a question mark where white space follows (not inside R26.04)."""
    return [part.strip() for part in re.split(r"(?<=[.!?\uff1f\u061f])\s+", text) if part.strip()]


def identifiers(question: str) -> list[str]:
    """The identifiers ``question`` names, in order, each once."""
    return [token for run in identifier_runs(question) for token in run]


def names(text: str, identifier: str) -> bool:
    """Whether ``identifier`` occurs in ``text`` verbatim (case aside) as a whole token. A field
    named as ``TABLE-FIELD`` (ZTW_CRED_LOG-EXPOSURE) may also be named by its table and field apart."""
    if _occurs(text, identifier):
        return True
    field_of = _TABLE_FIELD.match(identifier)
    return field_of is not None and _occurs(text, field_of.group(1)) and _occurs(text, field_of.group(2))


_TABLE_FIELD = re.compile(r"^([A-Za-z0-9]+_[A-Za-z0-9_]+)-([A-Za-z0-9_]+)$")


def names_count(text: str, number: str) -> bool:
    """Whether ``text`` writes ``number`` as documents group a count of thousands: "3000 docs" is "3,000 billing
    documents" (or 3.000, 3 000). Only for a count the question gives (``counted_numbers``): "sold-to 200452" is a
    name, which "a credit limit of 200,452 EUR" does not write."""
    grouped = f"{int(number):,}"
    return any(_occurs(text, grouped.replace(",", mark)) for mark in (",", ".", " ", "\u202f", "\u00a0"))


# A number of four to seven digits that counts or measures what follows it: a word in the plural ("for 3000 docs",
# "20000 inbound IDocs", "1000000 records"), a currency ("above 50000 EUR") or a rate ("12000 per hour").
_COUNTED = re.compile(
    r"(?<![\w.,-])([1-9]\d{3,6})\s+(?:(?:EUR|USD|GBP|CHF|euros?|dollars?)\b|per\b|"
    r"(?:[A-Za-z-]+\s+){0,2}?(?!(?:as|is|has|was|does|this|thus|plus|less|unless|across|pass)\b)[A-Za-z]{2,}s\b)"
)


def counted_numbers(question: str) -> set[str]:
    """The numbers ``question`` gives as counts or amounts (``_COUNTED``), not those a noun before them says it
    names ("sold-to 200452", "order 4711": ``numbers_named_by_noun``)."""
    named = set(numbers_named_by_noun(question)) | {m.group(1) for m in _NAMED_NUMBER.finditer(question)}
    return {match.group(1) for match in _COUNTED.finditer(question)} - named


# A number after a noun naming one thing by it, beyond ``_NUMBERED``'s: "sold-to 200452", "cost center 4100".
_NAMED_NUMBER = re.compile(
    r"\b(?:sold-to|ship-to|payer|vendor|center|centre|id|no\.?|number|#)\s*([1-9]\d{3,6})\b", re.I
)


_MESSAGE_TYPE_LETTERS = 5  # ORDERS, INVOIC, DESADV, LOIPRO; not a system id (K4P) or an acronym (SAP, BW)


def _occurs(text: str, token: str) -> bool:
    # A name ending in a digit may be the start of a longer one in letters: "S/4" is written "S/4HANA". A message
    # type in capitals is named by its basic type, the same name and a two-digit version: "INVOIC" by "INVOIC02"
    # (an incident digest names only the basic type).
    if token[-1:].isdigit():
        tail = r"[A-Za-z]*"
    elif len(token) >= _MESSAGE_TYPE_LETTERS and token.isalpha() and token.isupper():
        tail = r"(?:\d\d)?"
    else:
        tail = ""
    pattern = rf"(?<![A-Za-z0-9]){re.escape(token)}{tail}(?![A-Za-z0-9])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def idf(passages: int, doc_freq: int) -> float:
    """BM25's idf (as Lucene computes it); a term in no passage gets the largest value there is."""
    return math.log(1 + (passages - doc_freq + 0.5) / (doc_freq + 0.5))


def term_weights(terms: Sequence[str], passages: int, doc_freqs: dict[str, int]) -> dict[str, float]:
    """Each distinct question term's weight: its idf in the searched packs."""
    return {term: idf(passages, doc_freqs.get(term, 0)) for term in dict.fromkeys(terms)}


def with_synonyms(terms: set[str], synonyms: dict[str, frozenset[str]] | None) -> set[str]:
    """A text's ``terms`` and the user's words a document word of them stands for ("sticker" where it says
    "label"; ``synonyms`` from the packs' vocabulary)."""
    if not synonyms:
        return terms
    return terms | {term for term, targets in synonyms.items() if not targets.isdisjoint(terms)}


def searched_text(hit: Searched) -> str:
    """What the index matched for a passage: title, heading path and text."""
    return "\n".join(part for part in (hit.document_title, hit.heading_path, hit.text) if part)


@dataclass
class Choice:
    """The evidence verdict and the hits issued (indexes into the hits given), best first."""

    evidence: bool
    issued: list[int] = field(default_factory=list)
    coverage: float = 0.0  # the best single passage's share of the question's weight
    joined_coverage: float = 0.0  # the best few passages' together
    anchored_coverage: float = 1.0  # for a question naming identifiers: the weakest run's best passage's share
    missing_identifiers: list[str] = field(default_factory=list)
    unknown_names: list[str] = field(default_factory=list)  # proper nouns the packs never mention
    missing_values: list[str] = field(default_factory=list)  # kinds of value asked for that no passage holds
    unanswered_value: str = ""  # the count, named value, identifier kind or "time" asked that no unit gives
    unanswered_for: list[str] = field(default_factory=list)  # ... for what the question names ("hours" for P4)
    unreported: bool = False  # asked how something went; the closest units only say what was to happen
    sibling: tuple[str, str] | None = None  # (a name asked, the sibling the closest units name instead): TW20, TW10
    everyday: bool = False  # an everyday question ("book a meeting room") no passage found speaks to
    uncovered: list[str] = field(default_factory=list)  # question terms no candidate contains
    absent_words: list[str] = field(default_factory=list)  # the question's words no searched passage contains
    weights: dict[str, float] = field(default_factory=dict)
    # for a question term, the document terms the packs' vocabulary gives for it that the packs hold
    synonyms: dict[str, frozenset[str]] = field(default_factory=dict)

    def gap(self) -> dict:
        """What the "no evidence" note tells the user besides the words no passage holds (``absent_words``, shown
        apart): a name no passage found names, a sibling the closest passages are about instead, a value none
        gives, an outcome none reports. Empty with evidence, or when none of these is why (``Run.evidence_gap``)."""
        if self.evidence:
            return {}
        absent = {word.casefold() for word in self.absent_words}
        # a name of several parts ("ZTW_EDI 017") is said already when one of its parts is among the absent words
        unnamed = [
            name
            for name in self.missing_identifiers
            if name.casefold() not in absent and not absent & set(name.casefold().split())
        ]
        if unnamed:
            return {"kind": "not_named", "names": unnamed}
        if self.sibling:
            return {"kind": "sibling", "asked": self.sibling[0], "found": self.sibling[1]}
        if self.missing_values:
            return {"kind": "no_value", "value": self.missing_values[0]}
        if self.unanswered_value == "time":
            return {"kind": "no_time", "of": self.unanswered_for}
        if self.unanswered_value:
            return {"kind": "no_value", "value": self.unanswered_value, "of": self.unanswered_for}
        if self.unreported:
            return {"kind": "unreported"}
        return {}


def choose(
    question: str,
    terms: Sequence[str],
    passages: int,
    doc_freqs: dict[str, int],
    hits: Sequence[Searched],
    tokenize: Tokenizer,
    limit: int = REFERENCES_PER_RUN,
    days_in_documents: DaysInDocuments | None = None,
    everyday: Everyday | None = None,
    months_in_documents: MonthsInDocuments | None = None,
    like_passage: LikePassage | None = None,
    synonyms: dict[str, frozenset[str]] | None = None,
) -> Choice:
    """The evidence check and the passages issued for ``question`` (see the module's docstring).

    ``terms`` are the question's analyzed terms (``analysis.question_terms``);
    ``passages`` and ``doc_freqs`` the searched packs' statistics for them;
    ``days_in_documents`` says, for each hit in the order of ``hits``, which of some days its document names in
    its other passages, ``months_in_documents`` which of some months it is dated in;
    ``everyday`` whether the question is an everyday one that none of the hits speaks to, ``like_passage`` how
    like it each hit is (the embedding model's cosine);
    ``tokenize`` turns a passage into the same kind of terms;
    ``synonyms``: for a question term, the document terms the packs' vocabulary gives for it (a passage holding
    one covers the term); ``doc_freqs`` holds their statistics too.
    """
    # the word after "how" is the question's form ("how long should the job take?" asks a duration, which the value
    # check reads), not what it is about: a passage about the job need not say "long"
    form = _form_terms(question, tokenize)
    weights = {t: w for t, w in term_weights(terms, passages, doc_freqs).items() if t not in form}
    total = math.fsum(weights.values())
    # an entry of the vocabulary stands for a user's word only where the searched packs hold its document words
    synonyms = {term: targets for term, targets in (synonyms or {}).items() if any(doc_freqs.get(t) for t in targets)}

    def in_packs(token: str) -> bool:
        return any(doc_freqs.get(t, 0) for t in tokenize(token))

    # a user's word the packs' vocabulary gives document words for is not absent: "sticker" is read as "label"
    absent = absent_words(question, weights.keys() - synonyms.keys(), doc_freqs, tokenize) if passages else []
    asking, told = asking_part(question)
    runs = identifier_runs(asking, known=in_packs)
    folded = {token.casefold() for run in runs for token in run}
    context = [run for run in identifier_runs(told, known=in_packs) if run[0].casefold() not in folded]
    unknown = [token for token in _proper_nouns(question) if not in_packs(token)]
    if not total or not hits:
        return Choice(
            False,
            weights=weights,
            synonyms=synonyms,
            uncovered=list(weights),
            unknown_names=unknown,
            missing_identifiers=[" ".join(r) for r in runs or context],
            absent_words=absent,
        )
    texts = [searched_text(hit) for hit in hits]
    several_words = proper_names(question)
    if several_words:  # seldom: the passages are folded for it only then
        folded = " ".join(" ".join(text.split()) for text in texts).casefold()
        unknown += [name for name in several_words if name.casefold() not in folded]
    _prefetch(tokenize, texts)
    covered = [with_synonyms(set(tokenize(text)), synonyms) & weights.keys() for text in texts]
    # fsum: the same share whatever order a set gives its terms in (sums of floats depend on it)
    shares = [math.fsum(weights[t] for t in c) / total for c in covered]
    joined = _joined_share(covered, weights, total)
    anchored = 1.0
    missing = []
    numbered = numbers_named_by_noun(as_read(asking))
    runs += [run for run in numbers_named_alone(as_read(asking)) if run not in runs]
    alone = _alone_of_their_kind(runs, texts, question)
    counts = counted_numbers(asking)
    for run in (run for run in runs if run not in alone):
        part_shares = _shares_of_part(_part_naming(asking, run), covered, weights, tokenize) or shares
        holding = [
            share for hit, text, share in zip(hits, texts, part_shares) if _names_run(hit, text, run, numbered, counts)
        ]
        if not holding:
            missing.append(" ".join(run))
        anchored = min(anchored, max(holding, default=0.0))
    # A day names an event as an identifier names a thing, in whatever way a passage writes it ("12 March",
    # "2026-03-12", "03-12" in a table): "the change board on 16 April" is not answered by the minutes of 5 March.
    asked_days = days_asked(question)
    named_days = {day for text in texts for day in written.days(text)}
    unnamed = asked_days.keys() - named_days
    # for each hit, which of the days asked its document names: read once, when a check needs it
    document_days = functools.cache(
        lambda: days_in_documents(set(asked_days)) if days_in_documents is not None else [set() for _ in hits]
    )
    if unnamed:
        unnamed -= set().union(*document_days())  # an incident's date is in its header, not its summary
    # a range ("24-25 February") is named by one of its days
    unnamed = {
        day for day in unnamed if all(asked_days[other] != asked_days[day] for other in asked_days.keys() - unnamed)
    }
    missing.extend(dict.fromkeys(asked_days[day] for day in sorted(unnamed)))
    # A quarter names a period as a day does: "When is the K4P downtime planned in the third quarter?" is not
    # answered by the second quarter's calendar (found by a browser walkthrough).
    asked_quarters = written.quarters(as_read(asking))
    if asked_quarters:  # the passages are read for quarters only then
        named_quarters = {quarter for text in texts for quarter in written.quarters(text)}
        missing.extend(asked_quarters[q] for q in sorted(asked_quarters.keys() - named_quarters))
    # what the user told may name the product as people do ("flooded SAP with print jobs"): a three-letter name the
    # packs write, of which the passages found name no sibling, need not be in the evidence
    context = [run for run in context if run not in _alone_of_their_kind(context, texts, told, in_packs)]
    if context and not runs and not any(all(names(text, t) for t in run) for text in texts for run in context):
        # Named only in what the user told: one of them must be in the evidence, not each, and the
        # passage naming it need not be about the whole question (the asking sentence is).
        missing.append(" ".join(context[0]))
    missing_values = []
    for kind, (asked, holds) in shaped.SHAPED_VALUES.items():
        if asked.search(question):
            holding = [share for text, share in zip(texts, shares) if holds(text, question)]
            if not holding:
                missing_values.append(kind)
            anchored = min(anchored, max(holding, default=0.0))
    uncovered = [t for t in weights if not any(t in c for c in covered)]
    best = max(shares)
    evidence = not missing and not missing_values and not unknown and anchored >= MIN_ANCHORED_COVERAGE
    if evidence and joined < MIN_JOINED_COVERAGE:
        # the packs lack most of the question's words, yet a passage that would be issued (it carries some of the
        # weight) reads like it: in a pack of one document every passage says "runbook", so "Is there a maximum
        # length a runbook should stay under?" weighs only words the packs never use
        likeness = like_passage(hits) if like_passage is not None and joined > 0 else None
        evidence = likeness is not None and any(
            like >= LIKE_A_PASSAGE and share > 0 for like, share in zip(likeness, shares, strict=True)
        )
    # after the lexical checks, which refuse without embedding anything; every question they let through is embedded,
    # but one a passage holds nearly all of is about that passage, however like an everyday question it reads: a
    # pack's note on "the K4P coffee machine" answers "What is the restart code of the coffee machine?"
    held_whole = best >= HOLDS_THE_QUESTION and len(weights) >= WORDS_TO_HOLD
    is_everyday = bool(evidence and not held_whole and everyday is not None and everyday(hits))
    evidence = evidence and not is_everyday
    if (
        evidence
        and like_passage is not None
        and math.fsum(weights[t] for t in uncovered) >= MOSTLY_UNCOVERED * total
        and not _found_only_through_vocabulary(covered, texts, weights, synonyms, tokenize)
    ):
        # most of the question is words no passage found holds, and no passage reads like it: "pallet jack broken -
        # who do i call" shares only "pallet" and "call" with a warehouse runbook
        likeness = like_passage(hits)
        evidence = likeness is None or max(likeness, default=0.0) > UNLIKE_A_PASSAGE
    issued = [i for i, share in enumerate(shares) if share > 0][:limit] if evidence else []
    unanswered, unanswered_for, unreported = "", [], False
    sibling: tuple[str, str] | None = None
    value = asked_values.asked_value(question) or _time_asked(question)
    # "which change number …": known once the units show how the packs write a change's identifier; the part of the
    # question asking it is what the value check reads
    kind_asked, value_question = asked_values.identifier_kind_asked(question) if value is None else ("", question)
    past_outcome = outcome.asks_past_outcome(question)
    # "What did the board decide at its meeting on 19 March?" asks what was done on a day
    done_on_a_day = bool(asked_days) and outcome.asks_what_was_done(question)
    # the noun asked for ("the MTTR for P4") says what the value is, not what it is about; a three-letter name alone
    # of its kind (the product, "the SAP support team") names no one thing among others: the value asked for need
    # not stand beside it
    subjects = [
        run
        for run in runs
        if run not in alone
        and not (len(run) == 1 and _YEAR.fullmatch(run[0]))
        and (value is None or " ".join(run).casefold() != value.phrase.casefold())
    ]
    # a system's three-character name says where, beside a name of one thing ("how many days of job logs does
    # SAP_REORG_JOBS keep on K4P?"): the value stands beside the thing, wherever the system is named
    # the names that part writes, when it writes any ("…, and who approved each of them?" names none)
    subjects = [run for run in subjects if all(names(value_question, token) for token in run)] or subjects
    specific = [run for run in subjects if not written.is_system_name(" ".join(run))] or subjects
    # the first few names a question asks about (a question listing hundreds reads each unit for each name)
    kin_asked = [run[0] for run in runs if len(run) == 1 and _is_name(run[0])][:MAX_SIBLING_NAMES]
    if issued and (value is not None or past_outcome or kin_asked or kind_asked or done_on_a_day):
        # a value asked for a month may stand in any passage of a document dated in it (by an incident's header)
        asked_months = set(asked_values.months_asked(question)) if value is not None else set()
        months_named = months_in_documents(asked_months) if months_in_documents and asked_months else None
        of_hit = [
            (
                i,
                asked_values.Unit(
                    unit.text,
                    " ".join((hits[i].document_title or "", hits[i].heading_path or "", unit.heading, unit.lead_in)),
                    texts[i],
                    frozenset(months_named[i]) if months_named else frozenset(),
                    unit.labels,
                ),
            )
            for i in issued
            for unit in passage_units(hits[i].text)
        ]
        units = [unit for _, unit in of_hit]
        if kind_asked:  # an INC-2026-0291 beside the certificate asked about gives no change number
            shapes = asked_values.identifier_shapes(kind_asked, texts)  # as the passages found write one
            if shapes:
                value = asked_values.AskedValue("identifier", kind_asked, shapes=shapes)
        _prefetch(tokenize, [f"{u.context} {u.text}" for u in units])  # read in one call, as the passages were
        closest = _closest(units, weights, tokenize)
        sibling = _sibling_asked(question, kin_asked, units, closest, weights, tokenize)
        if sibling is not None:
            evidence, issued = False, []
        elif value is not None and not asked_values.answered(
            value_question,
            value,
            _on_the_days(asked_days, of_hit, texts, document_days),
            tokenize,
            lambda term: doc_freqs.get(term, 0) > 0,
            about=lambda text: not subjects or any(all(names(text, token) for token in run) for run in specific),
        ):
            unanswered, evidence, issued = value.phrase, False, []
            unanswered_for = [" ".join(run) for run in subjects]
        elif done_on_a_day and _only_announced_on(asked_days, units, weights, tokenize):
            unreported, evidence, issued = True, False, []
        elif past_outcome and (
            _nothing_but_plans(question, closest)
            or _nothing_but_plans(
                question, _closest_on_the_days(asked_days, of_hit, texts, document_days, weights, tokenize)
            )
        ):
            unreported, evidence, issued = True, False, []
    return Choice(
        evidence,
        issued,
        coverage=round(best, 4),
        joined_coverage=round(joined, 4),
        anchored_coverage=round(anchored, 4),
        missing_identifiers=missing,
        unknown_names=unknown,
        missing_values=missing_values,
        unanswered_value=unanswered,
        unanswered_for=unanswered_for,
        unreported=unreported,
        sibling=sibling,
        everyday=is_everyday,
        uncovered=uncovered,
        weights=weights,
        synonyms=synonyms,
        absent_words=absent,
    )


_AFTER_HOW = re.compile(r"\bhow\s+$", re.IGNORECASE)
# The words after "how" that only say what kind of value is asked: "how long" names nothing a passage writes ("the
# import took 40 minutes"), unlike "how full", "how late" ("the spool number range was full").
_FORM_ONLY = frozenset({"long", "often", "frequently", "soon", "quickly"})
# All the words that make "how" ask for a degree: "how big", "how far" (not "how Kerberos works").
_DEGREE = _FORM_ONLY | frozenset("big large small full far many much old fast high low late early".split())
# A word as the user wrote it, an identifier whole (INC-2026-0427, rdisp/rfc_max_own_used_wp, Straße).
_WORD = re.compile(r"\w+(?:[\-/.]\w+)*")
# "a lot of IDocs", "lots of dumps": how much, as people say it, not a lot (of goods) a passage is about.
_A_LOT_OF = re.compile(r"\b(?:a\s+(?:whole\s+)?lot|lots)(?=\s+of\b)", re.IGNORECASE)


def _form_spans(question: str) -> list[tuple[int, int]]:
    """Where ``question`` only says what kind of value it asks for or how much there is, in words no passage
    need write: the word after "how" of ``_FORM_ONLY`` ("how long", "how quickly"), "a lot of", and the "mean"
    of "what does … mean"."""
    spans = [m.span() for m in _A_LOT_OF.finditer(question)]
    meaning = question_type.meaning_asked(question)
    if meaning is not None:  # "what does status 51 mean?": a passage giving the meaning need not say "mean"
        spans.append(meaning)
    return spans + _after_how(question)


def _after_how(question: str) -> list[tuple[int, int]]:
    """Where the word after "how" only says what kind of value is asked (``_FORM_ONLY``: "how long", "how often")."""
    return [
        m.span()
        for m in _WORD.finditer(question)
        if m.group().casefold() in _FORM_ONLY and _AFTER_HOW.search(question, 0, m.start())
    ]


def _form_terms(question: str, tokenize: Tokenizer, spans: list[tuple[int, int]] | None = None) -> set[str]:
    """The terms of the words of ``_form_spans``, unless the question also uses such a word for what it is about
    ("How long is the long text?", "Which lot of the batch failed after a lot of retries?")."""
    spans = _form_spans(question) if spans is None else spans
    form: set[str] = set()
    told: set[str] = set()
    for m in _WORD.finditer(question):  # compared as terms: "lots of …; which lot …" asks of a lot
        (form if any(low <= m.start() < high for low, high in spans) else told).update(tokenize(m.group()))
    return form - told


def unsearched_terms(question: str, tokenize: Tokenizer) -> set[str]:
    """The terms search leaves out: the word after "how" that only says what kind of value is asked ("how often
    does Z_BC_SPOOL_CLEANUP run": a rare "often" ranked a runbook saying it above the job's row). The "mean" of
    "what does … mean" is searched: a table's "Meaning" column holds what it asks."""
    spans = _after_how(question)
    return _form_terms(question, tokenize, spans) if spans else set()


def absent_words(question: str, looked_up, doc_freqs: dict[str, int], tokenize: Tokenizer) -> list[str]:
    """The words of ``question`` that no passage of the searched packs contains, as written, each once.

    Shown with the answer, so a user sees at once that "VPN" or "INC-2026-0427" is in no document
    the agent searched, whatever the passages share with the rest of the question. A word is absent
    when one of its analyzed terms occurs in no passage: a passage holding the word would hold each
    of its terms. Only the terms whose statistics were ``looked_up`` (the question's terms) decide;
    stopwords decide nothing, nor does the word after "how" ("how big"): it is the question's form.
    """
    nowhere = {t for t in looked_up if not doc_freqs.get(t, 0)}
    if not nowhere:  # most questions: no word to look for, and no analysis of each word
        return []
    # the word after "how" is the question's form ("how big", "how far"), as "a lot of" says how much, not something
    # it is about; the words of a day ("25 apr", "2026-04-25") are how the day is written: whether a document names
    # the day, the day check says
    skipped = written.day_spans(question) + _form_spans(question)
    words = list(
        dict.fromkeys(
            m.group()
            for m in _WORD.finditer(question)
            if not (m.group().casefold() in _DEGREE and _AFTER_HOW.search(question, 0, m.start()))
            and not any(low <= m.start() < high for low, high in skipped)
        )
    )
    _prefetch(tokenize, words)
    absent: dict[str, str] = {}
    for word in words:
        if nowhere.intersection(tokenize(word)):
            absent.setdefault(word.casefold(), word)
    return list(absent.values())


def _part_naming(question: str, run: list[str]) -> str:
    """The part of a question of several parts that names the identifiers of ``run`` ("…, and what latency
    is expected now?"); the whole question when it has one part."""
    parts = asked_values.question_parts(question)
    return next((part for part in parts if all(names(part, token) for token in run)), question)


def _shares_of_part(
    part: str, covered: list[set[str]], weights: dict[str, float], tokenize: Tokenizer
) -> list[float] | None:
    """Each passage's share of the weight of ``part`` of the question; None when it has no weight of its own.

    A passage naming an identifier must be about what the question asks of it, not about the other
    parts: those may be answered by other passages (``MIN_JOINED_COVERAGE``)."""
    terms = set(tokenize(part)) & weights.keys()
    total = math.fsum(weights[t] for t in terms)
    if not total or terms == weights.keys():
        return None
    return [math.fsum(weights[t] for t in c & terms) / total for c in covered]


def _closest(units: list[asked_values.Unit], weights: dict[str, float], tokenize: Tokenizer) -> list[asked_values.Unit]:
    """The units closest to the question: those covering at least ``CLOSEST_UNITS`` of the best one's weight of
    the question's terms, with their context."""
    shares = [math.fsum(weights[t] for t in set(tokenize(f"{u.context} {u.text}")) & weights.keys()) for u in units]
    best = max(shares, default=0.0)
    return [u for u, share in zip(units, shares) if share >= CLOSEST_UNITS * best]


def _on_the_days(
    asked: dict[tuple[int, int], str],
    of_hit: list[tuple[int, asked_values.Unit]],
    texts: list[str],
    document_days: Callable[[], list[set[tuple[int, int]]]],
) -> list[asked_values.Unit]:
    """The units that may hold a value asked for on the days the question names: those of a passage, or of a
    document (``document_days``: for each hit, the days asked its document names), naming one of them. "How many
    billing documents did the run create on 31 March?" is not answered by a problem record's count of another
    night."""
    if not asked:
        return [unit for _, unit in of_hit]
    return [unit for i, unit in of_hit if asked.keys() & (written.days(texts[i]).keys() | document_days()[i])]


def _closest_on_the_days(
    asked: dict[tuple[int, int], str],
    of_hit: list[tuple[int, asked_values.Unit]],
    texts: list[str],
    document_days: Callable[[], list[set[tuple[int, int]]]],
    weights: dict[str, float],
    tokenize: Tokenizer,
) -> list[asked_values.Unit]:
    """The units closest to a question how something went on the days it names, among those of passages or
    documents naming one of them (``_on_the_days``): "Did the KBP update on 18 April finish on time?" is told by
    what the documents of 18 April say, not by the report of another system's update on 14 March. None when the
    question names no day."""
    return _closest(_on_the_days(asked, of_hit, texts, document_days), weights, tokenize) if asked else []


def _time_asked(question: str) -> asked_values.AskedValue | None:
    """A time, when a question of one part asks "when": "When does the KXQ certificate expire?" is answered by a
    unit giving a time beside KXQ, not by the expiry dates of the other systems' certificates. "When should we
    …" asks for a condition ("when the same symptom appears twice"), which no time need give."""
    if (
        question_type.asks(question) != "time"
        or len(asked_values.question_parts(question)) > 1
        or question_type.asks_a_condition(question)
    ):
        return None
    return asked_values.AskedValue("time", "time")


def _only_announced_on(
    days: dict[tuple[int, int], str], units: list[asked_values.Unit], weights: dict[str, float], tokenize: Tokenizer
) -> bool:
    """Whether the units naming one of ``days`` closest to the question all announce what is to happen and report
    nothing done: "Next meeting: Thursday 2026-03-19" does not say what the board decided that day."""
    on_the_day = [u for u in units if days.keys() & written.days(f"{u.context} {u.text}").keys()]
    closest = _closest(on_the_day, weights, tokenize)
    return bool(closest) and all(_announces(u, days) for u in closest)


def _announces(unit: asked_values.Unit, days: dict[tuple[int, int], str]) -> bool:
    """Whether ``unit`` only says what is to happen on one of ``days``: it stands where the next meeting is
    announced, or it names the day in its own text as the one something is planned or approved for ("Decision D5:
    approved for Thursday 19 March"), in minutes not of that day (a decision of that day's minutes that looks ahead
    is still what was decided then)."""
    if outcome.only_announced(unit.text, unit.context):
        return True
    own_day = days.keys() & written.days(unit.text).keys() and not days.keys() & written.days(unit.context).keys()
    return bool(own_day) and outcome.planned(unit.text)


def _nothing_but_plans(question: str, closest: list[asked_values.Unit]) -> bool:
    """Whether the units closest to the question all speak of what is to happen: "the rehearsal must finish
    with return code 0" does not say whether it did. A decision answers a question whether it was taken, however
    far it looks ahead (``outcome.decision_reported``)."""
    return (
        bool(closest)
        and all(outcome.planned(u.text, u.context) for u in closest)
        and not any(outcome.decision_reported(question, u.text) for u in closest)
    )


# A year is when, not what: "the MTTR for P1 in January 2026" is about P1 (a passage must still name 2026 somewhere).
_YEAR = re.compile(r"(?:19|20)\d{2}")


def _alone_of_their_kind(
    runs: list[list[str]], texts: list[str], question: str, in_packs: Callable[[str], bool] | None = None
) -> list[list[str]]:
    """The runs of ``runs`` that are a three-letter name the passages found write, and write no sibling of: "take SAP
    offline", "production SAP", "the SAP support team" name the product, not one system of several, and a passage
    about the question need not name it. A name no passage found writes is not shown to be one (KXQ among K4P and
    KBP). KXQ beside KXP, K4Q beside K4P name one thing among others; "MRP Live", a name
    of several words, names one thing too."""
    acronyms = [
        run
        for run in runs
        if len(run) == 1 and _is_acronym(run[0]) and not re.search(rf"\b{re.escape(run[0])}\s+[A-Z][a-z]", question)
    ]
    if not acronyms:
        return []
    found = {name for text in texts for name in _names_in(text)}
    # a name no passage found writes is not shown to be the product (KXQ among K4P and KBP is missing), unless
    # ``in_packs`` says the packs write it: then it is one when the passages found write no sibling of it
    return [
        run
        for run in acronyms
        if (run[0] in found or (in_packs is not None and in_packs(run[0]))) and not any(_kin(run[0], n) for n in found)
    ]


def _is_name(token: str) -> bool:
    """A name that may be one of a family written alike: letters and digits (TW10, TW20; K4P, K4Q; R26.03), or a
    three-letter system name in capitals (KBP, KXP) — never a word ("was" is no sibling of QAS)."""
    return (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)) or _is_acronym(token)


def _kin(name: str, token: str) -> bool:
    """Whether ``token`` names a sibling of ``name``: another name of the same shape that differs in one character
    (TW10 for TW20, KXP for KBP, INC-2026-0265 for INC-2026-0266; not EDI for ERP, nor "was" for QAS)."""
    if len(token) != len(name) or not _is_name(token):
        return False
    # a system's three-character names are one family whatever their shape: K4P beside the KBP asked, and KBP beside
    # K4P; a product's name is none of them ("SAP spool usage" beside the S4P asked)
    if _shape(token) != _shape(name) and not (
        written.is_system_name(name)
        and written.is_system_name(token)
        and token.upper() not in PRODUCT_ACRONYMS
        and name.upper() not in PRODUCT_ACRONYMS
    ):
        return False
    return sum(a != b for a, b in zip(token.casefold(), name.casefold())) == 1


def _names_in(text: str) -> list[str]:
    """The names ``text`` writes, in order and each once, read as the question's are (``_tokens``: "K4P/K4Q" is
    two), with the parts of a name joined by ``_`` (Z_MM_MRP_LIVE_TW10 names TW10)."""
    names = (part for token, _, _ in _tokens(text) for part in (token, *token.split("_")) if _is_name(part))
    return list(dict.fromkeys(names))


def _sibling_asked(
    question: str,
    asked: list[str],
    units: list[asked_values.Unit],
    closest: list[asked_values.Unit],
    weights: dict[str, float],
    tokenize: Tokenizer,
) -> tuple[str, str] | None:
    """The first of the names ``asked`` whose closest units are about a sibling, with that sibling (or None).

    Closest by the question's terms (``closest``), and by the rest of the question (the name's own terms left out): a
    unit naming the plant asked only in passing ("ships from plants TW10 and TW20") is not about the MRP job
    asked, however rare "TW20" is. By the rest alone only when no unit naming the name carries what the question
    asks for (a time, a number, an identifier): "P1 4 hours, P2 8 hours" answers for P2 however well a row
    about P4 covers the rest."""
    # a sibling named only in what the user tells first is still another one: "I know the MES of plant TW10 well.
    # Does plant TW20 have one too?" is not answered by TW10's
    in_question = {token.casefold() for token, _, _ in _tokens(asking_part(question)[0])}
    wanted = question_type.asks(question)
    for name in asked:
        found = _about_sibling(closest, name, in_question, wanted)
        if found is None and wanted in ("time", "number", "identifier"):
            carrying = any(
                names(f"{u.context} {u.text}", name) and question_type.carries(u.text, wanted, {name.casefold()})
                for u in units
            )
            own = set(tokenize(name))
            rest = {t: w for t, w in weights.items() if t not in own}
            found = None if carrying else _about_sibling(_closest(units, rest, tokenize), name, in_question, wanted)
        if found is not None:
            return found
    return None


def _about_sibling(
    closest: list[asked_values.Unit], name: str, in_question: set[str], wanted: str = ""
) -> tuple[str, str] | None:
    """``(name, sibling)`` when the units closest to the question all name a sibling of ``name`` and none of them
    names ``name``, with its context (a digest's title names its incident): "the MRP job of plant TW20" is not
    answered by the MRP job of TW10. A sibling the question names itself ("TW10 and TW20") says nothing
    (``in_question``: its names, casefolded). A unit naming none of the family and carrying nothing ``wanted`` (a
    runbook's "a database space alert (… above the threshold)") is about no one of them: it is left aside, or the
    threshold of K4P answered for KBP whenever a runbook was searched too (found in a browser walkthrough)."""
    named = [(u, _names_in(f"{u.context} {u.text}")) for u in closest]  # each unit's names, read once
    named = [
        (u, names_of)
        for u, names_of in named
        if any(_kin(name, t) or t.casefold() == name.casefold() for t in names_of)
        or (wanted and question_type.carries(u.text, wanted, {name.casefold()}))
    ] or named
    siblings = [[t for t in names_of if t.casefold() not in in_question and _kin(name, t)] for _u, names_of in named]
    if not named or not all(siblings) or any(names(f"{u.context} {u.text}", name) for u, _names_of in named):
        return None
    return name, siblings[0][0]


def _found_only_through_vocabulary(
    covered: list[set[str]],
    texts: list[str],
    weights: dict[str, float],
    synonyms: dict[str, frozenset[str]],
    tokenize: Tokenizer,
) -> bool:
    """Whether a question term is covered only through the packs' vocabulary ("sticker" read as "label"): the
    question is about the packs, which the embedding model does not know."""
    if not synonyms:
        return False
    as_written = {t for text in texts for t in tokenize(text) if t in weights}
    return bool(set().union(*covered) - as_written)


def _joined_share(covered: list[set[str]], weights: dict[str, float], total: float) -> float:
    """The share of the weight the best ``MAX_JOINED`` passages cover together (chosen greedily)."""
    union: set[str] = set()
    for _ in range(MAX_JOINED):
        gain, best = max(
            ((math.fsum(weights[t] for t in c - union), i) for i, c in enumerate(covered)), default=(0, None)
        )
        if not gain:
            break
        union |= covered[best]
    return math.fsum(weights[t] for t in union) / total


def _prefetch(tokenize: Tokenizer, texts: list[str]) -> None:
    """Let a caching tokenizer (``analysis.TermCache``) analyse these texts in one call."""
    prefetch = getattr(tokenize, "prefetch", None)
    if prefetch is not None:
        prefetch(texts)
