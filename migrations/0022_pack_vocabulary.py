"""``pack.vocabulary``: the words the pack's readers type for what its documents name otherwise, one entry a line
(``portal.search.vocabulary``); ``pack.updated_at``: when its title, description or vocabulary last changed, so a
save based on an older form is refused instead of undoing another administrator's change. Packs made before this
migration have no vocabulary and no time of change yet.
"""

from portal.migrate import run_sql

SCHEMA = """
ALTER TABLE pack ADD COLUMN vocabulary TEXT NOT NULL DEFAULT '';
ALTER TABLE pack ADD COLUMN updated_at {ts}
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
