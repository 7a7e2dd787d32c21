"""A question how something went, and a text that only says what is to happen: part of the evidence check.

"Did the K4Q rehearsal on 25 April finish with return code 0?", "What came out
of the DR test?", "How long did the downtime overrun?" are not answered by
units that only say what is to happen (``planned``: a modal, a condition, a
proposed action, the rows of a calendar or an outlook): the result of
something planned is not in the documents (``portal.answers.evidence``).
"""

from __future__ import annotations

import re

from portal.answers.asked import asks_what_to_do

# "Did …?", "Was … closed?", "Has … been …?" (opening the question or one of its sentences, or after a name and
# before a pronoun: "prb-2026-008 did it get closed"), "…, did all phases
# end?", "…, were there incidents?" (after a comma: "has" and "have" there are too often "Hi, has anyone …"), "What
# was the result of …", "Results of …", "What came out of …", "Were there …", "How did … go?": a question about how
# something went. "If there was an error …" is a condition, not a question.
_PAST_OUTCOME = re.compile(
    r"(?:(?:^|[.?!;:–—]\s*|\s-\s+)\W*(?:did|was|were|has|have|had)|,\s*(?:did|was|were)"
    # ... typed after what it is about, as on a phone: "prb-2026-008 did it get closed?"
    r"|^\W*(?:(?!(?:what|which|who|whom|whose|when|where|why|how|that|is|are|do|does|will|can|could|should|would|"
    r"has|have|may|must|shall|list|show|tell|give)\b)[\w/.-]+\s+){1,4}(?:did|was|were)"
    r"(?=\s+(?:it|they|this|that)\b))\b"
    r"(?!\s+(?:the|a|an|its|their)?\s*(?:name|number|size|version|revision|level|code|reason|cause)\b)"
    r"|\bwhat\s+(?:was|were|is|are)\s+the\s+(?:results?|outcomes?)\s+of\b|^\W*results?\s+of\b"
    r"|\bwhat\s+came\s+out\s+of\b|\b(?:was|were)\s+there\b|(?<!\bif )(?<!\bwhen )\bthere\s+(?:was|were)\b"
    r"|\bfinished\s+(?:in|on)\s+time\b"
    r"|\bhow\s+did\b.{1,80}?\b(?:go|turn\s+out|end|perform|work\s+out|fare)\b|\bhow\s+(?:long|late|early|far)\s+did\b",
    re.IGNORECASE,
)
# A unit saying what is to happen: a modal of the future or of an obligation, or a plan.
_PLAN = re.compile(
    r"\b(?:will|shall|must|(?:is|are) (?:planned|scheduled|due|to be|to)|planned for|scheduled for|proposed for|"
    r"status: (?:open|proposed|planned|pending|scheduled|in progress))\b",
    re.IGNORECASE,
)
# ... or a condition in a unit that reports nothing done ("close the problem if the test passes" says what is to
# be done once something happens, not that it did; "it finished, even if it took longer" reports it).
_CONDITION = re.compile(r"\bif\b", re.IGNORECASE)
# ... a past form that reports something done; "planned", "scheduled" or "required" report no event.
# A participle after an article, a possessive or a present "is"/"are" describes a thing or a state ("the corrected
# delivery mass update", "its channels are stopped"), it reports nothing done.
_ADJECTIVAL = "".join(rf"(?<!\b{word} )" for word in ("the", "a", "an", "its", "their", "our", "is", "are"))
_REPORTED = re.compile(
    r"\b(?:was|were|had|did|took|ran|went|came|got|made|began|"
    + _ADJECTIVAL
    + r"(?!(?:planned|scheduled|proposed|expected|required|needed|intended|based|related)\b)\w+ed)\b",
    re.IGNORECASE,
)


# "What did the board decide …?", "Which changes did the board approve …?": what was done, asked by what it was.
# ... also as a later part ("Who chaired the board on 19 March, and what did it decide?").
_WHAT_WAS_DONE = re.compile(r"(?:^|,?\s+and\s+)\W*(?:what|which)\b(?!\s+time\b)[^?,]{0,40}?\bdid\b", re.IGNORECASE)


def asks_what_was_done(question: str) -> bool:
    """Whether ``question`` asks what was done ("What did the board decide …?"); read with a day it names, the
    evidence check asks whether the passages of that day report anything (``evidence._only_announced_on``)."""
    return _WHAT_WAS_DONE.search(question) is not None


