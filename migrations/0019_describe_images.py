"""Describing figures with a vision model: the job that collects the descriptions, and a run's cost.

- ``describe_job``: one request to describe a document's figures, one figure per step,
  holding the descriptions until they are written together as a new revision
  (portal/describing/service.py).
- ``run.cost_microusd``: what a priced call cost, in millionths of a US dollar; the
  monthly spend cap of describing sums it.
"""

from portal.migrate import run_sql

SCHEMA = """
CREATE TABLE describe_job (
    id {pk},
    document_id INTEGER NOT NULL REFERENCES document (id) ON DELETE CASCADE,
    user_id INTEGER REFERENCES "user" (id) ON DELETE SET NULL,
    base_version INTEGER NOT NULL,
    figures TEXT NOT NULL,
    done INTEGER NOT NULL,
    descriptions TEXT NOT NULL,
    notes TEXT NOT NULL,
    status VARCHAR(16) NOT NULL,
    message TEXT NOT NULL,
    created_at {ts} NOT NULL,
    finished_at {ts}
);
CREATE INDEX describe_job_document_id ON describe_job (document_id);
CREATE INDEX describe_job_user_id ON describe_job (user_id);
ALTER TABLE run ADD COLUMN cost_microusd INTEGER
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
