"""Folder sync: where a document came from and what sync last saw of it (``cairn sync``).

``document.source_folder`` / ``source_path``: the folder (absolute) and the file's path in
it; ``source_sha256``: the file's bytes as last synced; ``synced_version``: the version
sync wrote or saw, so a version made since (in the browser) is a conflict, never
overwritten; ``synced_at``: when. All NULL for documents uploaded by hand.
"""

from portal.migrate import run_sql

SCHEMA = """
ALTER TABLE document ADD COLUMN source_folder TEXT;
ALTER TABLE document ADD COLUMN source_path TEXT;
ALTER TABLE document ADD COLUMN source_sha256 VARCHAR(64);
ALTER TABLE document ADD COLUMN synced_version INTEGER;
ALTER TABLE document ADD COLUMN synced_at {ts};
CREATE INDEX document_pack_id_source_folder ON document (pack_id, source_folder)
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
