"""When a Describe images job last moved (``describe_job.updated_at``).

A step claims a figure, then waits for the vision model; a job whose last figures are taken but not all
described is either still being described by another request or was left by a killed one. Only the time
of its last move tells the two apart: a job unmoved for longer than a model call may take was abandoned
(portal/describing/service.py). Jobs stored before have none: their start time stands for it.
"""

from portal.migrate import run_sql

SCHEMA = """
ALTER TABLE describe_job ADD COLUMN updated_at {ts}
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
