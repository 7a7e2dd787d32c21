"""Values of a shape of their own that a question may ask for, and whether a text holds one.

A phone, mobile or fax number; an e-mail address; the name of a company or a
person; an IP address; an amount of money. "What is the mobile phone number of
the DBA on call?" is not answered by "alert the DBA on-call phone": the
evidence check (``portal.answers.evidence``) needs a passage holding a value of
that shape, and covering the question well enough. The shapes are general, not
any corpus's: an ISO date is no phone number, "Impact" in a heading path or
"Released" after "status" is no name.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from portal.answers import written
from portal.answers.units import KEYWORDS_LINE
from portal.search.analysis import STOPWORDS

# A phone number: seven or more digits, international (+49 …) or written in groups (0171 2345678,
# 030/123-456); a run of digits alone is a document number, a date with a time is not a phone number.
_PHONE = re.compile(r"(?<![\w./:-])(?:\+\d|\(?\d+\)?[ /-]\(?\d)[\d ()/-]{4,}\d(?![\w./:-])")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


# An IPv4 or IPv6 address.
_IP_ADDRESS = re.compile(
    r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])|(?<![\w:])(?:[0-9a-f]{1,4}:){3,7}[0-9a-f]{1,4}(?![\w:])|[0-9a-f]{1,4}::[0-9a-f]{0,4}",
    re.I,
)
# An amount of money: a currency sign or code next to a number (€ 1,200, 1.200 EUR, USD 40, 300 euros).
# Currencies by code and by name: how an amount is written, and how a question asks for one ("in euros").
_CURRENCY_NAMES = r"(?:EUR|USD|GBP|CHF|JPY|euros?|dollars?|pounds?|francs?|yen)"
_MONEY = re.compile(
    r"(?:[€$£¥]|\b(?:EUR|USD|GBP|CHF|JPY)\b)\s?\d|\d[\d.,]*\s?(?:[€$£¥]|" + _CURRENCY_NAMES + r"\b)",
    re.IGNORECASE,
)


def _holds_phone_number(text: str) -> bool:
    return any(
        sum(c.isdigit() for c in m.group()) >= 7 and not _ISO_DATE.search(m.group()) for m in _PHONE.finditer(text)
    )


# The name of a company or a person: "What's the name of the 3PL partner company?", "Which company is our
# e-invoicing provider?", "who was on call? need his name". The answer names it, with a capital, in a clause
# about what was asked.
# The noun must end its phrase: "the name of the bank statement import job" asks for a job's name, which is an
# identifier, not a company's.
_PHRASE_END = (
    r"(?=\s*(?:[?.,;:!]|$|\b(?:for|of|in|at|on|to|by|from|with|near|next|behind|that|who|which|we|our|is|are|was|"
    r"were|do|does|did)\b))"
)
_ASKS_NAME = re.compile(
    # "the name and address of our 3PL partner" asks for its name too
    r"\bnames?\s+(?:and\s+(?:[\w-]+\s+){1,2}?)?of\s+(?:the\s+|our\s+|this\s+|that\s+)?(?:[\w-]+\s+){0,4}?(?:company|vendor|supplier|provider|"
    r"partner|firm|contractor|manager|lead|person|engineer|consultant|administrator|owner|contact|bank|carrier|"
    r"haulier|forwarder|insurer|auditor|agency|broker|officer|analyst|coordinator|supervisor|director|specialist|"
    r"technician|colleague)s?\b"
    + _PHRASE_END
    # "which company code" asks for a code
    + r"|\bwhich\s+(?:[\w-]+\s+){0,2}?"
    + r"(?:company|vendor|supplier|firm|contractor|carrier|haulier|forwarder|manufacturer|provider)\b"
    # "which company code", "which vendor accounts", "which company holidays" ask for something else
    + r"(?!\s+(?:codes?|numbers?|ids?|keys?|accounts?|statements?|details|holidays?|files?|channels?|portals?|types?|"
    + r"urls?|settings?)\b)"
    # "which bank is our house bank", "which house bank do we use", "which bank for SEPA payments": a bank asked by its
    # name, when a verb or "for" follows it ("which bank charges apply", "which bank format" ask for something else)
    + r"|\bwhich\s+(?:[\w-]+\s+){0,2}?banks?\s+(?:is|are|was|were|do|does|did|should|will|would|can|could|must|for|"
    + r"holds?|has|have|handles?|receives?|gets?|sends?)\b"
    + r"|\bwho\b[^?.]*\bby\s+name\b"
    # "who's our contact person at …", "who makes the label printers, what brand?": a person or a maker, by name
    r"|\bwho(?:['’]s|\s+is|\s+are|\s+was|\s+were)?\b[^?.]{0,40}?\bcontact\s+persons?\b|\bcompany(?:['’]s)?\s+names?\b|\b(?:which|what)\s+(?:brand|manufacturer|make\s+and\s+model)\b"
    r"|\bwho\s+(?:makes|made|manufactures|manufactured|builds|built)\b"
    # "need his name", and after a question who it was, "need the name"
    r"|\b(?:his|her|their)\s+names?\b|\bwho\b.*\b(?:need|want|give\s+me|tell\s+me)\s+(?:the|a)\s+names?\b",
    re.IGNORECASE,
)
# Where a clause ends: punctuation, a table's cell, a line, the step of a heading path ("Incident > Impact").
_CLAUSE = re.compile(r"[.;:|\n()>]+")
_CAPITALISED = re.compile(r"(?<![\w'’-])[A-Z][a-z]+(?:[-'’][A-Za-z]+)?")
# Capitalised words in a row: one name ("Tarnwick Fluid Systems GmbH").
_NAME_RUN = re.compile(r"(?<![\w'’-])[A-Z][\w'’-]*(?:[ \t]+[A-Z][\w'’-]*)+")
_WORDS = re.compile(r"[^\W\d_]{3,}")


def _holds_name(text: str, question: str) -> bool:
    """Whether a clause of ``text`` sharing a word with ``question`` holds a capitalised name the question does
    not use, other than its first word, a month, a day or a status ("in status Released"):
    "handled by the 3PL warehouse partner next door" names no company, "the provider is Billtrust Ltd" does."""
    asked = {w.casefold() for w in _WORDS.findall(question)}
    given = {
        m.group().casefold().removesuffix("'s").removesuffix("’s") for m in _CAPITALISED.finditer(question) if m.start()
    } - _QUESTION_WORDS
    # a document's keywords line lists its topics, capitalised as names are, and states nothing
    text = "\n".join(line for line in text.splitlines() if not KEYWORDS_LINE.match(line.strip()))
    for clause in _CLAUSE.split(text):
        words = {w.casefold() for w in _WORDS.findall(clause)}
        if not words & (asked - _QUESTION_WORDS):
            continue
        # a name of several words the question gives one of (capitalised there too) is the question's own: "Which
        # company is Tarnwick's e-invoicing provider?" is not answered by "Tarnwick Fluid Systems GmbH"; "our house
        # bank" is answered by "Sterling Bank"
        own = [
            run.span()
            for run in _NAME_RUN.finditer(clause)
            if {w.casefold() for w in _WORDS.findall(run.group())} & given
        ]
        for match in _CAPITALISED.finditer(clause):
            if any(start <= match.start() < end for start, end in own):
                continue
            name = match.group().casefold().removesuffix("'s").removesuffix("’s")  # Tarnwick's is Tarnwick
            before = clause[: match.start()]
            # a heading's or a list item's first word, too, and a quoted message's ("fails with "User is locked"")
            first = not before.strip(" \t-*•#") or before.endswith(('"', "“", "„", "‘", "«"))
            if (
                not first
                and not _in_technical_name(clause, match)
                and name not in asked
                and name not in written.CALENDAR_NAMES
                and name not in _QUESTION_WORDS
                and not _STATUS.search(clause, 0, match.start())
            ):
                return True
    return False


# A capitalised word next to an acronym is part of a technical name ("AMS Basis", "SSL client Standard PSE"), not a
# person's or a company's; a legal form after a company's name is no such acronym (Sterling Bank AG).
_ACRONYM = re.compile(r"[A-Z][A-Z0-9]{1,}")
_LEGAL_FORMS = frozenset("AG SE LLC PLC NV BV SA SAS SPA KG OHG LTD INC CORP LLP".split())


def _in_technical_name(clause: str, match: re.Match) -> bool:
    before = clause[: match.start()].split()
    after = clause[match.end() :].split()
    neighbours = [word.strip(",;:()") for word in (before[-1:] + after[:1])]
    return any(_ACRONYM.fullmatch(word) and word not in _LEGAL_FORMS for word in neighbours)


# A capitalised word right after "status" is a status ("in status Released", "status: Finished"), not a name.
_STATUS = re.compile(r"\b(?:status|state)\s*:?\s*$", re.IGNORECASE)
# The words that ask for a name, beside the one stop-word list: they say nothing of whose name it is.
_QUESTION_WORDS = STOPWORDS | {"name", "names", "company"}

# What a question asks for (its words) -> whether a text holds a value of that shape.
SHAPED_VALUES: dict[str, tuple[re.Pattern, Callable[[str, str], bool]]] = {
    "phone number": (
        # "the support hotline number", "a contact number", "the number to call"
        re.compile(
            r"\b(?:phone|telephone|mobile|cell|fax|hotline|contact)\s+(?:number|no\b(?!\s+(?:later|longer|more|one)\b))"
            r"|\bnumber\s+to\s+(?:call|ring)\b",
            re.I,
        ),
        lambda text, question: _holds_phone_number(text),
    ),
    "e-mail address": (
        re.compile(r"\be-?mail\s+address", re.I),
        lambda text, question: re.search(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", text) is not None,
    ),
    "name": (_ASKS_NAME, _holds_name),
    "IP address": (
        re.compile(r"\bIP(?:v[46])?\s+address", re.I),
        lambda text, question: _IP_ADDRESS.search(text) is not None,
    ),
    "amount of money": (
        re.compile(
            r"\bhow\s+much\b[^?.]*\b(?:pay|paid|costs?|charged?|charges|spen[dt]|bill(?:ed)?|earns?|earned)\b"
            # what is paid, named right after "how much": "how much on-call allowance do engineers get?" (not "how
            # much disk space do the wage type tables use")
            r"|\bhow\s+much\s+(?:[\w-]+\s+){0,2}?(?:allowances?|bonus(?:es)?|salary|salaries|wages?|compensation|"
            r"reimbursements?)\b(?!\s+(?:types?|tables?|jobs?|runs?|programs?|reports?)\b)"
            r"|\bwhat\s+(?:did|does|do|will|would)\b[^?.]*\bcost\b|\b(?:price|cost|fee|charge)s?\s+(?:of|for|per)\b"
            # "what budget was approved", "what's the budget for …"; not a time or error budget, nor a budget's
            # line, code, owner or approval
            r"|\b(?:what(?:'s|’s|\s+(?:is|was|are|were)\s+the)?|which|how\s+much)\s+"
            r"(?:(?!(?:time|error|performance)\b)[\w-]+\s+){0,2}?budget\b"
            r"(?!\s+(?:lines?|codes?|owners?|holders?|approvals?|process|items?|cent(?:er|re)s?)\b)"
            # a value asked in a currency: "the total value in euros of …", "how much money"; not "which vendors
            # invoice in euros", "can customers pay in USD"
            r"|\b(?:value|total|amount|cost|price|sum|worth)\b[^?.]{0,40}?\bin\s+" + _CURRENCY_NAMES + r"\b"
            # ... said first, opening the question ("In euros, what was the total value of …")
            r"|^\W*in\s+" + _CURRENCY_NAMES + r"\b[^?.]{0,40}?\b(?:value|total|amount|cost|price|sum|worth)\b"
            # revenue is money: "the revenue value of the 486 invoices", "how much revenue", "what was the revenue?";
            # not a revenue account, nor a revenue anything else
            r"|\brevenue\s+(?:value|amount|figure|total)s?\b"
            r"|\b(?:how\s+much|what(?:['’]s|\s+(?:is|was|are|were))?\s+(?:the\s+)?(?:total\s+)?)\s*revenue\b"
            r"(?!\s+(?:accounts?|gl|codes?|recognition|types?|streams?|cent(?:er|re)s?|lines?|items?|postings?)\b)"
            r"|\bhow\s+much\s+money\b"
            # a credit limit is an amount of money: "what's the credit limit for sold-to party 200184?"; not "how
            # many orders exceeded their credit limit"
            r"|\b(?:what(?:'s|’s|\s+(?:is|was|are|were))?|which)\s+(?:the\s+|their\s+|its\s+)?credit\s+limits?"
            + _PHRASE_END
            # ... and asked as a bare phrase, as on a phone ("credit limit for sold-to 200452?", "… - what is it?"),
            # when nothing else in it asks ("credit limit for new customers - who approves it?")
            + r"|^\W*(?:the\s+)?credit\s+limits?\s+(?:for|of)\b(?![^?]*\b(?:who|how|why|when|where)\b)",
            re.I,
        ),
        lambda text, question: _MONEY.search(text) is not None,
    ),
}
