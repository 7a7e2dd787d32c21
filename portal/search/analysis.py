"""The English analysis shared by indexing and querying.

Both sides must turn text into terms the same way, or queries miss: Anserini's
``DefaultEnglishAnalyzer`` (Lucene's standard tokenizer, English stopwords,
Porter stemming), one instance per process. Lucene analyzers are thread-safe.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading

from cachetools import LRUCache

from portal.search import jvm
from portal.search.jvm import J

_analyzer = None


def english_analyzer():
    """The process-wide Java analyzer, created on first use (this starts the JVM)."""
    global _analyzer
    if _analyzer is None:
        with jvm.java_lock:
            if _analyzer is None:
                _analyzer = J().JDefaultEnglishAnalyzer.newDefaultInstance()
    return _analyzer


def analyze(text: str) -> list[str]:
    """The terms the index holds for ``text``, in order, repeats kept.

    ``analyze("Running dogs and cats")`` is ``["run", "dog", "cat"]``; a text of
    stopwords and punctuation only gives ``[]``.
    """
    analyzer = english_analyzer()
    with jvm.java_lock:
        return list(J().JAnalyzerUtils.analyze(analyzer, text).toArray())


# The one stop-word list. Words that make a sentence a question or a request, or
# only join its parts, but say nothing about its subject. Lucene's English
# stopword list is deliberately tiny (33 words), so "What … do … earn?" would
# match every passage containing "what" or "do", and a question about something
# no document mentions would never come back as "no evidence found". They are
# dropped from questions (search, the evidence check, choosing answer
# sentences); documents keep them. The last two lines hold the words around a question as people write it ("sorry
# to bother you", "a colleague told me", "roughly", "need to ask him"): the packs hardly use them, so they weighed
# the most. Stopwords are matched by their stems, so a word whose stem is a subject word stays out of the list:
# "basically" is "basic" (basic type, basic authentication), "approximately" is "approxim"; "question" and "exact"
# are subject words too ("exactly" is "exactli").
STOPWORDS = frozenset(
    """
    what which who whom whose when where why how
    do does did doing done can could should would shall may might must will
    am is are was were be been being has have had having
    i me my mine myself we us our ours you your yours he him his she her hers it its itself
    they them their theirs
    please thanks tell explain show give describe anyone anybody someone somebody
    about many much
    a an and any as at but by for from if in into of off on onto or so than that the then
    there these this those to too very with
    above after again against all before below between both down during each few further
    here more most no nor not once only other out over own same some such through under until
    up while just
    get gets got getting gotten happen happens happened happening
    go goes went gone going make makes made take takes took taken need needs needed
    know knows knew known want wants wanted say says said let like look looks deal find according
    still ever even also actually really nearly suddenly instead already vs versus now currently
    anything something nothing everything thing things
    cannot dont doesnt didnt cant couldnt wont wouldnt shouldnt isnt arent wasnt werent hasnt havent hadnt
    whats thats theres
    hi hello hey sorry roughly exactly colleague colleagues told heard wonder wondering curious bother bothering
    ask asked asking
""".split()
)
# A word with a clitic ("couldn't", "what's", "we're", typed with ' or ’) is a stopword when the word it is
# made of is one: "couldn't" stayed a term that no passage holds, the rarest there is, and weighed more than
# the subject of the question in the evidence check. "can't", "won't" and "shan't" lose more than "n't".
_CLITICS = ("n't", "'s", "'re", "'ve", "'d", "'ll", "'m")
_CLITIC_STEMS = {"ca": "can", "wo": "will", "sha": "shall"}
# A whole word: not inside an identifier (``Z_WHO``, ``ZTW.DO``, ``NO-GO``), so only plain words are blanked.
_WORD_RE = re.compile(r"(?<![\w.-])\w+(?:['\u2019]\w+)?(?![\w-])")
# For a word with other than ASCII letters: whether it is a stopword under Python's case-insensitive matching.
_STOPWORD_RE = re.compile("|".join(sorted(STOPWORDS)), re.I)


def without_question_words(question: str) -> str:
    """``question`` with its stopwords blanked out (identifiers such as ``Z_WHO`` stay whole).

    Each whole word is looked up in the set: an alternation of the stopwords
    tried at every position of a text cost about a tenth of a chat answer's CPU.
    """
    return _WORD_RE.sub(_blank_stopword, question)


def _blank_stopword(word: re.Match) -> str:
    text = word[0]
    return " " if _is_stopword(text) or _is_stopword(_without_clitic(text)) else text


def _is_stopword(text: str) -> bool:
    return text.lower() in STOPWORDS if text.isascii() else _STOPWORD_RE.fullmatch(text) is not None


def _without_clitic(word: str) -> str:
    """``couldn't`` → ``could``, ``what’s`` → ``what``; a word without a clitic is returned as it is."""
    plain = word.replace("\u2019", "'")
    for clitic in _CLITICS:
        if plain.lower().endswith(clitic) and len(plain) > len(clitic):
            stem = plain[: -len(clitic)]
            return _CLITIC_STEMS.get(stem.lower(), stem)
    return word


