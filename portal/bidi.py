"""Unicode's bidirectional reordering controls: what Cairn shows is in the order it is stored.

Embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) reorder how the text after them
is shown, to the end of its paragraph: "rm -rf /tmp/old" can be stored, searched and given to a
model as one thing and read as another ("Trojan Source"), and a question or a title holding one
reorders the rest of the line a list shows it in (the time, the rating, the agent after it).
Nothing a person writes needs them. The marks (U+200E, U+200F, U+061C) only place neutral
characters, and right-to-left text needs those: they stay.

The one set, for uploaded text (``ingest.figures.strip_control_characters``), file names
(``documents.filenames``) and every text sent to the portal (``request_text``).
"""

from __future__ import annotations

BIDI_REORDERING = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
