"""The help topics, and the facts each page states, read from the modules that own them.

A page never writes a mode, reason, marker or limit by hand: each comes from where it is defined,
so the help says what this deployment does (its classification policy included).
"""

from __future__ import annotations

from portal.access import ACTIONS
from portal.agents.services import MODE_HELP
from portal.answers.evidence import REFERENCES_PER_RUN
from portal.answers.extractive import NO_EVIDENCE_ANSWER
from portal.answers.grounding import (
    ANSWER_BASES,
    MODEL_ONLY,
    NO_EVIDENCE,
    NOT_ACCEPTED,
    STOPPED_NO_PASSAGE_ANSWER,
)
from portal.documents.outcomes import REDACTED_FIGURE
from portal.documents.services import classification_policy
from portal.feedback.services import MAX_NOTE_CHARS, REASONS
from portal.ingest.classify import REDACTION_MARKER

# Each topic's address (/help/<topic>, its template templates/help/<topic>.html) and title.
TOPICS = {
    "grounding": "How agents use packs: the grounding modes",
    "classification": "What classification does to an upload",
    "no-evidence": "What “No evidence found” means",
    "rating": "How to rate an answer",
}

# What each decision of the classification policy does to an upload (SPEC 4), in the order of classify.DECISIONS.
DECISION_HELP = {
    "allow": "not looked for: the rule is switched off in this portal.",
    "redact": "each one is replaced by the marker below, and the upload is stored.",
    "review_required": "the upload is refused: it would need a review, and there is no review queue.",
    "block": "the upload is refused.",
}

# What each reason of a Not helpful rating is for.
REASON_HELP = {
    "incorrect": "the answer says something the documents do not, or gets it wrong.",
    "incomplete": "a step, a condition or part of the question is missing.",
    "irrelevant_sources": "the cited passages are about something else.",
    "outdated": "the answer follows a document that is no longer current.",
    "did_not_cite": "the answer gives no source, or not for what matters.",
    "other": "anything else; say what in the note.",
}


def facts_for(topic: str) -> dict:
    """What the page of ``topic`` shows besides its prose."""
    if topic == "grounding":
        return {
            "modes": MODE_HELP,
            "references_per_run": REFERENCES_PER_RUN,
            "answer_bases": ANSWER_BASES,
            "no_evidence_answer": NO_EVIDENCE_ANSWER,
            "stopped_answer": STOPPED_NO_PASSAGE_ANSWER,
            "model_only": MODEL_ONLY,
            "not_accepted": NOT_ACCEPTED,
        }
    if topic == "classification":
        return {
            "rules": classification_policy().rules,
            "decision_help": DECISION_HELP,
            "marker": REDACTION_MARKER,
            "redacted_figure": REDACTED_FIGURE,
        }
    if topic == "no-evidence":
        return {
            "no_evidence_answer": NO_EVIDENCE_ANSWER,
            "no_evidence": NO_EVIDENCE,
            "stopped_answer": STOPPED_NO_PASSAGE_ANSWER,
            "model_only": MODEL_ONLY,
        }
    if topic == "rating":
        return {
            "reasons": REASONS,
            "reason_help": REASON_HELP,
            "max_note_chars": MAX_NOTE_CHARS,
            "reviewer_roles": sorted(ACTIONS["feedback.review"]),
        }
    return {}
