"""The outbox of index work: one row per change to a pack's passages, until its index shows it.

A row is written in the same transaction as the change it records (upload, edit,
delete), with the pack generation that change made; it is deleted only after a
Lucene commit that shows the document as the database has it. Whatever a crash
interrupts is therefore still listed here, and the next start indexes it
(portal/search/service.py, ``catch_up``).
"""

from portal.migrate import run_sql

SCHEMA = """
CREATE TABLE index_pending (
    id {pk},
    pack_id INTEGER NOT NULL REFERENCES pack (id) ON DELETE CASCADE,
    doc_id VARCHAR(80) NOT NULL,
    generation INTEGER NOT NULL
);
CREATE UNIQUE INDEX index_pending_pack_id_generation ON index_pending (pack_id, generation)
"""
# Before this migration a killed ingest could leave an index stamped with the newest generation
# but missing documents, and nothing can tell which. A generation that no pending row explains
# makes the next check (server start, `cairn ingest`/`search`/`ask`) rebuild each existing
# pack's index once.
REBUILD_EVERY_INDEX = "UPDATE pack SET index_generation = index_generation + 1"


def up(migrator, db):
    run_sql(db, SCHEMA)
    db.execute_sql(REBUILD_EVERY_INDEX)
