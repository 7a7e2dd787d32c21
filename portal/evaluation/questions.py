"""A question set with expected documents, run through the portal's own search."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from portal.evaluation.metrics import mean, ndcg_at, recall_at
from portal.models import Pack
from portal.search import embedding, fusion
from portal.search.service import indexes, search_packs

TOP_K = 8  # what an agent is given


@dataclass
class QuestionOutcome:
    id: str
    kind: str
    question: str
    expected: list[str]
    ranked: list[str]
    no_evidence: bool
    best_similarity: float | None = None  # hybrid: the best cosine of any passage searched
    expected_similarity: float | None = None  # hybrid: the best cosine of an expected document's passage

    @property
    def recall_at_8(self) -> float:
        return recall_at(self.ranked, set(self.expected), TOP_K)

    @property
    def ndcg_at_10(self) -> float:
        return ndcg_at(self.ranked, {doc: 1.0 for doc in self.expected}, 10)


@dataclass
class QuestionReport:
    outcomes: list[QuestionOutcome] = field(default_factory=list)

    def answerable(self, kind: str | None = None) -> list[QuestionOutcome]:
        return [o for o in self.outcomes if o.expected and (kind is None or o.kind == kind)]

    @property
    def unanswerable(self) -> list[QuestionOutcome]:
        return [o for o in self.outcomes if not o.expected]

    def calibration(self) -> dict | None:
        """Where the dense similarity floor sits between unrelated and answerable questions (SPEC 11)."""
        unrelated = [o.best_similarity for o in self.unanswerable if o.best_similarity is not None]
        answerable = [o.expected_similarity for o in self.answerable() if o.expected_similarity is not None]
        if not unrelated and not answerable:
            return None
        return {
            "model": embedding.model_id(),
            "floor": embedding.DENSE_FLOOR,
            "unanswerable_best_max": round(max(unrelated), 3) if unrelated else None,
            "answerable_expected_min": round(min(answerable), 3) if answerable else None,
            "answerable_below_floor": sum(value < embedding.DENSE_FLOOR for value in answerable),
            "answerable_measured": len(answerable),
        }

    def summary(self) -> dict:
        by_kind = defaultdict(list)
        for outcome in self.answerable():
            by_kind[outcome.kind].append(outcome)
        return {
            "questions": len(self.outcomes),
            "recall@8": round(mean(o.recall_at_8 for o in self.answerable()), 3),
            "ndcg@10": round(mean(o.ndcg_at_10 for o in self.answerable()), 3),
            "no_evidence_share_of_unanswerable": round(mean(o.no_evidence for o in self.unanswerable), 3),
            "by_kind": {
                kind: {
                    "questions": len(items),
                    "recall@8": round(mean(o.recall_at_8 for o in items), 3),
                    "ndcg@10": round(mean(o.ndcg_at_10 for o in items), 3),
                }
                for kind, items in sorted(by_kind.items())
            },
        }


KINDS = frozenset({"exact_id", "paraphrase", "two_docs", "procedure", "table_row", "unanswerable"})
SPLITS = frozenset({"tune", "check"})  # thresholds are fitted on "tune" only; "check" reports them
MAX_ANSWER_CONTAINS = 3
REQUIRED_FIELDS = frozenset({"id", "question", "kind", "packs", "expected", "answer_contains"})


def question_problem(question: dict) -> str | None:
    """What makes one question unusable, or None.

    An answerable question must name the strings a correct answer states (``answer_contains``);
    an unanswerable one expects no document and no string. ``split``, ``adjacent`` (same domain, fact absent) and
    ``shares_words`` (off-topic, but sharing everyday words with the corpus: "reset my VPN password")
    are optional.
    """
    missing = REQUIRED_FIELDS - set(question)
    if missing:
        return f"lacks {', '.join(sorted(missing))}"
    if question["kind"] not in KINDS:
        return f"has unknown kind {question['kind']!r}"
    contains = question["answer_contains"]
    if not isinstance(contains, list) or not all(isinstance(s, str) and s.strip() for s in contains):
        return "answer_contains must be a list of non-empty strings"
    if question["kind"] == "unanswerable":
        if question["expected"] or contains:
            return "is unanswerable but expects documents or answer strings"
    else:
        if not question["expected"]:
            return "is answerable but expects no document"
        if not 1 <= len(contains) <= MAX_ANSWER_CONTAINS:
            return f"is answerable and needs 1 to {MAX_ANSWER_CONTAINS} answer_contains strings"
    if "split" in question and question["split"] not in SPLITS:
        return f"has unknown split {question['split']!r}"
    if "adjacent" in question and (question["kind"] != "unanswerable" or not isinstance(question["adjacent"], bool)):
        return "may only mark an unanswerable question as adjacent (true or false)"
    if "shares_words" in question and (
        question["kind"] != "unanswerable" or question.get("adjacent") or not isinstance(question["shares_words"], bool)
    ):
        return "may only mark an off-topic unanswerable question as sharing words (true or false)"
    return None


class QuestionSetError(ValueError):
    """A question file that cannot be evaluated; the message names the file and what is wrong."""


def load_questions(path: Path) -> list[dict]:
    try:
        questions = json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise QuestionSetError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise QuestionSetError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(questions, list) or not all(isinstance(q, dict) for q in questions):
        raise QuestionSetError(f"{path}: a question set is a JSON list of objects, one a question")
    for question in questions:
        problem = question_problem(question)
        if problem:
            raise QuestionSetError(f"{path}: question {question.get('id', '?')} {problem}")
    return questions


def evaluate_questions(questions: list[dict], retrieval: str | None = None) -> QuestionReport:
    """Run the questions through ``search_packs`` (``retrieval``: bm25, hybrid, or the configured one).

    In hybrid mode each outcome also records the dense similarities the floor is calibrated on,
    read from the dense half alone over the same pool the search uses.
    """
    packs = {p.slug: p for p in Pack.live()}
    report = QuestionReport()
    for question in questions:
        missing = [slug for slug in question["packs"] if slug not in packs]
        if missing:
            raise ValueError(f"question {question['id']} searches packs that do not exist: {', '.join(missing)}")
        result = search_packs(
            [packs[s] for s in question["packs"]], question["question"], limit=10, retrieval=retrieval
        )
        ranked = list(dict.fromkeys(hit.document_id for hit in result.hits))
        outcome = QuestionOutcome(
            id=question["id"],
            kind=question.get("kind", ""),
            question=question["question"],
            expected=list(question["expected"]),
            ranked=ranked,
            no_evidence=result.no_evidence,
        )
        if (retrieval or indexes().retrieval) == "hybrid":
            outcome.best_similarity, outcome.expected_similarity = _dense_similarities(question)
        report.outcomes.append(outcome)
    return report


def _dense_similarities(question: dict) -> tuple[float | None, float | None]:
    embedder = embedding.shared_embedder()
    vector = embedding.question_vector(embedder, question["question"])
    if vector is None:
        return None, None
    nearest = indexes().searcher.nearest(question["packs"], vector, fusion.pool_size(10), model_id=embedder.model_id)
    expected = set(question["expected"])
    return (
        nearest[0].similarity if nearest else None,
        max((hit.similarity for hit in nearest if hit.document_id in expected), default=None),
    )
