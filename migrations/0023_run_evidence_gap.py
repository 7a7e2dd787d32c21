"""Why a run found no evidence, besides the words no passage holds (``run.absent_words``).

- ``run.evidence_gap``: JSON object from ``portal.answers.evidence.Choice.gap``: a name no passage found
  names, a sibling the closest passages are about instead ("TW10, not TW20"), a value none gives, an outcome
  none reports; the "no evidence" note says it. Runs stored before have none: their note says what it said.
"""

from portal.migrate import run_sql

SCHEMA = """
ALTER TABLE run ADD COLUMN evidence_gap TEXT NOT NULL DEFAULT '{{}}'
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
