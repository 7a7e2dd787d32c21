"""A deleted pack keeps its row as a tombstone: ``pack.deleted_at``.

Deleting a pack removes its documents' revisions, passages, figures, files,
index and grants, but the row stays (like a deleted document's), so its slug is
never given to another pack and its id never reused for another pack's files.
"""

from peewee import DateTimeField


def up(migrator, db):
    migrator.migrate(migrator.add_column("pack", "deleted_at", DateTimeField(null=True)))
