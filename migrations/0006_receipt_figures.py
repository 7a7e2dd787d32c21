"""Figures a run's receipt keeps after their revision is purged.

A purge (more than 10 newer revisions) deletes a revision's figure rows and
files; receipts cite figures by id. Each figure a receipt cites is copied
first and recorded here under that id, by plain integers like the receipt
itself. Deleting the document deletes these rows and their files too.
"""

from portal.migrate import run_sql

SCHEMA = """
CREATE TABLE receipt_figure (
    id {pk},
    figure_id INTEGER NOT NULL,
    document_pk INTEGER NOT NULL,
    path VARCHAR(255) NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL
);
CREATE UNIQUE INDEX receipt_figure_figure_id ON receipt_figure (figure_id);
CREATE INDEX receipt_figure_document_pk ON receipt_figure (document_pk)
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
