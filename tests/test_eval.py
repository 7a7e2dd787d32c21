"""`cairn eval` on a small corpus of the suite's own: metrics, no-evidence share, and the metric maths."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from portal.evaluation.metrics import average_precision, ndcg_at, recall_at


def test_metrics():
    assert recall_at(["a", "b", "c"], {"a", "z"}, 8) == 0.5
    assert ndcg_at(["a", "b"], {"a": 1.0}, 10) == 1.0
    assert ndcg_at(["b", "a"], {"a": 1.0}, 10) == pytest.approx(1 / 1.5849625)
    assert ndcg_at(["x"], {}, 10) == 0.0
    assert average_precision(["a", "x", "b"], {"a", "b"}) == pytest.approx((1 + 2 / 3) / 2)


def test_cairn_eval_on_a_small_corpus(tmp_path):
    env = {**os.environ, "CAIRN_DATA_DIR": str(tmp_path / "data")}
    env.pop("DATABASE_URL", None)
    run = lambda *args: subprocess.run([sys.executable, "-m", "portal.cli", *args], env=env, cwd=tmp_path,
                                       capture_output=True, text=True, timeout=180)
    assert run("init").returncode == 0
    assert run("packs", "create", "notes", "--title", "Notes").returncode == 0
    (tmp_path / "spool.md").write_text("# Spool cleanup\n\nRSPO1041 deletes old spool requests nightly.\n")
    (tmp_path / "locks.md").write_text("# Lock entries\n\nSM12 lists lock entries; delete only orphaned ones.\n")
    assert run("ingest", "notes", str(tmp_path / "spool.md"), str(tmp_path / "locks.md")).returncode == 0
    questions = [
        {"id": "a", "question": "Which report deletes old spool requests?", "kind": "exact_id",
         "packs": ["notes"], "expected": ["spool"]},
        {"id": "b", "question": "Where do I see orphaned locks?", "kind": "paraphrase",
         "packs": ["notes"], "expected": ["locks"]},
        {"id": "c", "question": "What does the canteen cook on Fridays?", "kind": "unanswerable",
         "packs": ["notes"], "expected": []},
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
    text = run("eval", "--questions", str(tmp_path / "questions.json"), "--current", "--no-cranfield").stdout
    assert "BM25 R@8 nDCG@10   hybrid R@8 nDCG@10" in text
    assert "all answerable                       1.000  1.000" in text
    assert "no evidence found': 100% (hybrid 100%)" in text