def question_terms(question: str) -> list[str]:
    """The analyzed terms of ``question`` without stopwords, in order, repeats kept: the one analysis
    of a question that search, the evidence check and the extractive answer share."""
    dropped = _analyzed_stopwords()
    return [term for term in analyze(question_words(question)) if term not in dropped]


def question_words(question: str) -> str:
    """What search reads of a question, BM25 and the embedding model alike: the question ``as_read``, its
    stopwords blanked (``without_question_words``)."""
    return without_question_words(as_read(question))


def as_read(question: str) -> str:
    """A question as search and the evidence check read it: its short forms written out (``written_out``), its
    product lines blanked (``without_product_lines``)."""
    return without_product_lines(written_out(question))


# Short forms people type in a chat, and the words documents write: "docs" is in no passage, so it weighed as
# the rarest term there is and outweighed what the question was about ("max number of billing docs per run").
# Only forms with one reading: "min" (minimum or minutes) and "dev" stay as typed.
# A month as people shorten it ("in Feb"), as documents write it: alone it was a word no passage holds, the heaviest of
# its question ("dec" is left: DEC is an ABAP type; "may" is a stopword). Typed in capitals it stays ("APR", "SEP":
# the names of things).
_MONTH_SHORT_FORMS = {
    "jan": "January",
    "feb": "February",
    "mar": "March",
    "apr": "April",
    "jun": "June",
    "jul": "July",
    "aug": "August",
    "sep": "September",
    "sept": "September",
    "oct": "October",
    "nov": "November",
}
# Question words as fingers mistype them ("wich job", "whay did it fail"): read as typed each was a word no passage
# holds, the heaviest of its question, and the answer said "No document searched mentions "wich", "whay"" (browser
# walkthrough). Only misspellings that are no word of their own ("wat", "wen", "dose" stay as typed), and not in
# capitals ("HWO", like "WHT", withholding tax, is the name of something).
_QUESTION_WORDS_MISTYPED = {
    **dict.fromkeys(("wich", "whcih", "wihch", "whihc", "whic"), "which"),
    **dict.fromkeys(("whay", "whyy"), "why"),
    **dict.fromkeys(("waht", "whta"), "what"),
    **dict.fromkeys(("wehn", "whn"), "when"),
    **dict.fromkeys(("wher", "whre", "wehre"), "where"),
    "hwo": "how",
    **dict.fromkeys(("teh", "hte"), "the"),
    **dict.fromkeys(("shoudl", "shoud"), "should"),
    "coudl": "could",
    "woudl": "would",
    **dict.fromkeys(("becuase", "becasue", "bcause"), "because"),
}
SHORT_FORMS = {
    "docs": "documents",
    "spec": "specification",
    "specs": "specifications",
    "doc": "document",
    "max": "maximum",
    "info": "information",
    "config": "configuration",
    "cert": "certificate",
    "certs": "certificates",
    "configs": "configurations",
    "msg": "message",
    "msgs": "messages",
    "qty": "quantity",
    "approx": "approximately",
    "prod": "production",
    "app": "application",
    "apps": "applications",
    "admin": "administrator",
    "admins": "administrators",
    "auth": "authorization",
    "mgmt": "management",
    "dept": "department",
    "hrs": "hours",
    "pw": "password",
    "pwd": "password",
    "mins": "minutes",
    # a quarter is a period, as documents write it ("first quarter 2026", "quarter-end"), not a name to find verbatim
    "q1": "first quarter",
    "q2": "second quarter",
    "q3": "third quarter",
    "q4": "fourth quarter",
    "pls": "please",
    "plz": "please",
    "thx": "thanks",
    "w/o": "without",
    "b/c": "because",
    "param": "parameter",
    "params": "parameters",
    "tcode": "transaction code",
    "tcodes": "transaction codes",
    "env": "environment",
    "bg": "background",
    "crit": "critical",
    "dest": "destination",
    "shud": "should",
    "vol": "volume",
    **_MONTH_SHORT_FORMS,
    **_QUESTION_WORDS_MISTYPED,
}
# A short form is a whole word: not part of a name ("prod.sql", "env/prod", "K4P-prod"), though a sentence may end
# after it ("in prod.").
_SHORT_FORM = re.compile(r"(?<![\w.\-/])(" + "|".join(re.escape(f) for f in SHORT_FORMS) + r")(?![\w\-/]|\.\w)", re.I)