# A heading announcing the next occurrence of something: its date says when it is to be, not what it was.
_NEXT = re.compile(r"\bnext\s+(?:meeting|session|review|window|board)\b", re.IGNORECASE)


def only_announced(text: str, context: str = "") -> bool:
    """Whether ``text`` stands where what is to happen is listed (a calendar, an outlook, a heading announcing the
    next meeting) and reports nothing done: "Thursday 2026-03-19, 10:00" under "Next meeting" does. A decision that
    looks ahead ("must pass the KXQ test first", "planned for R26.04") is still a decision: the minutes of that day
    answer. The heading counts only here: "How did the meeting of 5 March go?" is answered by its minutes, however
    close their "Next meeting" section stands to the question."""
    announcing = _PLANNING.search(context) or _NEXT.search(context)
    return announcing is not None and _REPORTED.search(text) is None


def asks_past_outcome(question: str) -> bool:
    """Whether ``question`` asks whether something happened (a yes or no about the past); a question what to do
    ("How do I read the results of …", "If there was an error, how do I …") does not."""
    return _PAST_OUTCOME.search(question) is not None and not asks_what_to_do(question)


# A document or section that lists what is to happen (its title or heading names a calendar, a schedule or an
# outlook): its rows and sentences say when something takes place, never how it went.
_PLANNING = re.compile(
    r"\b(?:calendar|schedule|agenda|roadmap|forward plan|outlook|upcoming|next steps|look-?ahead)\b", re.IGNORECASE
)


# A decision what is to happen at a release or on a day ("approved for R26.04"), unless the unit goes on to report
# what was done ("approved for R26.04 and imported on 13 April"); what it says before ("listed in …") is not that.
_APPROVED_FOR = re.compile(r"\bapproved\s+for\b", re.IGNORECASE)


def _approved_for_only(text: str) -> bool:
    """Whether ``text`` approves something for a release or a day and reports nothing done after that."""
    approved = _APPROVED_FOR.search(text)
    return approved is not None and not _REPORTED.search(text, approved.end())


def planned(text: str, context: str = "") -> bool:
    """Whether ``text`` speaks of what is to happen rather than of what happened; ``context`` (its title and
    headings) may say that all it lists is planned."""
    return (
        _PLAN.search(text) is not None
        or _approved_for_only(text)
        or (_CONDITION.search(text) is not None and not _REPORTED.search(text))
        or (_PLANNING.search(context) is not None and not _REPORTED.search(text))
    )


# "Did the board approve …?", "was it rejected?": the question asks for a decision, which a unit reporting one answers
# however far it looks ahead ("Decision D7: deferred. … must first describe the event"), unlike "did R26.04 go in ok?",
# which the board's approval for it does not answer.
# The decision is the question's verb ("did the board approve", "was it rejected"), not a word of its subject ("the
# approval workflow", "deferred revenue", "an acceptance test").
_DECISION_VERB = r"(?:approve|decide|reject|defer|accept|postpone|decline|sign\s+off)"
_DECISION_DONE = r"(?:approved|decided|rejected|deferred|accepted|postponed|declined|signed\s+off)"
# between the auxiliary and the verb: anything but the end of a sentence (a dot inside "5 Mar." or "R26.04" is none)
_BETWEEN = r"(?:[^?.;]|(?<=\w)\.(?=\w)|(?<=\b[A-Z][a-z]{2})\.(?=\s))"
_ASKS_DECISION = re.compile(
    rf"\b(?:did|do|does|will|would)\b{_BETWEEN}{{0,60}}?\b{_DECISION_VERB}\b"
    rf"|\b(?:has|have|had)\b{_BETWEEN}{{0,60}}?\b(?:{_DECISION_VERB}|{_DECISION_DONE})\b"
    rf"|\b(?:was|were|is|are|been|get|got)\b{_BETWEEN}{{0,60}}?\b{_DECISION_DONE}\b"
    r"(?!\s+(?:revenue|income|tax|costs?|payments?|items?)\b)",
    re.IGNORECASE,
)
_REPORTS_DECISION = re.compile(rf"\b(?:{_DECISION_DONE}|decisions?)\b", re.IGNORECASE)


def decision_reported(question: str, text: str) -> bool:
    """Whether ``question`` asks whether something was decided and ``text`` reports a decision."""
    return _ASKS_DECISION.search(question) is not None and _REPORTS_DECISION.search(text) is not None
