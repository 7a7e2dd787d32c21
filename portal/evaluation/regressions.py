"""Regression cases recorded from answer feedback: is the expected document in the agent's top 8 now?

Each case is run the way a chat question is: the agent's granted packs, its
issued passages, at most 8 (``portal.runs.ask.issued_hits``). Nothing is
stored; no model is called.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from portal.models import Agent, Document, Passage, RegressionCase, Revision
from portal.runs.ask import REFERENCES_PER_RUN, issued_hits


@dataclass
class CaseOutcome:
    case_id: int
    feedback_id: int | None
    agent: str
    question: str
    expected: str  # "<pack>/<document id>"
    rank: int | None = None  # position (1–8) of the first issued passage from the expected document
    passage_issued: bool | None = None  # None: no passage was named, or it is no longer current
    skipped: str = ""  # why the case could not run (agent or document gone)

    @property
    def found(self) -> bool:
        return self.rank is not None

    def as_json(self) -> dict:
        return {"case": self.case_id, "feedback": self.feedback_id, "agent": self.agent, "question": self.question,
                "expected": self.expected, "found": self.found, "rank": self.rank,
                "passage_issued": self.passage_issued, "skipped": self.skipped or None}


@dataclass
class RegressionReport:
    outcomes: list[CaseOutcome] = field(default_factory=list)

    def summary(self) -> dict:
        ran = [o for o in self.outcomes if not o.skipped]
        return {"cases": len(self.outcomes), "found": sum(o.found for o in ran),
                "missed": sum(not o.found for o in ran), "skipped": len(self.outcomes) - len(ran),
                "top_k": REFERENCES_PER_RUN, "items": [o.as_json() for o in self.outcomes]}

    def as_text(self) -> list[str]:
        s = self.summary()
        lines = [f"Regression cases from answer feedback (this database): {s['cases']} cases, "
                 f"{s['found']} found in the agent's top {REFERENCES_PER_RUN}, {s['missed']} missed, "
                 f"{s['skipped']} skipped"]
        for o in self.outcomes:
            if o.skipped:
                verdict = f"skipped ({o.skipped})"
            elif o.found:
                passage = {True: ", passage issued", False: ", passage not issued", None: ""}[o.passage_issued]
                verdict = f"found at {o.rank}{passage}"
            else:
                verdict = "MISSED"
            lines.append(f"  case {o.case_id:<4} {verdict:31} {o.agent}: {o.question[:70]!r} → {o.expected}")
        return lines


def evaluate_regression_cases() -> RegressionReport:
    """Run every recorded case against the agents and packs as they are now."""
    report = RegressionReport()
    for case in RegressionCase.select().order_by(RegressionCase.id):
        outcome = CaseOutcome(case.id, case.feedback_id, case.agent_slug, case.question,
                              f"{case.pack_slug}/{case.document_id}")
        report.outcomes.append(outcome)
        agent = Agent.get_or_none(Agent.id == case.agent_id) if case.agent_id else None
        document = Document.get_or_none((Document.id == case.document_pk) & Document.deleted_at.is_null())
        if agent is None:
            outcome.skipped = "the agent was deleted"
            continue
        if document is None:
            outcome.skipped = "the expected document was deleted"
            continue
        hits = issued_hits(agent, case.question)
        key = (document.pack.slug, document.doc_id)
        outcome.rank = next((n for n, h in enumerate(hits, 1) if (h.pack, h.document_id) == key), None)
        if case.passage_id is not None and _still_current(case.passage_id, document):
            outcome.passage_issued = any(h.passage_id == case.passage_id for h in hits)
    return report


def _still_current(passage_id: int, document: Document) -> bool:
    return (Passage.select().join(Revision)
            .where((Passage.id == passage_id) & (Revision.document == document)
                   & (Revision.version == document.current_version)).exists())