# "RC 8", "RC8", "rc=12": a return code. "RC" alone has two readings (a root cause, too) and stays as typed.
_RETURN_CODE = re.compile(r"(?<![\w.\-/])rc\s*=?\s*(\d+)(?![\w\-/]|\.\w)", re.I)
# "S/4", "BW/4", "R/3", "s4 prod": a product line, which a question names as the kind of system its documents are
# about ("the production S/4 system" is K4P). Read as typed it gave search a bare "4" to match in any count or
# date, and the evidence check an identifier no passage writes; written out as S/4HANA, a name few passages
# repeat, it outweighed what was asked. Neither reads it. ("S4" alone may be a severity: only before a system.)
PRODUCT_LINE = re.compile(
    r"(?<![\w.\-/])(?:[A-Za-z]{1,2}/\d|S4(?=\s+(?:prod|production|system|client|landscape)\b))(?![\w\-/])", re.I
)


# "S/4HANA", "BW/4HANA": a product's name, which a question gives for the kind of system it asks about ("the S/4HANA
# production system", which the documents call K4P). Search reads it (a passage may write it); the evidence check
# does not ask for it as a name of one thing (``evidence.identifier_runs``).
PRODUCT_NAME = re.compile(r"[A-Za-z]{1,2}/\dHANA", re.I)
# Products' three-letter names, which documents write beside a landscape's system ids ("SAP spool usage", "the ERP"):
# a word of the product, never one system among others (``evidence._kin``).
PRODUCT_ACRONYMS = frozenset({"SAP", "ERP", "ECC", "CRM", "SRM", "SCM", "BTP", "APO", "EWM", "MDG"})


def without_product_lines(text: str) -> str:
    """``text`` with its product lines (``PRODUCT_LINE``) blanked, each by as many spaces: positions stay."""
    return PRODUCT_LINE.sub(lambda match: " " * len(match.group()), text)


def return_codes_written_out(text: str) -> str:
    """``text`` with its return codes as people type them ("RC 8", "rc12") written "return code N"."""
    return _RETURN_CODE.sub(r"return code \1", text)


# "till" and "til" as people type "until" ("how long till it posts"), a stopword then; after an article or a
# possessive it is the cash register ("reconcile the till"), a word of its own.
UNTIL_AS_TYPED = frozenset({"till", "til"})
_TILL = re.compile(
    r"(?<![\w'’-])(?<!\bthe )(?<!\ba )(?<!\bmy )(?<!\bour )(?<!\byour )(?<!\beach )(?<!\bthis )(?<!\bthat )"
    r"(?<!\bper )(?:" + "|".join(sorted(UNTIL_AS_TYPED)) + r")(?![\w'’-])",
    re.IGNORECASE,
)


# Contractions people type without their apostrophe ("whats the target for P4", "it doesnt post"), which every pattern
# reading a question's form expects with it: "whats the fix time target" did not ask "what is" to any of them. Only
# the forms that are no word of their own ("its", "cant", "wont", "ill", "well", "were", "id" are, or may be; "im" is
# IM, inventory management).
_BARE_CONTRACTIONS = {
    word.replace("'", ""): word
    for word in (
        "what's who's where's how's that's there's here's don't doesn't didn't isn't aren't wasn't weren't "
        "hasn't haven't hadn't couldn't shouldn't wouldn't mustn't needn't you're you've we've they're they've"
    ).split()
}
_BARE_CONTRACTION = re.compile(
    r"(?<![\w'’-])(" + "|".join(sorted(_BARE_CONTRACTIONS, key=len, reverse=True)) + r")(?![\w'’-])", re.IGNORECASE
)


def with_apostrophes(question: str) -> str:
    """``question`` with the contractions typed without an apostrophe given theirs (``_BARE_CONTRACTIONS``), in the
    case typed: what the answer reads, not what is stored."""

    def restored(match: re.Match) -> str:
        typed, written = match.group(), _BARE_CONTRACTIONS[match.group().casefold()]
        at = written.index("'")
        return typed[:at] + "'" + typed[at:]

    return _BARE_CONTRACTION.sub(restored, question)


def written_out(question: str) -> str:
    """``question`` with the short forms people type written out as documents write them (``SHORT_FORMS``,
    "till" as "until", and a return code)."""
    question = _TILL.sub("until", return_codes_written_out(question))
    return _SHORT_FORM.sub(_written_out, question)


def _written_out(match: re.Match) -> str:
    """A short form written out; a month's or a mistyped question word's typed in capitals stays."""
    typed = match.group()
    kept = typed.isupper() and (typed.lower() in _MONTH_SHORT_FORMS or typed.lower() in _QUESTION_WORDS_MISTYPED)
    return typed if kept else SHORT_FORMS[typed.lower()]


