"""The words of a run's question that no passage of the searched packs contained.

- ``run.absent_words``: JSON list of the words as the user wrote them ("VPN",
  "INC-2026-0427"), shown with the answer (``portal.answers.evidence.absent_words``).
  Runs stored before are not searched again: their list is empty.
"""

from portal.migrate import run_sql

SCHEMA = """
ALTER TABLE run ADD COLUMN absent_words TEXT NOT NULL DEFAULT '[]'
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
