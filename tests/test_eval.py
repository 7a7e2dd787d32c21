"""`cairn eval` on a small corpus of the suite's own: metrics, no-evidence share, and the metric maths."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from portal.evaluation.metrics import average_precision, ndcg_at, recall_at
from portal.evaluation.questions import load_questions, question_problem

ROOT = Path(__file__).resolve().parents[1]


def test_metrics():
    assert recall_at(["a", "b", "c"], {"a", "z"}, 8) == 0.5
    assert ndcg_at(["a", "b"], {"a": 1.0}, 10) == 1.0
    assert ndcg_at(["b", "a"], {"a": 1.0}, 10) == pytest.approx(1 / 1.5849625)
    assert ndcg_at(["x"], {}, 10) == 0.0
    assert average_precision(["a", "x", "b"], {"a", "b"}) == pytest.approx((1 + 2 / 3) / 2)


ANSWERABLE = {
    "id": "a",
    "question": "Which report deletes old spool requests?",
    "kind": "procedure",
    "packs": ["notes"],
    "expected": ["spool"],
    "answer_contains": ["RSPO1041"],
    "split": "tune",
}
UNANSWERABLE = {
    "id": "u",
    "question": "What is the resolution target for P5 tickets?",
    "kind": "unanswerable",
    "packs": ["notes"],
    "expected": [],
    "answer_contains": [],
    "split": "check",
    "adjacent": True,
}


@pytest.mark.parametrize(
    "question, problem",
    [
        (ANSWERABLE, None),
        (UNANSWERABLE, None),
        ({**ANSWERABLE, "kind": "table_row"}, None),
        ({key: value for key, value in ANSWERABLE.items() if key != "split"}, None),
        ({key: value for key, value in ANSWERABLE.items() if key != "answer_contains"}, "lacks answer_contains"),
        ({**ANSWERABLE, "answer_contains": []}, "needs 1 to 3"),
        ({**ANSWERABLE, "answer_contains": ["a", "b", "c", "d"]}, "needs 1 to 3"),
        ({**ANSWERABLE, "answer_contains": [""]}, "non-empty strings"),
        ({**ANSWERABLE, "expected": []}, "expects no document"),
        ({**ANSWERABLE, "kind": "trivia"}, "unknown kind"),
        ({**ANSWERABLE, "split": "train"}, "unknown split"),
        ({**ANSWERABLE, "adjacent": True}, "adjacent"),
        ({**UNANSWERABLE, "answer_contains": ["P5"]}, "is unanswerable but"),
        ({**UNANSWERABLE, "expected": ["spool"]}, "is unanswerable but"),
    ],
)
def test_question_rules(question, problem):
    found = question_problem(question)
    assert (found is None) if problem is None else (problem in found), found


def test_load_questions_names_the_question_it_refuses(tmp_path):
    path = tmp_path / "questions.json"
    path.write_text(json.dumps([ANSWERABLE, {**UNANSWERABLE, "id": "u7", "kind": "unanswerable", "expected": ["x"]}]))
    with pytest.raises(ValueError, match="question u7 is unanswerable"):
        load_questions(path)


@pytest.mark.parametrize(
    "content, message",
    [
        (json.dumps([{**ANSWERABLE, "kind": "yesno"}]), "has unknown kind 'yesno'"),
        ('[{"id": "a",', "not JSON (Expecting property name"),
        (json.dumps({"questions": [ANSWERABLE]}), "a JSON list of objects"),
        (b"\xff\xfe[]", "not UTF-8 text"),
    ],
)
def test_cairn_eval_names_what_is_wrong_with_a_question_file(tmp_path, content, message):
    from click.testing import CliRunner

    from portal.cli.evaluate import evaluate

    path = tmp_path / "questions.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = CliRunner().invoke(evaluate, ["--questions", str(path), "--no-cranfield", "--no-regressions"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: {path}: ") and message in result.output
    assert "Traceback" not in result.output


def test_cairn_eval_on_a_small_corpus(tmp_path):
    # PYTHONPATH: the subprocess runs this checkout's code, whatever the installed package points at
    env = {
        **os.environ,
        "CAIRN_DATA_DIR": str(tmp_path / "data"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    env.pop("DATABASE_URL", None)
    run = lambda *args: subprocess.run(
        [sys.executable, "-m", "portal.cli", *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180
    )
    assert run("init").returncode == 0
    assert run("packs", "create", "notes", "--title", "Notes").returncode == 0
    (tmp_path / "spool.md").write_text("# Spool cleanup\n\nRSPO1041 deletes old spool requests nightly.\n")
    (tmp_path / "locks.md").write_text("# Lock entries\n\nSM12 lists lock entries; delete only orphaned ones.\n")
    assert run("ingest", "notes", str(tmp_path / "spool.md"), str(tmp_path / "locks.md")).returncode == 0
    questions = [
        {
            "id": "a",
            "question": "Which report deletes old spool requests?",
            "kind": "exact_id",
            "packs": ["notes"],
            "expected": ["spool"],
            "answer_contains": ["RSPO1041"],
            "split": "tune",
        },
        {
            "id": "b",
            "question": "Where do I see orphaned locks?",
            "kind": "paraphrase",
            "packs": ["notes"],
            "expected": ["locks"],
            "answer_contains": ["SM12"],
            "split": "check",
        },
        {
            "id": "c",
            "question": "What does the canteen cook on Fridays?",
            "kind": "unanswerable",
            "packs": ["notes"],
            "expected": [],
            "answer_contains": [],
            "adjacent": False,
        },
    ]
    (tmp_path / "questions.json").write_text(json.dumps(questions))
    result = run("eval", "--questions", str(tmp_path / "questions.json"), "--current", "--no-cranfield", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)["questions"]
    assert summary["questions"] == 3
    assert summary["recall@8"] == 1.0 and summary["ndcg@10"] == 1.0
    assert summary["no_evidence_share_of_unanswerable"] == 1.0
    hybrid = json.loads(result.stdout)["questions_hybrid"]
    assert hybrid["questions"] == 3 and hybrid["no_evidence_share_of_unanswerable"] == 1.0
    assert json.loads(result.stdout)["dense_calibration"]["unanswerable_best_max"] < 0.25
    answers = json.loads(result.stdout)["answers"]
    assert (answers["questions"], answers["key_fact_stated"], answers["expected_document_cited"]) == (3, 1.0, 1.0)
    assert (answers["unanswerable_no_evidence"], answers["answerable_wrongly_no_evidence"]) == (1.0, 0.0)
    assert answers["key_fact_in_passages"] == 1.0
    assert answers["ask_p95_ms"] > 0 and set(answers["by_split"]) == {"tune", "check", "unsplit"}
    assert answers["by_kind"]["unanswerable"]["unanswerable_no_evidence"] == 1.0
    text = run("eval", "--questions", str(tmp_path / "questions.json"), "--current", "--no-cranfield").stdout
    assert "BM25 R@8 nDCG@10   hybrid R@8 nDCG@10" in text
    assert "all answerable                       1.000  1.000" in text
    assert "no evidence found': 100% (hybrid 100%)" in text
    assert "key fact stated (every answer_contains string, case-insensitive): 100%" in text
    tune = json.loads(
        run(
            "eval",
            "--questions",
            str(tmp_path / "questions.json"),
            "--current",
            "--no-cranfield",
            "--split",
            "tune",
            "--json",
        ).stdout
    )
    assert (tune["split"], tune["questions"]["questions"], tune["answers"]["questions"]) == ("tune", 1, 1)
    # the evaluation's agents and runs are not kept
    listed = run("agents", "list").stdout
    assert "cairn-eval" not in listed


def test_regression_report_counts_both_kinds_of_case():
    from portal.evaluation.regressions import CaseOutcome, RegressionReport

    report = RegressionReport(
        [
            CaseOutcome(1, 10, "desk", "How do I delete old spool requests?", "ops/spool", rank=2),
            CaseOutcome(2, 11, "desk", "stale locks", "ops/locks"),
            CaseOutcome(3, 12, "desk", "karaoke?", "no evidence", "no_evidence", said_no_evidence=True),
            CaseOutcome(4, 13, "desk", "P4 target?", "no evidence", "no_evidence", said_no_evidence=False),
            CaseOutcome(5, 14, "gone", "anything", "no evidence", "no_evidence", skipped="the agent was deleted"),
        ]
    )
    summary = report.summary()
    assert {
        k: summary[k]
        for k in (
            "cases",
            "passed",
            "failed",
            "skipped",
            "found",
            "missed",
            "said_no_evidence",
            "answered_instead_of_no_evidence",
        )
    } == {
        "cases": 5,
        "passed": 2,
        "failed": 2,
        "skipped": 1,
        "found": 1,
        "missed": 1,
        "said_no_evidence": 1,
        "answered_instead_of_no_evidence": 1,
    }
    assert [item["passed"] for item in summary["items"]] == [True, False, True, False, False]
    lines = report.as_text()
    assert lines[0].endswith(
        "5 cases, 1 found in the agent's top 8, 1 missed, 1 said no evidence, "
        "1 answered instead of no evidence, 1 skipped"
    )
    assert "said no evidence" in lines[3] and "ANSWERED" in lines[4]
    assert lines[4].endswith("expected: no evidence") and "cannot be checked (the agent was deleted)" in lines[5]


def test_key_fact_in_the_passages_reads_them_as_the_answerer_copies_them():
    from portal.evaluation.answers import AnswerOutcome

    def outcome(issued_text: str) -> AnswerOutcome:
        return AnswerOutcome(
            id="q",
            kind="exact_id",
            split="",
            question="?",
            expected=["d"],
            answer_contains=["RSPO1041", "every night"],
            answer="",
            cited_documents=[],
            ms=1.0,
            issued_text=issued_text,
        )

    assert outcome("Run **RSPO1041**\nevery   night.").key_fact_issued
    assert not outcome("Run RSPO1041 weekly.").key_fact_issued  # one string missing: a retrieval miss
    assert not outcome("Run RSPO1041 weekly.").key_fact_stated


def test_a_share_is_printed_as_it_is_not_rounded_twice():
    """1 answerable question refused of 68 is 1.5 %: rounded to three places first (0.015), it printed as 2 %."""
    from portal.evaluation.answers import _share
    from portal.evaluation.runner import _percent

    assert _percent(_share([True] + [False] * 67)).strip() == "1%"