@functools.cache
def _analyzed_stopwords() -> frozenset[str]:
    """The stopwords as the analyzer spells them (``doing`` → ``do``), and the ``s`` left of ``what's``: a stopword
    joined to another word ("how-to") reaches the analyzer. Not "me": the pronoun is blanked before, so that term
    comes of a word ("MES", the manufacturing execution system, is "me" to the analyzer), which a question asked
    about and the evidence check never weighed. ("us" stays dropped: "use", "used" and "useful" are "us" too.)"""
    return (frozenset(analyze(" ".join(sorted(STOPWORDS)))) - _CONTENT_STEMS) | {"s"}


_CONTENT_STEMS = frozenset({"me"})


def content_terms(text: str) -> list[str]:
    """The analyzed terms of any text (a question, a passage, a sentence) without stopwords, and the terms of
    the words its identifiers are built of (``with_identifier_words``)."""
    return question_terms(with_identifier_words(text))


# An identifier built of words joined by "_" (the job Z_FI_BANK_STMT_IMPORT, the channel CC_BANK_PAYMENT_OUT) is
# one term to the analyzer, yet users ask in its words ("when does the bank statement import job run?"). For the
# answerer and the evidence check a text also holds those words: each part of three letters or more, the
# namespace of customer objects that opens one (Z, ZTW, Y…) left out. Not in the index: there the words surfaced
# passages whose keyword lines looked like answers to a question the documents do not answer.
_WORD_BUILT = re.compile(r"(?<!\w)[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+(?!\w)")


_NAMESPACE = re.compile(r"[ZY][A-Z]{0,2}")  # Z, ZTW, YCL: the namespace of customer objects, not a word (YEAR is)


def with_identifier_words(text: str) -> str:
    """``text`` followed by the words of its identifiers: ``… Z_FI_BANK_STMT_IMPORT`` → ``… BANK STMT IMPORT``."""
    if "_" not in text:
        return text
    words = []
    for match in _WORD_BUILT.finditer(text):
        parts = match.group().split("_")
        if _NAMESPACE.fullmatch(parts[0]):
            parts = parts[1:]
        words += [part for part in parts if len(part) >= 3 and part.isalpha()]
    return f"{text} {' '.join(words)}" if words else text


# Joins texts analysed in one Java call; the analyzer keeps it as one term, which no text holds.
_SEPARATOR = "zzqcairnsepzzq"


# The analysed terms of texts the answerer has seen, shared by every question of the process.
# Passages are immutable and the same ones are issued to many questions; analysing a
# passage (the stopword pass and a call into Java) was about a sixth of a chat answer's CPU.
# Keyed by a digest, so a kept entry costs its terms only (a few hundred bytes), not its text.
KNOWN_TEXTS = 50_000
_known: LRUCache = LRUCache(maxsize=KNOWN_TEXTS)
_known_lock = threading.Lock()


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class TermCache:
    """``content_terms`` for one question's texts, each analysed once, many in one Java call.

    Crossing into Java costs more than analysing a sentence, so ``prefetch``
    analyses a batch of texts (a passage's sentences, the issued passages)
    joined by a separator term and splits the result; a text is then answered
    from the cache. Texts analysed for an earlier question of this process are
    taken from the process-wide cache (``_known``) without analysing them again.
    """

    def __init__(self):
        self._terms: dict[str, list[str]] = {}

    def __call__(self, text: str) -> list[str]:
        if text not in self._terms:
            key = _digest(text)
            with _known_lock:
                known = _known.get(key)
            if known is None:
                known = tuple(content_terms(text))
                with _known_lock:
                    _known[key] = known
            self._terms[text] = list(known)
        return self._terms[text]

    def prefetch(self, texts) -> None:
        wanted = [t for t in dict.fromkeys(texts) if t not in self._terms and _SEPARATOR not in t.casefold()]
        if not wanted:
            return
        keys = {text: _digest(text) for text in wanted}
        with _known_lock:
            for text in wanted:
                known = _known.get(keys[text])
                if known is not None:
                    self._terms[text] = list(known)
        wanted = [t for t in wanted if t not in self._terms]
        if not wanted:
            return
        joined = f" {_SEPARATOR} ".join(with_identifier_words(text) for text in wanted)
        parts: list[list[str]] = [[]]
        for term in question_terms(joined):
            if term == _SEPARATOR:
                parts.append([])
            else:
                parts[-1].append(term)
        if len(parts) == len(wanted):
            self._terms.update(zip(wanted, parts))
            with _known_lock:
                for text, terms in zip(wanted, parts):
                    _known[keys[text]] = tuple(terms)
