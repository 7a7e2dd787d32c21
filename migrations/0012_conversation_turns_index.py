"""A conversation's turns in order, from an index: ``run (conversation_id, created_at, id)``.

The chat shows a conversation's latest turns and pages older ones by their
place in that order (a keyset on ``created_at, id``), so a page reads only its
own rows however long the conversation is. The index replaces
``run_conversation_id``: it starts with the same column, so deleting a
conversation still finds its runs through an index.
"""


def up(migrator, db):
    migrator.migrate(
        migrator.drop_index("run", "run_conversation_id"),
        migrator.add_index("run", ("conversation_id", "created_at", "id")),
    )
