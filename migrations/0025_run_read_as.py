"""How a chat turn that leaned on the one before was read (``run.read_as``).

A question leaning on the turn before it in its conversation ("And the root cause?", "Who reported it?") is read
as asking about what that turn was about: "And the root cause (INC-2026-0203)?" (``portal.answers.follow_up``). The
run keeps that reading; the chat and the run record show it, and a regression case or another agent asked the same
question is asked it. Runs stored before were read as typed: theirs is empty.
"""

from portal.migrate import run_sql

SCHEMA = """
ALTER TABLE run ADD COLUMN read_as TEXT NOT NULL DEFAULT ''
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
