"""Users, companies, packs, documents, revisions, figures and passages."""

from portal.migrate import run_sql

SCHEMA = """
CREATE TABLE company (
    id {pk},
    name VARCHAR(255) NOT NULL UNIQUE
);
CREATE TABLE "user" (
    id {pk},
    email VARCHAR(255) NOT NULL UNIQUE,
    password_hash VARCHAR(255) NOT NULL,
    roles VARCHAR(255) NOT NULL DEFAULT '',
    company_id INTEGER REFERENCES company (id) ON DELETE SET NULL,
    active {bool} NOT NULL DEFAULT TRUE,
    created_at {ts} NOT NULL
);
CREATE TABLE pack (
    id {pk},
    slug VARCHAR(255) NOT NULL UNIQUE,
    title VARCHAR(255) NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    kind VARCHAR(255) NOT NULL DEFAULT 'generic',
    company_id INTEGER REFERENCES company (id) ON DELETE RESTRICT,
    index_generation INTEGER NOT NULL DEFAULT 0,
    created_at {ts} NOT NULL
);
CREATE TABLE document (
    id {pk},
    pack_id INTEGER NOT NULL REFERENCES pack (id) ON DELETE CASCADE,
    doc_id VARCHAR(80) NOT NULL,
    title VARCHAR(255) NOT NULL,
    kind VARCHAR(255) NOT NULL DEFAULT 'markdown',
    current_version INTEGER NOT NULL DEFAULT 0,
    visibility VARCHAR(255) NOT NULL DEFAULT 'staff',
    reader_roles VARCHAR(255) NOT NULL DEFAULT '',
    redacted {bool} NOT NULL DEFAULT FALSE,
    created_at {ts} NOT NULL,
    updated_at {ts} NOT NULL,
    deleted_at {ts}
);
CREATE UNIQUE INDEX document_pack_id_doc_id ON document (pack_id, doc_id);
CREATE TABLE revision (
    id {pk},
    document_id INTEGER NOT NULL REFERENCES document (id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    text TEXT NOT NULL,
    sha256 VARCHAR(64) NOT NULL,
    original_name VARCHAR(255),
    original_path VARCHAR(255),
    original_sha256 VARCHAR(64),
    original_content_type VARCHAR(255),
    original_size INTEGER,
    pages INTEGER,
    images_not_kept TEXT NOT NULL DEFAULT '{{}}',
    created_by_id INTEGER REFERENCES "user" (id) ON DELETE SET NULL,
    created_at {ts} NOT NULL
);
CREATE UNIQUE INDEX revision_document_id_version ON revision (document_id, version);
CREATE TABLE figure (
    id {pk},
    revision_id INTEGER NOT NULL REFERENCES revision (id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    label VARCHAR(400) NOT NULL,
    path VARCHAR(255) NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL
);
CREATE UNIQUE INDEX figure_revision_id_number ON figure (revision_id, number);
CREATE TABLE passage (
    id {pk},
    revision_id INTEGER NOT NULL REFERENCES revision (id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    heading_path TEXT NOT NULL DEFAULT '',
    page INTEGER
);
CREATE UNIQUE INDEX passage_revision_id_ordinal ON passage (revision_id, ordinal)
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
