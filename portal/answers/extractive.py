"""The built-in answerer: an answer made only of sentences of the issued passages.

It never writes a word of its own. Each chosen sentence is copied verbatim (a
bullet loses its marker, wrapped lines are joined by one space) and followed by
the ``[n]`` of the passage it came from, so the answer always cites. The only
characters added are spaces, the markers, and a full stop after the marker of a
sentence that has no end punctuation of its own (a bullet).
"""

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from portal.answers.references import Reference

NO_EVIDENCE_ANSWER = "No evidence found in the granted packs for this question."

# A sentence scoring below this share of the best sentence's score is left out:
# it usually matches only a common word of the question.
MIN_SHARE_OF_BEST = 0.5
# How much a question term counts when it is in a sentence's heading or title, not the sentence.
CONTEXT_WEIGHT = 0.5
# A table row is evidence but reads badly as a sentence of an answer: prose wins a near tie.
TABLE_ROW_WEIGHT = 0.5

_SENTENCE_ENDINGS = tuple(".!?…:;)\"'”’")

Tokenizer = Callable[[str], list[str]]

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers him his how i if in into is
    it its itself just me more most my no nor not of off on once only or other our ours
    out over own same she should so some such than that the their theirs them then there
    these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours""".split()
)
_WORD = re.compile(r"[^\W_]+")


def _stem(word: str) -> str:
    """Light suffix stripping, so ``configured``/``configures`` meet ``configure``."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


def simple_tokenize(text: str) -> list[str]:
    """Lowercase words without stopwords, lightly stemmed; the default when no analyzer is injected."""
    return [
        _stem(word)
        for word in _WORD.findall(text.lower())
        if word not in STOPWORDS and (len(word) > 1 or word.isdigit())
    ]


# --- splitting a passage into sentences -------------------------------------------

_ATX_HEADING = re.compile(r"^#{1,6}(\s|$)")
_SETEXT_UNDERLINE = re.compile(r"^(=+|-+)$")
_THEMATIC_BREAK = re.compile(r"^([-*_])(\s*\1){2,}$")
_FENCE = re.compile(r"^(```|~~~)")
_PAGE_LINE = re.compile(r"^Page \d+$")
_KEYWORDS_LINE = re.compile(r"^[*_]*keywords[*_]*\s*:", re.IGNORECASE)
_IMAGES_LINE = re.compile(r"^Images: \d+ kept\b")
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$")
_BULLET = re.compile(r"^(?:[-*+•]|\d{1,3}[.)])\s+(.*)$")
_BLOCKQUOTE = re.compile(r"^(?:>\s?)+")
_FIGURE = re.compile(r"\[Figure \d+:[^\]]*\]")
_ONLY_FIGURES = re.compile(r"^(?:\s*\[Figure \d+:[^\]]*\])+\s*$")

# End of a sentence: terminal punctuation, optional closing quotes/brackets,
# whitespace, then something that can start a sentence.
_BOUNDARY = re.compile(r"[.!?]+[\"'’”)\]]*\s+(?=[A-Z0-9\"'‘“(\[])")
_ABBREVIATIONS = frozenset(
    "e.g i.e vs cf fig figs no nos approx dr mr mrs ms st jr sr inc ltd co".split()
)


def _units(text: str) -> list[tuple[str, str]]:
    """Blocks of prose a sentence cannot cross (paragraphs, list items, table rows), each
    with the heading it stands under.

    Headings, ``Page N`` lines, ``Keywords:`` lines, the ``Images:`` summary
    line, code blocks and table rules are not prose and are dropped as units.
    """
    units: list[tuple[str, str]] = []
    paragraph: list[str] = []
    heading = ""

    def flush() -> None:
        if paragraph:
            units.append((" ".join(paragraph), heading))
            paragraph.clear()

    in_fence = False
    for raw in text.splitlines():
        line = raw.strip()
        if _FENCE.match(line):
            in_fence = not in_fence
            flush()
            continue
        if in_fence:
            continue
        line = _BLOCKQUOTE.sub("", line).strip()
        if not line:
            flush()
        elif _SETEXT_UNDERLINE.match(line) and paragraph:
            heading = paragraph.pop()  # the line above was a heading
            flush()
        elif _ATX_HEADING.match(line):
            flush()
            heading = line.lstrip("#").strip()
        elif (
            _THEMATIC_BREAK.match(line)
            or _PAGE_LINE.match(line)
            or _KEYWORDS_LINE.match(line)
            or _IMAGES_LINE.match(line)
            or _TABLE_SEPARATOR.match(line)
        ):
            flush()
        elif line.startswith("|"):
            flush()
            units.append((line.strip("|").strip(), heading))
        elif _ONLY_FIGURES.match(line):
            flush()
            units.append((line, heading))
        elif bullet := _BULLET.match(line):
            flush()
            paragraph.append(bullet.group(1))
        else:
            paragraph.append(line)
    flush()
    return units


def _protected_spans(unit: str) -> list[tuple[int, int]]:
    """Bracketed spans (figure markers, link texts) that a boundary must not cut."""
    return [m.span() for m in re.finditer(r"\[[^\]]*\]", unit)]


