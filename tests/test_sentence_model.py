"""The sentence model of the evidence check loads offline from its package and refuses any other file."""

import pytest

from portal.answers.evidence import SEMANTIC_FLOOR
from portal.search import sentence_model


def test_the_model_reads_meaning_not_shared_words():
    model = sentence_model.SentenceModel()
    same, other = model.similarities(
        "How do I reset my VPN password?",
        ["Change the password of your VPN account in the self-service portal.", "Reset the extraction queue in LBWQ."],
    )
    assert same > SEMANTIC_FLOOR > other


def test_a_text_is_read_up_to_the_token_limit():
    model = sentence_model.SentenceModel()
    head = "Reset the extraction queue in LBWQ after the data warehouse team agrees. " * 8  # past MAX_TOKENS
    cut, longer = model.similarities("How do I reset an extraction queue?", [head, head + "Unrelated words. " * 500])
    assert longer == pytest.approx(cut, abs=1e-5)  # what follows the first MAX_TOKENS tokens is not read


def test_a_long_question_is_read_to_its_end():
    """A user who tells the situation first asks at the end, past the passages' token limit."""
    model = sentence_model.SentenceModel()
    runbook = ["Escalate to the data warehouse team before deleting or resetting extraction queues."]
    told = "The data warehouse team says the extraction user was locked after failed logons again. " * 6
    (asked,) = model.similarities(told + "Who must agree before I reset an extraction queue?", runbook)
    (other,) = model.similarities(told + "How do I reset my VPN password?", runbook)
    assert asked > other + 0.15


def test_a_tokenizer_that_is_not_the_pinned_file_is_refused(tmp_path, monkeypatch):
    forged = tmp_path / "tokenizer.json"
    forged.write_bytes(sentence_model._TOKENIZER.read_bytes().replace(b'"[UNK]"', b'"[UNK?]"', 1))
    monkeypatch.setattr(sentence_model, "_TOKENIZER", forged)
    with pytest.raises(sentence_model.SentenceModelUnavailable, match="not the pinned file"):
        sentence_model.SentenceModel().similarities("question", ["text"])


def test_a_forked_child_loads_its_own_model_and_exits():
    """gunicorn forks its workers; a child that inherited a loaded session must neither use nor free it
    (its threads did not survive the fork: freeing it waited for them for ever)."""
    import os
    import select

    model = sentence_model.shared_model()
    (parent,) = model.similarities("How do I reset an extraction queue?", ["Reset the extraction queue in LBWQ."])
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child, which reports through the pipe and exits
        try:
            (score,) = sentence_model.shared_model().similarities(
                "How do I reset an extraction queue?", ["Reset the extraction queue in LBWQ."]
            )
            os.write(write_end, f"{score:.6f}".encode())
        finally:
            os._exit(0)
    os.close(write_end)
    # A deadlock detector, not a timing: the child needs about a second; a hung one never writes.
    poller = select.poll()  # not select(): a long test run holds descriptors past its limit of 1,024
    poller.register(read_end, select.POLLIN)
    ready = poller.poll(120_000)
    if not ready:
        os.kill(child, 9)
    os.waitpid(child, 0)
    assert ready, "the forked child hung"
    assert float(os.read(read_end, 64).decode()) == pytest.approx(parent, abs=1e-5)


def test_a_passage_is_embedded_once_per_process_with_the_same_result():
    model = sentence_model.SentenceModel()
    runbook = "Escalate to the data warehouse team before deleting or resetting extraction queues."
    model.similarities("Who must agree before I reset an extraction queue?", [runbook])
    assert len(model._known) == 1
    again, twice = model.similarities("How do I reset my VPN password?", [runbook, runbook])
    assert len(model._known) == 1 and again == twice
    (fresh,) = sentence_model.SentenceModel().similarities("How do I reset my VPN password?", [runbook])
    assert again == pytest.approx(fresh, abs=1e-6)
