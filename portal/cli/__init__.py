"""The ``cairn`` command line: set-up, users, API tokens, packs, ingest, search, the index, agents, the demo and eval.

One module per group of commands; this one only gathers them under ``main``, the ``cairn``
console script (pyproject.toml). Built on Flask's CLI support (``support.CairnGroup``), so a
test runs a command in process with ``app.test_cli_runner().invoke(main, [...])``.
"""

from __future__ import annotations

import click

from portal.cli import agents, demo, evaluate, packs, server, tokens, users
from portal.cli.support import CairnGroup, fail


@click.group(cls=CairnGroup, context_settings={"help_option_names": ["-h", "--help"]})
def main():
    """Cairn: knowledge packs, BM25 search and cited answers."""
    from portal.config import ConfigError, check_settings, environment_settings

    try:
        check_settings(environment_settings())
    except ConfigError as error:
        fail(f"{error}\nCairn does not start until this setting is fixed.")


for command in (
    server.init,
    users.users,
    tokens.tokens,
    packs.packs,
    packs.ingest,
    packs.sync,
    packs.search,
    packs.index,
    demo.seed_demo,
    evaluate.evaluate,
    server.serve,
    agents.agents,
    agents.ask,
):
    main.add_command(command)


if __name__ == "__main__":
    main()
