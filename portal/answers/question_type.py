"""What a question asks for (a time, a number, an identifier or steps) and whether a unit carries it.

The extractive answerer (``extractive.py``) prefers the units that carry what the question type asks for.
"""

import re

from portal.answers import asked, written

# ... after the preposition that says which end of a span is asked ("by what time must billing be done?")
_ASKS_TIME = re.compile(
    r"^\W*(?:(?:by|until|till|from|since|before|after|at|on)\s+)?"
    r"(when|what time|what date|what day|which day|how often)\b",
    re.IGNORECASE,
)
_ASKS_NUMBER = re.compile(
    r"\bhow (many|much|long|large|big|high|old|frequently)\b|\bwhat percent\b|" + asked.QUANTITY_PATTERN,
    re.IGNORECASE,
)
_ASKS_IDENTIFIER = re.compile(
    r"\b(which|what)\b(\s+\w+){0,3}?\s+(jobs?|transactions?|t-?codes?|messages?|programs?|reports?|variants?|"
    r"tables?|users?|servers?|queues?|destinations?|systems?|sids?|events?|status|statuses|codes?|ids?|"
    r"numbers?|notes?|idoc types?|message types?|partners?|releases?|clients?|hosts?|groups?|fields?)\b",
    re.IGNORECASE,
)
# "Who fixes it?", "…, who gets told about it": who does something, which documents written for a team name by a role
# ("the accounts receivable team", "the on-call Basis engineer"); not "the engineer who made the mistake" (a relative
# clause after its noun).
_ASKS_ROLE = re.compile(
    r"(?:^\W*|[,;:(–—-]\s*|\band\s+|\bor\s+)(?:and\s+)?(?:normally\s+|usually\s+)?whom?\b", re.IGNORECASE
)
# A unit naming who does something: a role, a team or a body, as documents that name no person write them.
_ROLE = re.compile(
    r"\b(?:teams?|leads?|managers?|owners?|desk|engineers?|analysts?|administrators?|department|on[- ]call|provider|"
    r"controllers?|board|developers?|planners?|clerks?|operators?|supervisors?|dba|basis|key users?)\b",
    re.IGNORECASE,
)
_PERSON = re.compile(r"\bby\s+[A-Z][a-z]+\s+[A-Z][a-z]+\b|\b[A-Z][a-z]+\s+[A-Z][a-z]+\s+(?:opened|reported|approved)\b")
# "How should a date be written?" asks for a rule, not steps: a procedure question has a person doing it. "In which
# order …" and "step by step" ask for steps too ("a sales order" is no order of steps).
_ASKS_STEPS = re.compile(
    r"^\W*(how (do|can|should|would|shall|must) (i|we|you|one)\b|how to\b|what (are the )?steps\b)"
    # ... after what the user tells, and of whoever does it ("the spool is full, how do they fix it", "what do we do
    # when …")
    r"|\bhow (?:do|can|should|would|must) (?:i|we|you|they|people|users|one)\b"
    r"|\bwhat (?:do|should|can|must) (?:i|we|you|they|people) do\b"
    r"|\b(steps|procedure)\b|\bstep[ -]by[ -]step\b"
    r"|\bin (what|which) order\b(?!\s+(?:type|number|item|quantity|value|date|status))"
    r"|\bwhat(?:['’]s| is) the (right |correct )?order (to|in which)\b",
    re.IGNORECASE,
)
# An instruction starts with one of these verbs (after an optional lead clause such as "In STMS,"), or
# with "Do not" / "Never": the units a "how do I" question asks for, unlike a symptom or a purpose.
_INSTRUCTION_VERBS = frozenset(
    """
    activate add adjust analyse analyze apply ask assign block call cancel change check clean clear close collect
    compare confirm contact copy correct create deactivate decide delete determine document do enlarge enter
    escalate export extend find fix follow free go identify import increase inform keep kill list lock look lower
    make mark monitor move note notify open plan post prepare print process raise read record reduce register
    release remove repeat reprocess request resend reset restart restore restrict resume return review roll run
    save schedule search select send set start stop suspend switch take tell terminate test tick trigger try
    unlock update upload use verify wait watch write
""".split()
)
_LEAD_CLAUSE = re.compile(
    r"^(?:(?:in|on|at|for|from|after|before|once|when|if|then|first|next|finally|afterwards|"
    r"otherwise|meanwhile)\b[^,;:.]{0,60},\s*)",
    re.IGNORECASE,
)

