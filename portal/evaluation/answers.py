"""Answer-level figures: each question asked through the real ``ask`` path, as a user would.

A preferred-mode agent granted the question's packs asks it with the built-in
extractive answerer (no model), and the run is judged:

- **key fact stated** — every ``answer_contains`` string of the question occurs in
  the answer, compared case-insensitively (``casefold``) with runs of whitespace
  made one space; Markdown syntax is not in answers, so none is in the strings;
- **expected document cited** — the answer cites a passage of an expected document;
- **key fact in the passages** — every ``answer_contains`` string occurs in the
  passages the agent was given (their text with the Markdown syntax taken out,
  as the answerer copies it): the most the answerer could state, so a question
  missing here is a retrieval miss and one stated here but not in the answer an
  answerer miss;
- **no evidence** — the answer is exactly ``NO_EVIDENCE_ANSWER``: wanted for an
  unanswerable question (no expected document), wrong for an answerable one;
- **latency** — the whole ``ask`` call, retrieval to stored run (p95 reported).

Nothing is kept: the agents and runs are made inside a transaction that is
rolled back, so evaluating ``--current`` leaves the database as it was.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from portal.answers.extractive import NO_EVIDENCE_ANSWER
from portal.answers.units import plain
from portal.db import database
from portal.evaluation.metrics import mean
from portal.models import Agent, AgentGrant, Pack
from portal.runs.ask import ask


@dataclass
class AnswerOutcome:
    id: str
    kind: str
    split: str
    question: str
    expected: list[str]
    answer_contains: list[str]
    answer: str
    cited_documents: list[str]
    ms: float
    issued_text: str = ""  # the issued passages' text, Markdown syntax taken out

    @property
    def answerable(self) -> bool:
        return bool(self.expected)

    @property
    def no_evidence(self) -> bool:
        return self.answer == NO_EVIDENCE_ANSWER

    @property
    def key_fact_stated(self) -> bool:
        answer = _folded(self.answer)
        return bool(self.answer_contains) and all(_folded(s) in answer for s in self.answer_contains)

    @property
    def key_fact_issued(self) -> bool:
        issued = _folded(self.issued_text)
        return bool(self.answer_contains) and all(_folded(s) in issued for s in self.answer_contains)

    @property
    def expected_cited(self) -> bool:
        return bool(set(self.cited_documents) & set(self.expected))


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


def p95(values: list[float]) -> float:
    """The nearest-rank 95th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] if ordered else 0.0


@dataclass
class AnswerReport:
    outcomes: list[AnswerOutcome] = field(default_factory=list)

    @staticmethod
    def figures(outcomes: list[AnswerOutcome]) -> dict:
        answerable = [o for o in outcomes if o.answerable]
        unanswerable = [o for o in outcomes if not o.answerable]
        with_fact = [o for o in answerable if o.answer_contains]
        return {
            "questions": len(outcomes),
            "key_fact_stated": _share(o.key_fact_stated for o in with_fact),
            "key_fact_in_passages": _share(o.key_fact_issued for o in with_fact),
            "expected_document_cited": _share(o.expected_cited for o in answerable),
            "unanswerable_no_evidence": _share(o.no_evidence for o in unanswerable),
            "answerable_wrongly_no_evidence": _share(o.no_evidence for o in answerable),
            "ask_p95_ms": round(p95([o.ms for o in outcomes]), 1),
        }

    def summary(self) -> dict:
        by_kind: dict[str, list[AnswerOutcome]] = {}
        by_split: dict[str, list[AnswerOutcome]] = {}
        for o in self.outcomes:
            by_kind.setdefault(o.kind, []).append(o)
            by_split.setdefault(o.split or "unsplit", []).append(o)
        return {
            **self.figures(self.outcomes),
            "by_kind": {k: self.figures(v) for k, v in sorted(by_kind.items())},
            "by_split": {k: self.figures(v) for k, v in sorted(by_split.items())},
        }


def _share(flags) -> float | None:
    """The share of true flags, to four places: rounded to three, 1 of 68 (0.0147) became 0.015 and printed as
    2 %."""
    flags = list(flags)
    return round(mean(flags), 4) if flags else None


def evaluate_answers(questions: list[dict]) -> AnswerReport:
    """Ask every question as a preferred-mode agent granted its packs; nothing is stored."""
    packs = {p.slug: p for p in Pack.live()}
    report = AnswerReport()
    with database().atomic() as transaction:
        agents: dict[tuple[str, ...], Agent] = {}
        if questions:  # warm up (the JVM, the readers) so the first question's latency is like the others'
            ask(_evaluation_agent(-1, [packs[s] for s in questions[0]["packs"]]), None, questions[0]["question"])
        for question in questions:
            key = tuple(sorted(question["packs"]))
            if key not in agents:
                agents[key] = _evaluation_agent(len(agents), [packs[s] for s in key])
            started = time.perf_counter()
            run = ask(agents[key], None, question["question"])
            ms = (time.perf_counter() - started) * 1000
            cited = set(run.cited)
            references = list(run.references())
            documents = list(dict.fromkeys(r.document_id for r in references if r.n in cited))
            report.outcomes.append(
                AnswerOutcome(
                    id=question["id"],
                    kind=question.get("kind", ""),
                    split=question.get("split", ""),
                    question=question["question"],
                    expected=list(question["expected"]),
                    answer_contains=list(question.get("answer_contains") or []),
                    answer=run.answer,
                    cited_documents=documents,
                    ms=ms,
                    issued_text="\n".join(plain(line) for r in references for line in r.text.splitlines()),
                )
            )
        transaction.rollback()
    return report


def _evaluation_agent(number: int, packs: list[Pack]) -> Agent:
    """A preferred-mode agent granted exactly ``packs`` (made directly: the evaluation may mix companies)."""
    agent = Agent.create(
        slug=f"cairn-eval-{number + 1}", name=f"Evaluation {number + 1}", mode="preferred", instructions=""
    )
    for pack in packs:
        AgentGrant.create(agent=agent, pack=pack)
    return agent
