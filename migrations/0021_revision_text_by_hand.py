"""``revision.text_by_hand``: the revision's text was written in the browser (an edit, or figure
descriptions), not read from a file; a copy made for a change of who may read keeps its source's.

An upload that replaces such a text says so (docs/decisions.md, "An upload over text edited in the
browser"). Revisions made before this migration cannot be told apart and count as read from a file.
"""

from portal.migrate import run_sql

SCHEMA = """
ALTER TABLE revision ADD COLUMN text_by_hand {bool} NOT NULL DEFAULT FALSE
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