_NUMBER = re.compile(r"(?<![\w-])\d+(?:[.,]\d+)*\s*(%|percent)?(?![\w-])|" + written.NUMBER_WORD_PATTERN, re.IGNORECASE)


def _is_identifier(token: str) -> bool:
    letters = any(c.isalpha() for c in token)
    return (
        "_" in token
        or (letters and any(c.isdigit() for c in token))
        or (len(token) >= 3 and token.isupper() and token.isalpha())
    )


# "When people can't log on, what can I use …?": a clause saying when, then the question.
_WHEN_CLAUSE = re.compile(
    r"^\W*(?:when|if|once|after|before|while)\b[^?,;]*,\s*(?=(?:what|which|who|whom|whose|where|why|how|can|could|"
    r"should|do|does|did|is|are|was|were)\b)",
    re.IGNORECASE,
)


# "When should we open a problem record?" asks under which condition, not for a time.
_WHEN_TO_ACT = re.compile(
    r"\bwhen\s+(?:should|must|do|does|can|could|may|might|would|shall|will|need|is\s+it)\s+(?:i|we|you|one|they|it)\b",
    re.IGNORECASE,
)


def asks_a_condition(question: str) -> bool:
    """Whether a "when" of ``question`` asks under which condition ("When should we …?"), not for a time."""
    return _WHEN_TO_ACT.search(question) is not None


def asks(question: str) -> str:
    """What the question type asks for: "time", "number", "meaning", "role", "identifier", "steps", "summary" or
    "". A clause
    saying when ("When users cannot log on, what …") is not what is asked: the question after it is."""
    question = _WHEN_CLAUSE.sub("", question, count=1)
    if _ASKS_TIME.search(question):
        return "time"
    if _ASKS_NUMBER.search(question):
        return "number"
    if _ASKS_MEANING.search(question):
        return "meaning"
    if _ASKS_ROLE.search(asked.question_parts(question)[0]):  # as for the others, the first part asked decides
        return "role"
    if any(not _names_it(question, m.end(), m.group(3)) for m in _ASKS_IDENTIFIER.finditer(question)):
        return "identifier"
    if _ASKS_STEPS.search(question):
        return "steps"
    summary = _ASKS_SUMMARY.search(question)
    if summary and _RECORD.search(question, summary.start()) and not written.TIME.search(question, summary.end()):
        return "summary"
    return ""


# "What happened in INC-2026-0266?", "tell me about CHG-2026-0131", "what was INC-2026-0203 about": what a record
# tells first, under its "Summary", not a row of its header naming the incident again. Only of a record
# (``_RECORD``), and not at a time ("what happened in INC-2026-0203 at 03:05?" asks for that row).
_ASKS_SUMMARY = re.compile(
    r"(?:^|[.!?;]\s+)\W*(?:(?:so\s+|and\s+)?what\s+(?:exactly\s+)?(?:happened|went\s+on)\b|(?:can\s+you\s+|please\s+)?"
    r"(?:tell\s+me\s+(?:more\s+)?about|summari[sz]e|give\s+me\s+(?:a\s+)?(?:summary|overview)\s+of)\b"
    r"|what\s+(?:is|was)\s+\S+\s+about\b)",
    re.IGNORECASE,
)
# The heading a document's summary stands under.
_SUMMARY_HEADING = re.compile(
    r"^\W*(?:summary|overview|what\s+happened|in\s+brief|abstract|problem\s+statement|description|background)\b",
    re.IGNORECASE,
)
# The identifier of a record a summary tells of: an incident, a problem, a change, a specification (INC-2026-0266,
# PRB-2026-008, CHG-2026-0131, FS-SD-021); not a plant or a system ("tell me about TW30" asks no one record).
_RECORD = re.compile(r"\b[A-Z]{2,6}(?:-[A-Z]{2,4})?-(?:\d{4}-)?\d{1,4}\b", re.IGNORECASE)


# "What does IDoc status 51 mean?", "what's the meaning of …", "what does EWM stand for": a meaning is asked, which
# a unit saying "means" or a table's "Meaning" column gives, not any unit naming an identifier.
# "Mean" ends what is asked ("… mean?", "… mean for an IDoc"): "the mean time to restore", "a mean of 800 ms" and
# "the mean and median runtimes" ask figures.
_ASKS_MEANING = re.compile(
    r"\bwhat\s+(?:does|do|did)\b[^?.!]*?\b(?P<word>mean|stands?\s+for)\b"
    r"(?=\s*(?:[?.!,;:]|$|(?:exactly|here|in|for|to|when|if|on|at|then)\b))"
    r"|\b(?P<noun>meaning)\s+of\b|\bwhat\s+is\s+(?P<meant>meant)\b"
    # ... and told as what something means: "explain what an inbound IDoc in status 64 means, and …" (not "one that
    # says what the message means")
    r"|(?:^\W*|\b(?:explain|tell\s+(?:me|us)|clarify|describe)\s+)what\b(?!\s+(?:does|do|did)\b)"
    r"[^?.!]*?(?<!\bby\s)\b(?P<means>means)\b(?=\s*(?:[?.!,;:]|$|and\b))",
    re.IGNORECASE,
)


