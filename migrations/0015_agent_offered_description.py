"""Agents are offered when ready, and say what they are for.

- ``agent.offered``: members see an agent in the support chat only once an
  administrator or builder has offered it; a new agent is a draft. Every
  existing agent was already offered (it appeared in the chat), so it stays so.
- ``agent.description``: a short line the chat shows when a member chooses an agent.
"""

from portal.migrate import run_sql

SCHEMA = """
ALTER TABLE agent ADD COLUMN offered {bool} NOT NULL DEFAULT FALSE;
ALTER TABLE agent ADD COLUMN description VARCHAR(300) NOT NULL DEFAULT ''
"""

EVERY_EXISTING_AGENT_STAYS_OFFERED = "UPDATE agent SET offered = TRUE"


def up(migrator, db):
    run_sql(db, SCHEMA)
    db.execute_sql(EVERY_EXISTING_AGENT_STAYS_OFFERED)
