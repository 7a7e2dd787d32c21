"""The grounding modes (SPEC 7): what a run does with its references and its model's answer.

Pure: references in, an ``Outcome`` out. Retrieval, the receipt and storage are
the caller's.

- **open** — the model gets the references and is not asked to cite. Without
  evidence it may still answer, and that answer is marked as not based on the
  documents (``basis`` ``model_only`` and a warning); without a model it is the
  "no evidence" answer.
- **preferred** — asked to cite; completes with a warning when the answer cites
  none. Without evidence it completes with a warning and the fixed "no evidence"
  answer, and the model is not called: its answer could only be its own.
- **required** — stops before the model is called when no acceptable passage
  was found; an answer that cites none of its references is not accepted.

A model that replies with ``CANNOT_ANSWER`` (the prompt asks for it when the
references do not answer) gets the "no evidence" answer in its place; in open
mode a reply that goes on after the phrase is kept, marked model-only.

A failing model (timeout, HTTP error, malformed reply, no connection) is
replaced by the extractive answer, and the run says so. Without a model the
extractive answerer is the model.
"""

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from portal.answers.citations import validate_citations
from portal.answers.extractive import (
    NO_EVIDENCE_ANSWER,
    Tokenizer,
    extractive_sentences,
    format_extractive,
)
from portal.answers.model_client import ChatClient, ModelError
from portal.answers.prompt import build_messages, says_cannot_answer
from portal.answers.references import Reference
from portal.models.agents import GROUNDING_MODES

EXTRACTIVE = "extractive"


def writes_markdown(model: str) -> bool:
    """Whether an answer by ``model`` (a run's ``model``) is Markdown: a model's is; the extractive answer is
    the documents' text, whose ``*`` or ``_`` is a character to show, not emphasis."""
    return model != EXTRACTIVE


STOPPED_NO_PASSAGE_ANSWER = "Stopped before the model was called: no acceptable passage was found in the granted packs."
NOT_ACCEPTED_ANSWER = (
    "The answer was not accepted: it cites none of its references, and this agent "
    "requires every answer to cite the granted packs."
)

NO_PASSAGE_WARNING = "no acceptable passage was found"
CITES_NONE_WARNING = "the answer cites none of its references"
NOT_ACCEPTED_WARNING = "answer not accepted: it cites none of its references"
MODEL_FOUND_NO_ANSWER_WARNING = "the model said the references do not answer the question"

MAX_MODEL_ANSWER_CHARS = 20_000
"""The most of a model's answer that is kept: a help-desk answer is a few paragraphs, and a provider may send up
to ``model_client.MAX_RESPONSE_BYTES``, which every page showing the answer drew again (a conversation of such
answers took minutes to open)."""
ANSWER_CUT_WARNING = f"the model's answer was cut to {MAX_MODEL_ANSWER_CHARS:,} characters"

# What an answer rests on (``run.answer_basis``), each with the label the chat and the
# run record show for it.
DOCUMENTS = "documents"  # made with the issued references (cited or not: see the warnings)
NO_EVIDENCE = "no_evidence"  # nothing answers the question: the run says so instead of answering
MODEL_ONLY = "model_only"  # open mode: the model answered on its own, not from the documents
NOT_ACCEPTED = "not_accepted"  # required mode rejected the model's uncited answer
ANSWER_BASES = {
    DOCUMENTS: "Based on the granted packs",
    NO_EVIDENCE: "No evidence found",
    MODEL_ONLY: "Not based on the documents",
    NOT_ACCEPTED: "Answer not accepted",
}
MODEL_ONLY_WARNING = (
    f"{ANSWER_BASES[MODEL_ONLY].lower()}: the model answered on its own, without evidence from the granted packs"
)


def fallback_warning(error: ModelError) -> str:
    """The run's note when the model failed and the extractive answer stood in."""
    return f"model call failed ({error.summary}); answered from the evidence instead"


@dataclass
class Outcome:
    """What a run records: status, the answer shown, cited numbers, warnings, timings (ms)."""

    status: str  # one of portal.models.RUN_STATUSES
    answer: str
    cited: list[int]
    warnings: list[str]
    model: str  # "extractive" or the configured model's name
    timings: dict[str, float] = field(default_factory=dict)
    called_model: bool = False
    basis: str = DOCUMENTS  # a key of ANSWER_BASES


def _elapsed_ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)


class _Run:
    """Warnings and timings collected while one question is answered."""

    def __init__(self):
        self.started = time.perf_counter()
        self.warnings: list[str] = []
        self.timings: dict[str, float] = {}

    def finish(
        self, status: str, answer: str, cited: list[int], model: str, called_model: bool, basis: str = DOCUMENTS
    ) -> Outcome:
        if status == "completed" and self.warnings:
            status = "completed_with_warning"
        self.timings["total_ms"] = _elapsed_ms(self.started)
        return Outcome(status, answer, cited, self.warnings, model, self.timings, called_model, basis)


