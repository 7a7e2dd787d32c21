"""What a run's answer rests on, the packs it searched, and "should have said no evidence" cases.

- ``run.answer_basis``: ``documents``, ``no_evidence``, ``model_only`` (open mode,
  the model answered without evidence) or ``not_accepted``. Existing runs are
  read from what they stored: the fixed "no evidence" and "stopped" answers are
  ``no_evidence``, the fixed rejection is ``not_accepted``, and a model answer
  given with no reference issued is ``model_only`` (that is what it was).
- ``run.searched_packs``: JSON list of ``{"slug", "title"}``, the packs searched
  at the time. Existing runs get their agent's current grants (the best that is
  known), or an empty list when the agent is gone.
- ``regression_case.kind``: ``expected_source`` (every existing case) or
  ``no_evidence``; a ``no_evidence`` case names no document, so the document
  columns become nullable.

The answer texts are spelled out here rather than imported: a migration must
keep meaning what it meant when it ran.
"""

import json

from playhouse.migrate import migrate as apply_operations

from portal.migrate import run_sql

NO_EVIDENCE_ANSWER = "No evidence found in the granted packs for this question."
STOPPED_NO_PASSAGE_ANSWER = "Stopped before the model was called: no acceptable passage was found in the granted packs."
NOT_ACCEPTED_ANSWER = (
    "The answer was not accepted: it cites none of its references, and this agent "
    "requires every answer to cite the granted packs."
)

SCHEMA = """
ALTER TABLE run ADD COLUMN answer_basis VARCHAR(16) NOT NULL DEFAULT 'documents';
ALTER TABLE run ADD COLUMN searched_packs TEXT NOT NULL DEFAULT '[]';
ALTER TABLE regression_case ADD COLUMN kind VARCHAR(16) NOT NULL DEFAULT 'expected_source'
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
    apply_operations(
        *(
            migrator.drop_not_null("regression_case", column)
            for column in ("pack_slug", "document_pk", "document_id", "document_title")
        )
    )
    param = db.param
    db.execute_sql(
        f"UPDATE run SET answer_basis = 'no_evidence' WHERE answer IN ({param}, {param})",
        (NO_EVIDENCE_ANSWER, STOPPED_NO_PASSAGE_ANSWER),
    )
    db.execute_sql(f"UPDATE run SET answer_basis = 'not_accepted' WHERE answer = {param}", (NOT_ACCEPTED_ANSWER,))
    db.execute_sql(
        "UPDATE run SET answer_basis = 'model_only' WHERE answer_basis = 'documents' "
        "AND model_called AND model <> 'extractive' "
        "AND NOT EXISTS (SELECT 1 FROM run_reference WHERE run_reference.run_id = run.id)"
    )
    grants: dict[int, list[dict]] = {}
    for agent_id, slug, title in db.execute_sql(
        "SELECT agent_grant.agent_id, pack.slug, pack.title FROM agent_grant "
        "JOIN pack ON pack.id = agent_grant.pack_id ORDER BY agent_grant.agent_id, pack.slug"
    ).fetchall():
        grants.setdefault(agent_id, []).append({"slug": slug, "title": title})
    for agent_id, packs in grants.items():
        db.execute_sql(
            f"UPDATE run SET searched_packs = {param} WHERE agent_id = {param}", (json.dumps(packs), agent_id)
        )
