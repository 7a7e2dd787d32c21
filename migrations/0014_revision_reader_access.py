"""Each revision keeps its own reader access; a title set by hand.

- ``revision.visibility`` and ``revision.reader_roles``: who could read the
  revision directly while it was the current one (SPEC 2: reading an older
  revision needs permission under both its own and the current restrictions).
  The current revision always carries the document's access; existing
  revisions get their document's access now, the best that is known.
- ``document.title_by_hand``: the title was edited on the document page, so a
  new version's file no longer renames the document.
"""

from portal.migrate import run_sql

SCHEMA = """
ALTER TABLE revision ADD COLUMN visibility VARCHAR(255) NOT NULL DEFAULT 'staff';
ALTER TABLE revision ADD COLUMN reader_roles TEXT NOT NULL DEFAULT '[]';
ALTER TABLE document ADD COLUMN title_by_hand {bool} NOT NULL DEFAULT FALSE
"""

BACKFILL = """
UPDATE revision SET
    visibility = (SELECT document.visibility FROM document WHERE document.id = revision.document_id),
    reader_roles = (SELECT document.reader_roles FROM document WHERE document.id = revision.document_id)
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
    db.execute_sql(BACKFILL)
