"""The question a chat turn was read after (``run.read_with``).

A question leaning on the one before it in its conversation ("And the root cause?", "Who reported it?") is read
after that question (``portal.answers.follow_up``); the run keeps which one, and the chat says so under the answer.
Runs stored before were read alone: theirs is empty.
"""

from portal.migrate import run_sql

SCHEMA = """
ALTER TABLE run ADD COLUMN read_with TEXT NOT NULL DEFAULT ''
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
