"""API tokens, and the text hash a run's receipt names in its grounding references.

- ``api_token``: one row per bearer token of the JSON API (``/api/v1``), holding
  only the SHA-256 of its secret, its first characters, its name, and when it
  was made, last used and revoked (portal/api/tokens.py).
- ``run_reference.sha256``: the SHA-256 of the full text of the revision a
  passage was issued from, so ``document:<id>@<version>#<sha256>:L<a>-L<b>``
  outlives the revision. Receipts written before this migration get it from
  their revision while that is still kept; the others stay without one.
"""

from portal.migrate import run_sql

SCHEMA = """
CREATE TABLE api_token (
    id {pk},
    user_id INTEGER NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
    name VARCHAR(80) NOT NULL,
    shown VARCHAR(12) NOT NULL,
    secret_sha256 VARCHAR(64) NOT NULL,
    created_at {ts} NOT NULL,
    last_used_at {ts},
    revoked_at {ts},
    revoked_by_id INTEGER REFERENCES "user" (id) ON DELETE SET NULL
);
CREATE UNIQUE INDEX api_token_secret_sha256 ON api_token (secret_sha256);
CREATE INDEX api_token_user_id ON api_token (user_id);
CREATE INDEX api_token_revoked_by_id ON api_token (revoked_by_id);
ALTER TABLE run_reference ADD COLUMN sha256 VARCHAR(64)
"""

BACKFILL = """
UPDATE run_reference SET sha256 = (
    SELECT revision.sha256 FROM revision
    WHERE revision.document_id = run_reference.document_pk AND revision.version = run_reference.version)
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
    db.execute_sql(BACKFILL)
