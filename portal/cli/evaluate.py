"""``cairn eval``: retrieval and answer quality (portal/evaluation/)."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("eval")
@click.option(
    "--questions",
    "questions_path",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="Question set (JSON). Default: the demo set, run on a fresh temporary seed.",
)
@click.option("--current", is_flag=True, help="Evaluate against this database instead of a fresh demo seed.")
@click.option(
    "--cranfield",
    "cranfield_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Cranfield folder (default: ../shared/corpora/cranfield when present).",
)
@click.option("--no-cranfield", is_flag=True, help="Skip the Cranfield collection.")
@click.option("--json", "as_json", is_flag=True)
@click.option("--details", is_flag=True, help="List every question that missed.")
@click.option("--no-regressions", is_flag=True, help="Skip the regression cases recorded from answer feedback.")
@click.option(
    "--regressions-only",
    is_flag=True,
    help="Run only the regression cases (this database): is each expected document in the top 8 now?",
)
@click.option(
    "--split", type=click.Choice(["tune", "check"]), help="Only the questions of this half of the question set."
)
def evaluate(
    questions_path, current, cranfield_dir, no_cranfield, as_json, details, no_regressions, regressions_only, split
):
    """Retrieval and answer quality: Recall@8 and nDCG@10 of a question set, its answers through `ask`
    (key fact stated, expected document cited, "no evidence" right and wrong, p95 latency), Cranfield
    next to plain Lucene, and the regression cases recorded from answer feedback."""
    from portal.cli.support import fail, say
    from portal.evaluation.questions import QuestionSetError
    from portal.evaluation.runner import run_evaluation

    try:
        report = run_evaluation(
            Path(questions_path) if questions_path else None,
            current,
            None if no_cranfield else (Path(cranfield_dir) if cranfield_dir else "default"),
            regressions=not no_regressions,
            only_regressions=regressions_only,
            split=split,
        )
    except QuestionSetError as error:
        fail(str(error))
    say(json.dumps(report.as_json()) if as_json else report.as_text(details))
