"""Each user gets a session token: the signed-in cookie names it instead of the user id.

Signing out or a new password replaces the token, so every cookie issued before
no longer names anyone. Existing users get a fresh token here (their current
sessions end once, at the upgrade).
"""

import secrets

from portal.migrate import run_sql


def up(migrator, db):
    run_sql(db, """ALTER TABLE "user" ADD COLUMN session_token VARCHAR(64) NOT NULL DEFAULT ''""")
    for (user_id,) in db.execute_sql('SELECT id FROM "user"').fetchall():
        db.execute_sql(
            f'UPDATE "user" SET session_token = {db.param} WHERE id = {db.param}', (secrets.token_urlsafe(32), user_id)
        )
    run_sql(db, """CREATE UNIQUE INDEX user_session_token ON "user" (session_token)""")
