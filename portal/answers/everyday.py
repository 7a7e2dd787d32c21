"""Whether a question is an everyday one that the searched packs do not speak to.

"how do i book a meeting room for thursday afternoon" shares "meeting",
"Thursday" and "afternoon" with change-board minutes, and "can i get a second
monitor for my desk" shares "monitor" and "desk" with runbooks: the lexical
check (``evidence``) sees enough of each question covered, yet no passage is
about it. Word statistics cannot tell the two senses of "monitor" apart; the
packaged embedding model (``portal.search.embedding``), which reads topic well
and facts poorly, can.

So a question is compared with two things: the passages its search found, and
a fixed list of everyday questions employees type into a company chat (IT at
the desk, HR, facilities, travel, small talk: ``everyday_questions.txt``,
written without looking at any question set, then given the kinds of an opened held-out set's everyday
questions: a phone's settings, music and sport, printing at home, pay). A question is everyday
when it is clearly more like one of those (by ``EVERYDAY_MARGIN``) than like
any passage found, and no passage is much like it (``PACK_SIMILARITY``; one
barely so, below ``BARELY``, does not count when the everyday question is far
closer still, by ``CLEAR_MARGIN``). The
list is not a list of forbidden topics: a pack about leave or travel
policies holds passages close to such questions, and they are answered. The
two constants were calibrated on the demo set, the value set and held-out 14,
and reported on held-out 15 (docs/retrieval-quality.md).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from portal.search.embedding import DIMENSIONS, EmbeddingUnavailable, passage_text, shared_embedder

log = logging.getLogger(__name__)

EXAMPLES = Path(__file__).with_name("everyday_questions.txt")
# An everyday question must be this much more like the nearest example than like the nearest passage found
# (cosine): the answerable question least like its passages came to 0.15 on the tuning sets.
EVERYDAY_MARGIN = 0.2
# A passage at least this like the question speaks to it, unless it is barely so (below ``BARELY``) and an everyday
# question is closer still by ``CLEAR_MARGIN``: "my laptop won't turn on after the windows update" came to 0.40 of
# an update-task runbook and 0.75 of "Windows update keeps restarting my pc". A leave policy's passage about
# carrying over vacation days (about 0.5) speaks to that question however like an everyday one it is.
PACK_SIMILARITY = 0.4
BARELY = 0.45
CLEAR_MARGIN = 0.3


@functools.cache
def _examples() -> np.ndarray:
    """The everyday questions as unit vectors, one row each (embedded once per process)."""
    lines = [line.strip() for line in EXAMPLES.read_text(encoding="utf-8").splitlines()]
    vectors = [v for v in shared_embedder().embed([line for line in lines if line]) if v is not None]
    return np.vstack(vectors) if vectors else np.zeros((0, DIMENSIONS), dtype=np.float32)


class Likeness:
    """How like ``question`` its search hits and the everyday questions are, by the embedding model: measured
    once, for the hits first given, and read by both signals of the evidence check (``is_everyday``, and
    ``like_hits`` for a question whose words the packs mostly lack). Without the model (logged) neither speaks:
    the lexical check decides alone."""

    def __init__(self, question: str):
        self.question = question
        self._measured: tuple[list[float], float] | None = None  # (each hit's cosine, the nearest example's)
        self._failed = False

    def _measure(self, hits: Sequence) -> tuple[list[float], float] | None:
        if self._measured is None and not self._failed:
            embedder = shared_embedder()
            try:
                asked = embedder.embed_one(self.question)
                if asked is None:
                    self._failed = True
                    return None
                texts = [passage_text(h.document_title, h.heading_path or "", h.text) for h in hits]
                found = [0.0 if v is None else float(v @ asked) for v in embedder.embed(texts)]
                nearest_example = float((_examples() @ asked).max(initial=0.0))
            except EmbeddingUnavailable as error:
                log.warning("Everyday questions are not recognised: %s", error)
                self._failed = True
                return None
            self._measured = (found, nearest_example)
        return self._measured

    def like_hits(self, hits: Sequence) -> list[float] | None:
        """Each hit's cosine to the question (in the order of ``hits``), or None when the model cannot be loaded."""
        measured = self._measure(hits)
        return measured[0] if measured else None

    def is_everyday(self, hits: Sequence) -> bool:
        """Whether the question reads as an everyday one that none of ``hits`` speaks to (see the module)."""
        measured = self._measure(hits)
        if measured is None:
            return False
        nearest_passage, nearest_example = max(measured[0], default=0.0), measured[1]
        margin = nearest_example - nearest_passage
        barely = nearest_passage < BARELY and margin > CLEAR_MARGIN
        return margin > EVERYDAY_MARGIN and (nearest_passage < PACK_SIMILARITY or barely)