def answer_question(
    mode: str,
    question: str,
    instructions: str,
    references: list[Reference],
    no_evidence: bool,
    client: ChatClient | None,
    tokenize: Tokenizer | None = None,
    weights: dict[str, float] | None = None,
    on_the_day: Callable[[], Collection[int]] | None = None,
    synonyms: dict[str, frozenset[str]] | None = None,
    in_months: Callable[[], dict[int, set[str]]] | None = None,
) -> Outcome:
    """Answer ``question`` from ``references`` under the agent's grounding ``mode``.

    ``no_evidence`` is retrieval's verdict that no acceptable passage was found;
    then no reference is issued to the model, whatever ``references`` holds.
    ``no_evidence`` is the evidence check's verdict (``portal.answers.evidence``).
    ``tokenize``, ``weights`` (each question term's idf in the searched packs), ``synonyms`` (the packs'
    vocabulary for the question's words), ``on_the_day`` (the
    references whose documents name a day the question names) and ``in_months`` (the months the question names
    each reference's document is dated in), both read only when the extractive answerer runs, are passed to the
    extractive answerer.
    """
    if mode not in GROUNDING_MODES:
        raise ValueError(f"unknown grounding mode {mode!r}")
    run = _Run()
    issued = [] if no_evidence else list(references)

    configured = client.model if client is not None else EXTRACTIVE
    if not issued and mode == "required":
        run.warnings.append(NO_PASSAGE_WARNING)
        return run.finish("stopped", STOPPED_NO_PASSAGE_ANSWER, [], configured, False, NO_EVIDENCE)
    if not issued and mode == "preferred":
        run.warnings.append(NO_PASSAGE_WARNING)
        return run.finish("completed", NO_EVIDENCE_ANSWER, [], configured, False, NO_EVIDENCE)

    if client is not None:
        model_started = time.perf_counter()
        try:
            answer = client.complete(build_messages(instructions, mode, question, issued))
        except ModelError as error:
            answer = None
            run.warnings.append(fallback_warning(error))
        run.timings["model_ms"] = _elapsed_ms(model_started)
        if answer is not None:
            return _judge_model_answer(run, mode, answer, issued, client.model)

    def choose(question: str, issued: list[Reference]) -> list[tuple[str, int]]:
        days = on_the_day() if on_the_day is not None else None
        months = in_months() if in_months is not None else None
        return extractive_sentences(
            question, issued, tokenize=tokenize, weights=weights, on_the_day=days, synonyms=synonyms, in_months=months
        )

    return _extractive(run, mode, question, issued, choose, called_model=client is not None)


def _judge_model_answer(run: _Run, mode: str, answer: str, issued: list[Reference], model: str) -> Outcome:
    """Keep at most ``MAX_MODEL_ANSWER_CHARS``, recognise "cannot answer", validate the citations, then accept,
    warn or reject by mode."""
    if len(answer) > MAX_MODEL_ANSWER_CHARS:
        answer = answer[: MAX_MODEL_ANSWER_CHARS - 1] + "…"
        run.warnings.append(ANSWER_CUT_WARNING)
    after_phrase = says_cannot_answer(answer)
    if after_phrase is not None and not (mode == "open" and after_phrase):
        # Whatever a preferred or required model adds after the phrase is not from the references.
        run.warnings.append(MODEL_FOUND_NO_ANSWER_WARNING)
        status = "stopped" if mode == "required" else "completed"
        return run.finish(status, NO_EVIDENCE_ANSWER, [], model, True, NO_EVIDENCE)
    answer, cited, citation_warnings = validate_citations(answer, {ref.n for ref in issued})
    run.warnings.extend(citation_warnings)
    if mode == "open" and (not issued or after_phrase):
        run.warnings.append(MODEL_ONLY_WARNING)
        return run.finish("completed", answer, cited, model, True, MODEL_ONLY)
    if issued and not cited and mode == "preferred":
        run.warnings.append(CITES_NONE_WARNING)
    if issued and not cited and mode == "required":
        run.warnings.append(NOT_ACCEPTED_WARNING)
        return run.finish("stopped", NOT_ACCEPTED_ANSWER, [], model, True, NOT_ACCEPTED)
    return run.finish("completed", answer, cited, model, called_model=True)


def _extractive(run: _Run, mode: str, question: str, issued: list[Reference], choose, called_model: bool) -> Outcome:
    """The extractive answer (``choose``: ``extractive_sentences`` with what it reads the question by): the
    model itself, or the stand-in for a failed one."""
    extractive_started = time.perf_counter()
    chosen = choose(question, issued)
    run.timings["extractive_ms"] = _elapsed_ms(extractive_started)
    if not chosen:
        if issued and mode != "open":
            # No issued sentence shares a term with the question: nothing acceptable.
            run.warnings.append(NO_PASSAGE_WARNING)
        status = "stopped" if mode == "required" else "completed"
        return run.finish(status, NO_EVIDENCE_ANSWER, [], EXTRACTIVE, called_model, NO_EVIDENCE)
    # Cited numbers come from the choice itself, not from parsing: a sentence may quote "[3]".
    cited = list(dict.fromkeys(n for _, n in chosen))
    return run.finish("completed", format_extractive(chosen), cited, EXTRACTIVE, called_model)
