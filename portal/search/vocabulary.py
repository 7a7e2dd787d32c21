"""A pack's vocabulary: the words its readers type for what its documents name otherwise.

A user asks about "invoices", "the data warehouse" and "sticker printers"; the
documents write "billing", "BW" and "label". A pack may carry entries, one a
line, ``user words => document words, other words`` (``#`` starts a comment).
Searching packs, a question naming an entry's user words (a word or a phrase,
in the singular or the plural; the longest entry where several start) is read as naming the document words too:

- the search also asks for the document words, each as a word of the question
  (measured against 0.4 to 0.8 of a question word's weight: no better on the
  tuning sets, and paraphrases found less often; docs/retrieval-quality.md);
- the evidence check counts a passage holding a document word as covering the
  user's word, and the built-in answerer scores a sentence so as well.

The vocabulary is the searched packs' together, so each pack's owner writes
what fits its documents; a pack without one is searched by its words alone.
Entries are checked when saved (``parsed``): a line that is not an entry is
refused with its number, and nothing is stored.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from portal.errors import Refused, too_long
from portal.search.analysis import analyze, as_read, question_terms

MAX_VOCABULARY_CHARS = 50_000
MAX_SOURCE_WORDS = 4
MAX_TARGETS = 5
# A word as users type it: letters and digits, joined by an apostrophe, slash or dot ("can't", "s/4", "pain.001");
# matched on the question as search reads it (``as_read``), folded. A hyphen parts words, on both sides: "sign-off"
# and "sign off" are one entry however either is written.
_WORD = re.compile(r"\w+(?:['’/.]\w+)*")


@dataclass(frozen=True)
class Entry:
    source: tuple[str, ...]  # the user's words, folded
    targets: tuple[str, ...]  # the document words as written


def parsed(text: str, strict: bool = True) -> list[Entry]:
    """The entries of a vocabulary text; ``Refused`` naming the first line that is not one. Not ``strict`` (a
    stored text read for a search, which rules made stricter later must not break): such lines are left out."""
    if strict and len(text) > MAX_VOCABULARY_CHARS:
        raise too_long("bad_vocabulary", "A vocabulary", MAX_VOCABULARY_CHARS, len(text))
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        source, arrow, targets = line.partition("=>")
        words = tuple(_WORD.findall(source.casefold().replace("’", "'")))
        written = tuple(t.strip() for t in targets.split(",") if t.strip())
        problem = (
            "has no '=>' between the user's words and the document words"
            if not arrow
            else "has more than one '=>'"
            if "=>" in targets
            else "names no user words before '=>'"
            if not words
            else f"has more than {MAX_SOURCE_WORDS} user words"
            if len(words) > MAX_SOURCE_WORDS
            else "names no document words after '=>'"
            if not written
            else f"has more than {MAX_TARGETS} document words"
            if len(written) > MAX_TARGETS
            else None
        )
        if problem and strict:
            raise Refused("bad_vocabulary", f"Vocabulary line {number} {problem}: “{line[:80]}”.")
        if not problem:
            entries.append(Entry(words, written))
    return entries


class Vocabulary:
    """Entries read for matching: each source's words, and its analyzed source and document terms."""

    def __init__(self, texts: Iterable[str]):
        self._by_source: dict[tuple[str, ...], tuple[tuple[str, ...], frozenset[str]]] = {}
        for text in texts:  # texts searched together: an entry in two of them stands for both's words
            for source, (source_terms, targets) in _read(text).items():
                self._by_source[source] = (source_terms, self._by_source.get(source, ((), frozenset()))[1] | targets)
        self._longest = max((len(source) for source in self._by_source), default=0)

    def synonyms(self, question: str) -> dict[str, frozenset[str]]:
        """For each analyzed term of the user's words ``question`` names, the document terms that stand for it
        (none of the question's own terms: a document word the user typed as well is no expansion)."""
        if not self._by_source:
            return {}
        words = _WORD.findall(as_read(question).casefold().replace("’", "'"))
        found: dict[str, set[str]] = {}
        start = 0
        while start < len(words):
            # the longest entry starting here, and its words are read once: "data warehouse" is BW, not also a
            # warehouse
            for length in range(min(self._longest, len(words) - start), 0, -1):
                phrase = words[start : start + length]
                match = self._by_source.get(tuple(phrase)) or self._by_source.get(_singular(phrase))
                if match:
                    source_terms, targets = match
                    for term in source_terms:
                        if term not in targets:  # "invoice run => billing run": "run" stands for itself
                            found.setdefault(term, set()).update(targets)
                    start += length
                    break
            else:
                start += 1
        own = set(analyze(" ".join(words))) if found else set()
        return {term: frozenset(targets - own) for term, targets in found.items() if targets - own}


def _singular(phrase: list[str]) -> tuple[str, ...]:
    """The phrase with its last word in the singular as people write it ("invoices", "boxes")."""
    last = phrase[-1]
    if last.endswith("es") and len(last) > 4 and last[-3] in "sxz":
        last = last[:-2]
    elif last.endswith("s") and not last.endswith("ss") and len(last) > 3:
        last = last[:-1]
    return (*phrase[:-1], last)


def expanded_terms(synonyms: dict[str, frozenset[str]]) -> tuple[str, ...]:
    """The document terms a search also asks for, each once, in a stable order."""
    return tuple(sorted(set().union(*synonyms.values()))) if synonyms else ()


@functools.lru_cache(maxsize=64)
def _read(text: str) -> dict[tuple[str, ...], tuple[tuple[str, ...], frozenset[str]]]:
    """One stored text's entries by their user words, analyzed (once per process for each text)."""
    by_source: dict[tuple[str, ...], tuple[tuple[str, ...], frozenset[str]]] = {}
    for entry in parsed(text, strict=False):
        source_terms, targets = by_source.get(entry.source, ((), frozenset()))
        source_terms = source_terms or tuple(question_terms(" ".join(entry.source)))  # "sign off": "sign"
        # a letter alone ("S/4HANA" is "s" and "4hana") would match any passage naming another thing by it
        targets |= frozenset(term for target in entry.targets for term in analyze(target) if len(term) > 1)
        by_source[entry.source] = (source_terms, targets)
    return by_source


@functools.lru_cache(maxsize=64)
def entry_count(text: str) -> int:
    """How many entries a stored text holds (its lines a stricter rule would refuse left out)."""
    return len(parsed(text, strict=False))


@functools.lru_cache(maxsize=64)
def _together(texts: tuple[str, ...]) -> Vocabulary:
    return Vocabulary(texts)


def of_packs(packs: Iterable) -> Vocabulary:
    """The searched packs' vocabularies together (each text read once per process, ``_read``)."""
    return _together(tuple(sorted({pack.vocabulary for pack in packs if pack.vocabulary})))
