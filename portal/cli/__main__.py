"""``python -m portal.cli``: the ``cairn`` command without the installed script."""

from portal.cli import main

main()
