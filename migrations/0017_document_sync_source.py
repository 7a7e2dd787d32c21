"""Where a synced document came from: ``cairn sync`` records, per document, the folder and the
file's path in it, the SHA-256 of the file's bytes, when it was synced and the version that sync
made. A document with no folder was uploaded by hand, and a sync never touches it; one whose
current version is not the synced one was edited in the browser since, and a sync reports the
conflict instead of overwriting it.
"""

from peewee import CharField, DateTimeField, IntegerField, TextField


def up(migrator, db):
    migrator.migrate(
        migrator.add_column("document", "sync_folder", TextField(null=True)),
        migrator.add_column("document", "sync_path", TextField(null=True)),
        migrator.add_column("document", "sync_sha256", CharField(max_length=64, null=True)),
        migrator.add_column("document", "synced_at", DateTimeField(null=True)),
        migrator.add_column("document", "synced_version", IntegerField(null=True)),
    )
