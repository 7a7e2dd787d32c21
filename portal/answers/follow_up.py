"""A chat question that leans on the one before it, and how it is read then.

In a conversation people ask "And the root cause?" or "Who reported it?" after
"What happened in INC-2026-0203?": alone, such a question names nothing, so
search found the root causes and reporters of other incidents, and the evidence
check let them through (each shares the question's words).

A question leans on the one before when it is short, names nothing of its own
(no identifier, no name of several capitalised words), and either opens as a
continuation ("and …", "also …"), points back at a thing ("it", "they",
"them"; not "IT", and not the "it" of "what time is it" or "is it possible"), or
asks only for an aspect of a thing ("what was the root cause?", "what were the
follow-up actions?").
It is then read as asking about what the conversation was about: the
identifiers of the question before (or, when that one leaned on its own
predecessor, the ones it was read with), written into it: "And the root cause
(INC-2026-0203)?". Its own words decide what it asks (a time, a role, steps);
the identifiers must be in the evidence like any the user names, and
``ask`` issues only passages of documents naming them. A question before that
names no identifier gives nothing to carry: the follow-up is read alone.
"""

from __future__ import annotations

import re

from portal.answers.evidence import identifiers, proper_names

# The most words a question leaning on the one before has: a longer one says what it is about.
MAX_WORDS = 10

# "And the root cause?", "also, who approved it?"
_CONTINUES = re.compile(r"^\W*(?:and|also|plus|then)\b", re.IGNORECASE)
# A word pointing back at the thing asked about before: "Who reported it?", "When was it fixed?", "what did they
# do?". Lower case: "IT" is the department. Not "there", "that" or "this", which as often point at nothing ("Is there
# a runbook …?", "How do I know that …?", "this error").
_POINTS_BACK = re.compile(r"\b(?:[Ii]ts?|[Tt]hey|[Tt]hem|[Tt]heir)\b")
# "It" that points at nothing: the time, a possibility.
_DUMMY_IT = re.compile(
    r"\bwhat\s+time\s+is\s+it\b|\bis\s+it\s+(?:possible|normal|ok|okay|true|safe|allowed|enough|too\s+late)\b"
    r"|\bhow\s+is\s+it\s+going\b",
    re.IGNORECASE,
)
# A question about an aspect of the thing asked about before, naming no thing: "what was the root cause", "what were
# the follow-up actions?". Not "Who reported the spool overflow?", which names its thing, nor "Which transaction shows
# the status?", which asks about something else: only a form of "be" stands between the question word and the aspect.
_ASPECT_OF_IT = re.compile(
    r"^\W*(?:what|who|when|why|how|which)(?:['’]s\b|\s+(?:is|was|are|were)\b)(?:\s+exactly)?\s+the\s+"
    r"(?:(?:root|main|real|final|actual)\s+)?"
    r"(?:cause|impact|effect|fix|resolution|solution|workaround|reporter|priority|status|outcome|result|timeline|"
    r"duration|owner|trigger|lessons?(?:\s+learned)?|next\s+steps?|follow[- ]?ups?(?:\s+(?:actions?|items?))?|"
    r"actions?|consequences?)\W*$",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+")
_ENDING = re.compile(r"\s*([?.!]*)\s*$")


def leans_on_the_one_before(question: str) -> bool:
    """Whether ``question`` is read with what the conversation was about (see the module)."""
    if len(_WORD.findall(question)) > MAX_WORDS or identifiers(question) or proper_names(question):
        return False
    if _CONTINUES.search(question) or _ASPECT_OF_IT.search(question):
        return True
    return _POINTS_BACK.search(_DUMMY_IT.sub(" ", question)) is not None


def read_about(question: str, about: list[str]) -> str:
    """``question`` as asking about ``about``: "And the root cause?" → "And the root cause (INC-9)?"."""
    ending = _ENDING.search(question)
    return f"{question[: ending.start()]} ({', '.join(about)}){ending.group(1) or '?'}"
