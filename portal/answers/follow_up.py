"""A chat question that leans on the one before it, and how the two are read together.

In a conversation people ask "And the root cause?" or "Who reported it?" after
"What happened in INC-2026-0203?": alone, such a question names nothing, so
search found the root causes and reporters of other incidents, and the evidence
check let them through (each shares the question's words). Read after the
question before it, it is about that incident.

A question leans on the one before when it is short and either opens as a
continuation ("and …", "what about …", "also …") or names nothing of its own
but points back ("it", "that", "they", "there"): the question before it is then
what the user told first, and the new one what is asked (``evidence.asking_part``
reads the sentences so: the identifiers of the one before are context, one of
which must be in the evidence; the new question's own identifiers are required).
Only the question just before is read, never a chain: "What about INC-2026-0338?"
followed by "Who reported it?" is about 0338.
"""

from __future__ import annotations

import re

from portal.answers.evidence import identifiers, proper_names

# The most words a question leaning on the one before has: a longer one says what it is about.
MAX_WORDS = 10

# "And the root cause?", "what about INC-2026-0338?", "also, who approved it?"
_CONTINUES = re.compile(r"^\W*(?:and|also|plus|then|so|what\s+about|how\s+about|and\s+what\s+about)\b", re.IGNORECASE)
# A word pointing back at what was asked before: "Who reported it?", "When was that fixed?", "what did they do there?"
_POINTS_BACK = re.compile(
    r"\b(?:it|its|that|this|these|those|they|them|their|there|he|she|him|her|the\s+same)\b", re.IGNORECASE
)
_WORD = re.compile(r"\w+")


def leans_on_the_one_before(question: str) -> bool:
    """Whether ``question`` is read after the question before it in its conversation (see the module)."""
    if len(_WORD.findall(question)) > MAX_WORDS:
        return False
    if _CONTINUES.search(question):
        return True
    return _POINTS_BACK.search(question) is not None and not identifiers(question) and not proper_names(question)


def read_together(before: str, question: str) -> str:
    """The question as read after ``before``: the one before told first, as its own sentence."""
    before = before.strip()
    if not before.endswith(("?", ".", "!")):
        before += "?"
    return f"{before} {question.strip()}"
