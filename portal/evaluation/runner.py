"""What `cairn eval` runs and how it prints it."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from portal import create_app
from portal.evaluation import cranfield
from portal.evaluation.answers import AnswerReport, evaluate_answers
from portal.evaluation.questions import QuestionReport, evaluate_questions, load_questions
from portal.evaluation.regressions import RegressionReport, evaluate_regression_cases

DEFAULT_CRANFIELD = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "cranfield"


@dataclass
class EvaluationReport:
    source: str
    questions: QuestionReport | None
    cranfield: cranfield.CranfieldResult | None
    cranfield_note: str = ""
    regressions: RegressionReport | None = None
    regressions_note: str = ""
    questions_hybrid: QuestionReport | None = None
    cranfield_hybrid: cranfield.CranfieldResult | None = None
    answers: AnswerReport | None = None
    split: str | None = None

    def as_json(self) -> dict:
        out = {"questions": None, "cranfield": None, "source": self.source}
        if self.regressions is not None:
            out["regressions"] = self.regressions.summary()
        elif self.regressions_note:
            out["regressions_note"] = self.regressions_note
        if self.questions is not None:
            out["questions"] = self.questions.summary()
            out["split"] = self.split or "all"
        if self.answers is not None:
            out["answers"] = self.answers.summary()
        if self.questions_hybrid is not None:
            out["questions_hybrid"] = self.questions_hybrid.summary()
            out["dense_calibration"] = self.questions_hybrid.calibration()
        for key, c in (("cranfield", self.cranfield), ("cranfield_hybrid", self.cranfield_hybrid)):
            if c is not None:
                out[key] = {
                    "k1": c.k1,
                    "b": c.b,
                    "queries": c.queries,
                    "ndcg@10": round(c.ndcg_at_10, 3),
                    "recall@100": round(c.recall_at_100, 3),
                    "map": round(c.map, 3),
                    "plain_lucene": cranfield.PLAIN_LUCENE.get((c.k1, c.b)),
                }
        if self.cranfield is None and self.cranfield_note:
            out["cranfield_note"] = self.cranfield_note
        return out

    def _questions_text(self, details: bool) -> list[str]:
        """BM25 and hybrid side by side: all answerable, each kind, and the unanswerable share."""
        s = self.questions.summary()
        h = self.questions_hybrid.summary() if self.questions_hybrid is not None else None
        lines = [
            f"Question set ({self.source}): {s['questions']} questions"
            + (f" (split {self.split})" if self.split else "")
            + f"{'':14}BM25 R@8 nDCG@10   hybrid R@8 nDCG@10"
        ]
        rows = [("all answerable", s, h)] + [
            (f"  {kind} ({k['questions']})", k, h["by_kind"].get(kind) if h else None)
            for kind, k in s["by_kind"].items()
        ]
        for label, bm25, hybrid in rows:
            other = f"{hybrid['recall@8']:.3f}  {hybrid['ndcg@10']:.3f}" if hybrid else "    —      —"
            lines.append(f"  {label:36} {bm25['recall@8']:.3f}  {bm25['ndcg@10']:.3f}       {other}")
        hybrid_share = f"{h['no_evidence_share_of_unanswerable']:.0%}" if h else "—"
        lines.append(
            f"  unanswerable questions answered 'no evidence found': "
            f"{s['no_evidence_share_of_unanswerable']:.0%} (hybrid {hybrid_share})"
        )
        calibration = self.questions_hybrid.calibration() if self.questions_hybrid is not None else None
        if calibration:
            lines.append(
                f"  dense similarity ({calibration['model']}): best passage of an unanswerable question "
                f"up to {calibration['unanswerable_best_max']}, weakest expected passage of an answerable "
                f"one {calibration['answerable_expected_min']} ({calibration['answerable_below_floor']} of "
                f"{calibration['answerable_measured']} below the floor {calibration['floor']})"
            )
        if details:
            for name, report in (("bm25", self.questions), ("hybrid", self.questions_hybrid)):
                for o in report.outcomes if report is not None else ():
                    if (o.expected and o.recall_at_8 < 1) or (not o.expected and not o.no_evidence):
                        lines.append(
                            f"  miss ({name}) {o.id} [{o.kind}] {o.question} — expected {o.expected}, "
                            f"got {o.ranked[:3]}"
                        )
        return lines

    def as_text(self, details: bool = False) -> str:
        lines = []
        if self.questions is not None:
            lines += self._questions_text(details)
        if self.answers is not None:
            lines += _answer_lines(self.answers, details)
        if self.cranfield is not None:
            c, h = self.cranfield, self.cranfield_hybrid
            plain = cranfield.PLAIN_LUCENE.get((c.k1, c.b))
            lines.append(f"Cranfield ({c.queries} queries, BM25 k1={c.k1} b={c.b})     BM25   hybrid   plain Lucene")
            for name, attribute in (("nDCG@10", "ndcg_at_10"), ("Recall@100", "recall_at_100"), ("MAP", "map")):
                theirs = plain[name.lower()] if plain else None
                lines.append(
                    f"  {name:11} {getattr(c, attribute):6.3f}   {_figure(h, attribute)}   "
                    f"{theirs if theirs is not None else '—':>6}"
                )
        elif self.cranfield_note:
            lines.append(self.cranfield_note)
        if self.regressions is not None:
            lines += self.regressions.as_text()
        elif self.regressions_note:
            lines.append(self.regressions_note)
        return "\n".join(lines)


def run_evaluation(
    questions_path: Path | None,
    current: bool,
    cranfield_dir,
    regressions: bool = True,
    only_regressions: bool = False,
    split: str | None = None,
) -> EvaluationReport:
    """The question set (on a fresh demo seed, or ``current``: this database) with its answers through
    ``ask``, Cranfield, and the regression cases recorded from answer feedback, which always live in
    this database. ``split``: only the questions of that half ("tune" or "check")."""
    from portal.demo.catalog import EVAL_QUESTIONS_PATH

    if only_regressions:
        cases, note = _regressions_on_this_database()
        return EvaluationReport("this database", None, None, regressions=cases, regressions_note=note)
    questions = load_questions(questions_path or EVAL_QUESTIONS_PATH)
    if split:
        questions = [q for q in questions if q.get("split") == split]
    cases, cases_note = None, ""
    if current:
        # Indexes carry vectors only for hybrid retrieval: repairing them as hybrid adds what is missing.
        app = create_app({"CAIRN_REPAIR_INDEX_ON_START": True, "CAIRN_RETRIEVAL": "hybrid"})
        with app.app_context():
            report, hybrid = _both_retrievals(questions)
            answers = _answers(questions)
            if regressions:
                cases, cases_note = _regression_cases_if_migrated(app)
        source = "this database"
    else:
        (report, hybrid, answers), source = _on_fresh_seed(questions), "fresh demo seed"
        if regressions:
            cases, cases_note = _regressions_on_this_database()
    result, result_hybrid, note = None, None, ""
    if cranfield_dir is not None:
        folder = DEFAULT_CRANFIELD if cranfield_dir == "default" else Path(cranfield_dir)
        if (folder / "cran.all.1400").exists():
            result = cranfield.evaluate(folder, 0.9, 0.4)
            result_hybrid = cranfield.evaluate(folder, 0.9, 0.4, retrieval="hybrid")
        else:
            note = f"Cranfield skipped: no collection at {folder}"
    return EvaluationReport(source, report, result, note, cases, cases_note, hybrid, result_hybrid, answers, split)


def _both_retrievals(questions) -> tuple[QuestionReport, QuestionReport]:
    """The question set through BM25 alone and through hybrid retrieval, on the same indexes."""
    return evaluate_questions(questions, retrieval="bm25"), evaluate_questions(questions, retrieval="hybrid")


def _figure(result, attribute: str) -> str:
    return f"{getattr(result, attribute):6.3f}" if result is not None else "     —"


def _regressions_on_this_database() -> tuple[RegressionReport | None, str]:
    """Run the regression cases of the configured database, without creating one where there is none."""
    from portal.config import load_settings

    url = load_settings({"SECRET_KEY": "eval"})["DATABASE_URL"]
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///") :]).exists():
        return None, f"Regression cases skipped: there is no database at {url[len('sqlite:///') :]}"
    app = create_app({"SECRET_KEY": "eval", "CAIRN_REPAIR_INDEX_ON_START": True})
    with app.app_context():
        outcome = _regression_cases_if_migrated(app)
        app.extensions["cairn_indexes"].close()
    return outcome


def _regression_cases_if_migrated(app) -> tuple[RegressionReport | None, str]:
    from portal.migrate import pending

    if pending(app.config["DATABASE"]):  # the cases' table, or a column they need, is not there yet
        return None, "Regression cases skipped: the database is not migrated (run `cairn init`)."
    return evaluate_regression_cases(), ""


def _on_fresh_seed(questions) -> tuple[QuestionReport, QuestionReport, AnswerReport]:
    """Seed the demo into a throwaway data folder, so the figures do not depend on local edits."""
    from portal.demo.seed import seed_demo
    from portal.migrate import migrate

    with tempfile.TemporaryDirectory(prefix="cairn-eval-") as scratch:
        app = create_app(
            {
                "CAIRN_DATA_DIR": scratch,
                "DATABASE_URL": f"sqlite:///{scratch}/eval.db",
                "SECRET_KEY": "eval",
                "CAIRN_REPAIR_INDEX_ON_START": False,
                "CAIRN_RETRIEVAL": "hybrid",
            }
        )
        with app.app_context():
            migrate(app.config["DATABASE"])
            seed_demo()
            reports = (*_both_retrievals(questions), _answers(questions))
            app.extensions["cairn_indexes"].close()
    return reports


def _answers(questions) -> AnswerReport:
    """The answers through ``ask`` with the retrieval the portal is configured for (``CAIRN_RETRIEVAL``).

    The evaluation's indexes carry vectors so that both retrievals can be compared; the answers
    are those a user of this deployment would get.
    """
    from portal.config import load_settings
    from portal.search.service import indexes

    app_indexes, configured = indexes(), load_settings({"SECRET_KEY": "eval"})["CAIRN_RETRIEVAL"]
    previous, app_indexes.retrieval = app_indexes.retrieval, configured
    try:
        return evaluate_answers(questions)
    finally:
        app_indexes.retrieval = previous


def _percent(share: float | None) -> str:
    return "   —" if share is None else f"{share:4.0%}"


def _answer_lines(answers: AnswerReport, details: bool) -> list[str]:
    """The answer-level figures, overall, per split and per kind."""
    s = answers.summary()

    def row(name: str, f: dict) -> str:
        return (
            f"    {name:12} {f['questions']:3} questions  key fact {_percent(f['key_fact_stated'])} "
            f"(in passages {_percent(f['key_fact_in_passages'])})  "
            f"cited {_percent(f['expected_document_cited'])}  "
            f"no evidence: unanswerable {_percent(f['unanswerable_no_evidence'])}, "
            f"answerable {_percent(f['answerable_wrongly_no_evidence'])}  p95 {f['ask_p95_ms']:.0f} ms"
        )

    lines = [
        "Answers through ask (a preferred-mode agent granted the question's packs, no model):",
        f"  key fact stated (every answer_contains string, case-insensitive): "
        f"{_percent(s['key_fact_stated'])} of answerable questions",
        f"  key fact in the passages given (the most the answer could state): {_percent(s['key_fact_in_passages'])}",
        f"  an expected document cited: {_percent(s['expected_document_cited'])} of answerable questions",
        f"  unanswerable answered 'no evidence': {_percent(s['unanswerable_no_evidence'])}",
        f"  answerable wrongly answered 'no evidence': {_percent(s['answerable_wrongly_no_evidence'])}",
        f"  ask p95: {s['ask_p95_ms']:.0f} ms",
    ]
    lines += [row(f"split {name}", f) for name, f in s["by_split"].items()]
    lines += [row(kind, f) for kind, f in s["by_kind"].items()]
    if details:
        for o in answers.outcomes:
            if o.answerable and not (o.key_fact_stated and o.expected_cited) or not o.answerable and not o.no_evidence:
                lines.append(
                    f"  answer {o.id} [{o.kind}] {o.question} — wanted {o.answer_contains or 'no evidence'}, "
                    f"got {o.answer[:160]!r}"
                )
    return lines