def meaning_asked(question: str) -> tuple[int, int] | None:
    """Where ``question`` asks for a meaning in so many words ("… mean?", "the meaning of"): the word is the
    question's form, as "how long" is, which a passage stating the meaning need not write."""
    match = _ASKS_MEANING.search(question)
    if match is None:
        return None
    return next(match.span(group) for group in ("word", "noun", "meant", "means") if match.group(group))


# A unit saying what something means: "means", "stands for", or a table's "Meaning" or "Description" column; not
# "by means of" or "the mean time".
_CARRIES_MEANING = re.compile(
    r"(?<!\bby\s)\bmeans\b|\bmeaning\b|\bmeant\b|\bstands?\s+for\b|\bdescription\b|\bexplanation\b",
    re.IGNORECASE,
)
# The nouns a number names a thing after ("status 51", "return code 8", "message 017"), as an identifier does.
_NUMBERED_BY = frozenset("status statuses code codes message messages".split())


# A question asking why something happened, or what caused it.
_ASKS_CAUSE = re.compile(
    r"\bwhy\b|\bwhat (?:was|went) wrong\b|\bwhat caused\b|\broot cause\b|\breasons?\b(?!\s+codes?\b)", re.IGNORECASE
)


def asks_cause(question: str) -> bool:
    """Whether ``question`` asks for a cause: "why …", "what went wrong", "what caused …", "the root cause"."""
    return _ASKS_CAUSE.search(question) is not None


def is_instruction(unit_text: str) -> bool:
    """Whether a unit tells the reader what to do: ``Restart the channel.``, ``In SM59, test the destination.``"""
    text = _LEAD_CLAUSE.sub("", unit_text.lstrip("\"'‘“(["), count=1)
    words = text.split(None, 2)
    if not words:
        return False
    if words[0].endswith(":"):  # a label ("Change: …", "Release: …"), not a verb
        return False
    first = words[0].strip(",;").casefold()
    if first in ("never", "don't") or (first == "do" and len(words) > 1 and words[1].casefold() == "not"):
        return True
    return first in _INSTRUCTION_VERBS


def _names_it(question: str, end: int, noun: str) -> bool:
    """Whether the noun ending at ``end`` is followed by the identifier it names: "What does transaction SM58
    show?" asks what SM58 shows, not which transaction (a unit naming another one is no better for it)."""
    following = written.IDENTIFIER_TOKEN.match(question, end + 1) if question[end : end + 1] == " " else None
    if following is None:
        return False
    numbered = noun.casefold() in _NUMBERED_BY and following.group().isdigit()
    return _is_identifier(following.group()) or numbered


def carries(unit_text: str, asked: str, named: set[str], heading: str = "") -> bool:
    """Whether a unit (under ``heading``) carries what was asked for (an identifier the question itself names does
    not count); a summary is told under its heading."""
    if asked == "summary":
        return _SUMMARY_HEADING.search(heading) is not None
    if asked == "steps":
        return is_instruction(unit_text)
    if asked == "time":
        return bool(written.TIME.search(unit_text))
    if asked == "number":
        return any(m.group(0).strip().casefold() not in named for m in _NUMBER.finditer(unit_text))
    if asked == "meaning":
        return _CARRIES_MEANING.search(unit_text) is not None
    if asked == "role":  # a role, or a person's name where a document gives one ("opened by Priya Shah")
        return _ROLE.search(unit_text) is not None or _PERSON.search(unit_text) is not None
    if asked == "identifier":
        return any(_is_identifier(t) and t.casefold() not in named for t in written.IDENTIFIER_TOKEN.findall(unit_text))
    return False


def named_identifiers(question: str) -> set[str]:
    """The identifiers the question itself names (casefolded): a unit carrying only these answers nothing."""
    return {t.casefold() for t in written.IDENTIFIER_TOKEN.findall(question) if _is_identifier(t)}
