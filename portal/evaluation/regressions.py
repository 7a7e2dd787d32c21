"""Regression cases recorded from answer feedback, checked against the agents as they are now.

- **expected source**: is the expected document in the agent's top 8? Run the
  way a chat question is: the agent's granted packs, its acceptable hits, at
  most 8 (``portal.runs.ask.issued_hits``).
- **should have said no evidence**: does the agent's answer say "no evidence"
  now? The question goes through the whole ask path (``answer_for``: retrieval,
  the evidence check, the grounding mode) with no model, so the verdict does
  not depend on a provider.

Nothing is stored; no model is called.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from portal.answers.grounding import NO_EVIDENCE
from portal.feedback.regressions import why_unchecked
from portal.models import Agent, Document, Passage, RegressionCase, Revision
from portal.runs.ask import REFERENCES_PER_RUN, answer_for, issued_hits

NO_EVIDENCE_EXPECTED = "no evidence"


@dataclass
class CaseOutcome:
    case_id: int
    feedback_id: int | None
    agent: str
    question: str
    expected: str  # "<pack>/<document id>", or "no evidence"
    kind: str = "expected_source"
    rank: int | None = None  # position (1–8) of the first issued passage from the expected document
    passage_issued: bool | None = None  # None: no passage was named, or it is no longer current
    said_no_evidence: bool | None = None  # a "no evidence" case: did the answer say so?
    skipped: str = ""  # why the case cannot be checked now (``feedback.regressions.why_unchecked``)

    @property
    def found(self) -> bool:
        return self.rank is not None

    @property
    def passed(self) -> bool:
        return bool(self.said_no_evidence) if self.kind == "no_evidence" else self.found

    def as_json(self) -> dict:
        return {
            "case": self.case_id,
            "feedback": self.feedback_id,
            "kind": self.kind,
            "agent": self.agent,
            "question": self.question,
            "expected": self.expected,
            "passed": self.passed,
            "found": self.found,
            "rank": self.rank,
            "passage_issued": self.passage_issued,
            "said_no_evidence": self.said_no_evidence,
            "skipped": self.skipped or None,
        }


@dataclass
class RegressionReport:
    outcomes: list[CaseOutcome] = field(default_factory=list)

    def summary(self) -> dict:
        ran = [o for o in self.outcomes if not o.skipped]
        sources = [o for o in ran if o.kind == "expected_source"]
        no_evidence = [o for o in ran if o.kind == "no_evidence"]
        return {
            "cases": len(self.outcomes),
            "passed": sum(o.passed for o in ran),
            "failed": sum(not o.passed for o in ran),
            "skipped": len(self.outcomes) - len(ran),
            "found": sum(o.found for o in sources),
            "missed": sum(not o.found for o in sources),
            "said_no_evidence": sum(o.passed for o in no_evidence),
            "answered_instead_of_no_evidence": sum(not o.passed for o in no_evidence),
            "top_k": REFERENCES_PER_RUN,
            "items": [o.as_json() for o in self.outcomes],
        }

    def as_text(self) -> list[str]:
        s = self.summary()
        lines = [
            f"Regression cases from answer feedback (this database): {s['cases']} cases, "
            f"{s['found']} found in the agent's top {REFERENCES_PER_RUN}, {s['missed']} missed, "
            f"{s['said_no_evidence']} said no evidence, {s['answered_instead_of_no_evidence']} answered "
            f"instead of no evidence, {s['skipped']} skipped"
        ]
        for o in self.outcomes:
            if o.skipped:
                verdict = f"cannot be checked ({o.skipped})"
            elif o.kind == "no_evidence":
                verdict = "said no evidence" if o.passed else "ANSWERED"
            elif o.found:
                passage = {True: ", passage issued", False: ", passage not issued", None: ""}[o.passage_issued]
                verdict = f"found at {o.rank}{passage}"
            else:
                verdict = "MISSED"
            lines.append(f"  case {o.case_id:<4} {verdict:31} {o.agent}: {o.question[:70]!r}, expected: {o.expected}")
        return lines


def evaluate_regression_cases() -> RegressionReport:
    """Run every recorded case against the agents and packs as they are now."""
    report = RegressionReport()
    for case in RegressionCase.select().order_by(RegressionCase.id):
        no_evidence_case = case.kind == "no_evidence"
        expected = NO_EVIDENCE_EXPECTED if no_evidence_case else f"{case.pack_slug}/{case.document_id}"
        outcome = CaseOutcome(case.id, case.feedback_id, case.agent_slug, case.question, expected, case.kind)
        report.outcomes.append(outcome)
        outcome.skipped = why_unchecked(case) or ""
        if outcome.skipped:
            continue
        agent = Agent.get_by_id(case.agent_id)
        if no_evidence_case:
            outcome.said_no_evidence = answer_for(agent, case.question, client=None).outcome.basis == NO_EVIDENCE
            continue
        document = Document.get_by_id(case.document_pk)
        hits = issued_hits(agent, case.question)
        key = (document.pack.slug, document.doc_id)
        outcome.rank = next((n for n, h in enumerate(hits, 1) if (h.pack, h.document_id) == key), None)
        if case.passage_id is not None and _still_current(case.passage_id, document):
            outcome.passage_issued = any(h.passage_id == case.passage_id for h in hits)
    return report


def _still_current(passage_id: int, document: Document) -> bool:
    return (
        Passage.select()
        .join(Revision)
        .where(
            (Passage.id == passage_id)
            & (Revision.document == document)
            & (Revision.version == document.current_version)
        )
        .exists()
    )