def split_sentences(text: str) -> list[str]:
    """The sentences of a passage, each verbatim apart from joined lines and bullet markers."""
    return [sentence for sentence, _heading in sentences_with_headings(text)]


def sentences_with_headings(text: str) -> list[tuple[str, str]]:
    """``split_sentences``, each sentence paired with the heading it stands under ("" before any)."""
    sentences: list[tuple[str, str]] = []
    for unit, heading in _units(text):
        protected = _protected_spans(unit)
        start = 0
        for match in _BOUNDARY.finditer(unit):
            end = match.start()
            if any(a < end < b for a, b in protected):
                continue
            previous_word = unit[start:end].rsplit(None, 1)[-1] if unit[start:end].strip() else ""
            if previous_word.lower().lstrip("(\"'‘“[").rstrip(".") in _ABBREVIATIONS or (
                len(previous_word) == 1 and previous_word.isupper()
            ):
                continue
            cut = match.start() + len(match.group().rstrip())
            sentences.append((unit[start:cut].strip(), heading))
            start = match.end()
        sentences.append((unit[start:].strip(), heading))
    return [(sentence, heading) for sentence, heading in sentences if sentence]


# --- choosing sentences -------------------------------------------------------------


@dataclass(frozen=True)
class _Candidate:
    sentence: str
    n: int
    order: tuple[int, int]  # (reference position, sentence position): the tie-break
    terms: frozenset[str]
    context: frozenset[str]  # terms of its heading, the passage's heading path and document title
    weight: float = 1.0


def _is_answerable(sentence: str) -> bool:
    """A sentence with words beyond its figure markers; a lone figure is never an answer."""
    return bool(_WORD.search(_FIGURE.sub("", sentence)))


def _dedup_key(sentence: str) -> str:
    return " ".join(sentence.casefold().split()).rstrip(".!?;: ")


def extractive_sentences(
    question: str,
    references: list[Reference],
    tokenize: Tokenizer | None = None,
    max_sentences: int = 4,
) -> list[tuple[str, int]]:
    """The sentences most relevant to ``question`` as ``(sentence, n)``, best first; may be empty.

    Relevance is the summed idf (over all issued sentences) of the question's
    terms a sentence contains, plus half of it for question terms found only in
    its context (the heading it stands under, the passage's heading path and the
    document title): under "Root cause" in the digest of INC-2026-0266, a
    sentence answers "the root cause of INC-2026-0266" without repeating those
    words. Ties go to the earlier reference, then the earlier sentence. Only
    sentences sharing a term with the question, themselves or through their
    context, qualify.
    """
    tokenize = tokenize or simple_tokenize
    question_terms = set(tokenize(question))
    if not question_terms:
        return []

    candidates = []
    for ref_position, ref in enumerate(references):
        around = " ".join((ref.document_title or "", ref.heading_path or ""))
        for sentence_position, (sentence, heading) in enumerate(sentences_with_headings(ref.text)):
            if _is_answerable(sentence):
                terms = frozenset(tokenize(sentence))
                context = frozenset(tokenize(f"{around} {heading}")) - terms
                weight = TABLE_ROW_WEIGHT if " | " in sentence else 1.0
                candidates.append(_Candidate(sentence, ref.n, (ref_position, sentence_position), terms, context,
                                             weight))
    document_frequency = {
        term: sum(1 for c in candidates if term in c.terms or term in c.context) for term in question_terms
    }
    idf = {
        term: math.log(1 + len(candidates) / df)
        for term, df in document_frequency.items()
        if df
    }
    scored = [(c.weight * (sum(idf[t] for t in c.terms & idf.keys())
                           + CONTEXT_WEIGHT * sum(idf[t] for t in c.context & idf.keys())), c)
              for c in candidates]
    scored = [(score, c) for score, c in scored if score > 0]
    if not scored:
        return []
    scored.sort(key=lambda sc: (-sc[0], sc[1].order))

    best = scored[0][0]
    chosen: list[tuple[str, int]] = []
    seen: set[str] = set()
    for score, candidate in scored:
        if len(chosen) == max_sentences or score < best * MIN_SHARE_OF_BEST:
            break
        key = _dedup_key(candidate.sentence)
        if key not in seen:
            seen.add(key)
            chosen.append((candidate.sentence, candidate.n))
    return chosen


def format_extractive(chosen: list[tuple[str, int]]) -> str:
    """The answer text for chosen sentences, or ``NO_EVIDENCE_ANSWER`` when there are none."""
    if not chosen:
        return NO_EVIDENCE_ANSWER
    return " ".join(_with_marker(sentence, n) for sentence, n in chosen)


def extractive_answer(
    question: str,
    references: list[Reference],
    tokenize: Tokenizer | None = None,
    max_sentences: int = 4,
) -> str:
    """The sentences of ``references`` most relevant to ``question``, each followed by its ``[n]``.

    ``NO_EVIDENCE_ANSWER`` when no sentence shares a term with the question.
    """
    return format_extractive(extractive_sentences(question, references, tokenize, max_sentences))


def _with_marker(sentence: str, n: int) -> str:
    """``sentence [n]``; a sentence without end punctuation (a bullet) gets a full stop after its marker."""
    cited = f"{sentence} [{n}]"
    return cited if sentence.endswith(_SENTENCE_ENDINGS) else f"{cited}."
