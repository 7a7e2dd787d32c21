"""Hybrid retrieval: the packaged embedding model, vectors in real Lucene indexes, RRF fusion, the floor."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import migrated_app, segment_sizes
from portal.search import embedding, jvm
from portal.search.embedding import DENSE_FLOOR, Embedder, question_vector, shared_embedder
from portal.search.errors import ModelMismatch
from portal.search.fusion import pool_size, reciprocal_rank_fusion
from portal.search.index import IndexStore
from portal.search.schema import IndexedPassage
from portal.search.searcher import Searcher

pytestmark = pytest.mark.usefixtures("java")  # every test here drives Lucene in this process

CORPUS = [
    IndexedPassage(
        201,
        "printer-incident",
        "ops",
        "The label printer ran out of ribbon and the spool number range filled up.",
        "Printer incident",
        "Timeline",
    ),
    IndexedPassage(
        202,
        "printer-incident",
        "ops",
        "Spool requests were deleted with RSPO1041 to free numbers.",
        "Printer incident",
        "Fix",
    ),
    IndexedPassage(
        203,
        "redo-log",
        "ops",
        "The database stopped because the archive log area was full.",
        "Database outage",
        "Cause",
    ),
    IndexedPassage(
        204,
        "certificates",
        "ops",
        "Partners rotate their TLS certificates; import the new chain before the old one expires.",
        "Certificate runbook",
        "Rotation",
    ),
    IndexedPassage(
        205,
        "payments",
        "ops",
        "The payment run was nearly value-dated a day late at month end.",
        "Payment run review",
        "",
    ),
    IndexedPassage(
        206,
        "locks",
        "ops",
        "Delete stale lock entries in SM12 only after checking the owner.",
        "Lock entries runbook",
        "Fix",
    ),
]
OTHER = [
    IndexedPassage(
        301, "hr-leave", "other", "Annual leave requests go to the team lead two weeks ahead.", "Leave policy", ""
    ),
    IndexedPassage(
        302, "hr-leave", "other", "The database of leave balances is updated every night.", "Leave policy", "Balances"
    ),
]


@pytest.fixture
def store(root) -> IndexStore:
    store = IndexStore(root, embedder=shared_embedder())
    store.rebuild("ops", CORPUS, generation=1)
    store.rebuild("other", OTHER, generation=1)
    yield store
    store.close()


@pytest.fixture
def searcher(root) -> Searcher:
    searcher = Searcher(root)
    yield searcher
    searcher.close()


def hybrid(searcher, packs, question, limit=8, cap=3, floor=DENSE_FLOOR):
    embedder = shared_embedder()
    return searcher.search_hybrid(
        packs,
        question,
        question_vector(embedder, question),
        model_id=embedder.model_id,
        floor=floor,
        limit=limit,
        per_document_cap=cap,
    )


def brute_force(question: str, passages) -> list[tuple[int, float]]:
    """Cosine of every passage to the question, best first, computed outside Lucene."""
    embedder = shared_embedder()
    query = np.asarray(question_vector(embedder, question), dtype=np.float32)
    texts = [embedding.passage_text(p.title, p.heading_path, p.text) for p in passages]
    scored = [(p.passage_id, float(np.dot(query, v))) for p, v in zip(passages, embedder.embed(texts))]
    return sorted(scored, key=lambda item: -item[1])


# --- the model -----------------------------------------------------------------


def test_the_model_loads_from_its_package_without_touching_the_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the embedding model tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    fresh = Embedder()
    vector = fresh.embed_one("The label printer ran out of ribbon")
    assert vector.shape == (embedding.DIMENSIONS,) and vector.dtype == np.float32
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-6)
    assert fresh.model_id.startswith("wordllama 0.4.0.post1 l2_supercat 256d ")


def test_embedding_is_deterministic_and_equals_the_libraries_own():
    texts = ["Delete stale  lock entries\nin SM12.", "Spool number range RSPO1041 — 99 % full", "x"]
    first, second = Embedder().embed(texts), Embedder().embed(list(reversed(texts)))
    for a, b in zip(first, reversed(second)):
        assert np.array_equal(a, b)
    model = embedding.load_model()
    model.tokenizer.enable_padding()
    reference = model.embed([embedding.canonical(text) for text in texts], norm=True)
    assert np.abs(np.stack(first) - reference).max() < 1e-5


def test_a_text_with_nothing_to_embed_gets_no_vector():
    assert Embedder().embed(["", "  \n\t", "ok"])[:2] == [None, None]
    assert not embedding.can_embed(" \n") and embedding.can_embed("a")


# --- fusion --------------------------------------------------------------------


def test_pool_size_is_four_times_the_limit_and_at_least_24():
    assert [pool_size(n) for n in (1, 6, 8, 10, 100)] == [24, 24, 32, 40, 400]


def test_reciprocal_rank_fusion_adds_one_over_sixty_plus_rank():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "d", "a"]])
    assert [key for key, _ in fused] == ["a", "c", "b", "d"]
    assert dict(fused) == pytest.approx({"a": 1 / 61 + 1 / 63, "c": 1 / 63 + 1 / 61, "b": 1 / 62, "d": 1 / 62})


def test_fusion_uses_ranks_only_and_breaks_ties_by_first_appearance():
    assert [key for key, _ in reciprocal_rank_fusion([["x"], ["y"]])] == ["x", "y"]
    assert [key for key, _ in reciprocal_rank_fusion([["y"], ["x"]])] == ["y", "x"]
    assert reciprocal_rank_fusion([[], []]) == []
    assert reciprocal_rank_fusion([["a", "b"]], k=0) == [("a", 1.0), ("b", 0.5)]


# --- vectors in Lucene ---------------------------------------------------------


def assert_knn_is_exact(searcher, pack: str, passages, count: int) -> None:
    """The ``count`` passages the KNN search finds are those nearest by a cosine computed outside Lucene."""
    question = "the archive log area of the database filled up"
    expected = brute_force(question, passages)[:count]
    embedder = shared_embedder()
    found = searcher.nearest([pack], question_vector(embedder, question), count, model_id=embedder.model_id)
    assert [hit.passage_id for hit in found] == [passage_id for passage_id, _ in expected]
    assert [hit.similarity for hit in found] == pytest.approx([similarity for _, similarity in expected], abs=1e-5)


def test_vectors_are_stored_and_knn_returns_the_exact_nearest_passages(store, searcher):
    assert_knn_is_exact(searcher, "ops", CORPUS, 4)
    assert store.model("ops") == embedding.model_id()


@pytest.mark.parametrize("side_by_side", [True, False], ids=["a pool of threads", "one processor: no pool"])
def test_knn_over_many_segments_searched_side_by_side_returns_the_exact_nearest(
    root, searcher, monkeypatch, side_by_side
):
    if not side_by_side:
        monkeypatch.setattr(jvm, "search_pool", lambda: None)
    store = IndexStore(root, embedder=shared_embedder())
    for generation, passage in enumerate(CORPUS, start=1):
        store.write("ops", add=[passage], generation=generation)  # a segment each
    store.close()
    assert len(segment_sizes(root, "ops")) > 2
    assert_knn_is_exact(searcher, "ops", CORPUS, 5)


def test_hybrid_fuses_bm25_and_dense_ranks(store, searcher):
    result = hybrid(searcher, ["ops"], "Why did the printer run out of numbers?", floor=-1.0)
    bm25 = [hit.passage_id for hit in searcher.search(["ops"], "Why did the printer run out of numbers?").hits]
    dense = [passage_id for passage_id, _ in brute_force("Why did the printer run out of numbers?", CORPUS)]
    fused = [key for key, _ in reciprocal_rank_fusion([bm25, dense])]
    assert [hit.passage_id for hit in result.hits] == fused[:8]
    assert result.hits[0].passage_id == 201 and result.hits[0].similarity is not None
    assert result.best_similarity == pytest.approx(
        max(s for _, s in brute_force("Why did the printer run out of numbers?", CORPUS)), abs=1e-5
    )


def test_the_document_cap_applies_after_fusion(root, searcher):
    passages = [
        IndexedPassage(
            400 + n,
            "long-runbook",
            "big",
            f"Spool cleanup step {n}: delete spool requests.",
            "Spool runbook",
            f"Step {n}",
        )
        for n in range(6)
    ]
    passages.append(IndexedPassage(410, "short-note", "big", "Spool requests pile up in SP01.", "Spool note", ""))
    IndexStore(root, embedder=shared_embedder()).rebuild("big", passages, generation=1)
    result = hybrid(searcher, ["big"], "delete spool requests", floor=-1.0)
    documents = [hit.document_id for hit in result.hits]
    assert documents.count("long-runbook") == 3 and "short-note" in documents
    lone = [dataclasses.replace(p, pack="lone") for p in passages if p.document_id == "long-runbook"]
    IndexStore(root, embedder=shared_embedder()).rebuild("lone", lone, generation=1)
    assert len(hybrid(searcher, ["lone"], "delete spool requests", floor=-1.0).hits) == 6


def test_an_unrelated_question_comes_back_empty_from_both_halves(store, searcher):
    question = "What does the horoscope foretell for Sagittarius?"
    assert searcher.search(["ops", "other"], question).no_evidence
    result = hybrid(searcher, ["ops", "other"], question)
    assert result.no_evidence and result.hits == []
    assert result.best_similarity is not None and result.best_similarity < DENSE_FLOOR


def test_a_dense_only_candidate_above_the_floor_counts(store, searcher):
    """No shared term with the printer passage, but close in meaning: the dense half finds it."""
    question = "a tag printing machine without ink tape"
    assert searcher.search(["ops"], question).no_evidence
    result = hybrid(searcher, ["ops"], question, floor=0.0)
    assert result.hits[0].passage_id == 201 and result.hits[0].similarity == result.best_similarity


def test_a_dense_score_never_depends_on_other_packs(store, searcher):
    question = "database outage because the log was full"
    embedder = shared_embedder()
    vector = question_vector(embedder, question)
    alone = {
        hit.passage_id: hit.similarity for hit in searcher.nearest(["ops"], vector, 24, model_id=embedder.model_id)
    }
    together = {
        hit.passage_id: hit.similarity
        for hit in searcher.nearest(["ops", "other"], vector, 24, model_id=embedder.model_id)
    }
    assert set(together) == set(alone) | {301, 302}
    assert {pid: together[pid] for pid in alone} == alone
    in_ops = [hit for hit in hybrid(searcher, ["ops", "other"], question, floor=-1.0).hits if hit.pack == "ops"]
    assert all(hit.similarity == alone[hit.passage_id] for hit in in_ops)


# --- one model per index -------------------------------------------------------


class OtherModel(Embedder):
    @property
    def model_id(self) -> str:
        return "another model"


def test_an_index_of_another_model_is_refused_and_rebuilt(store, root, searcher):
    other = IndexStore(root, embedder=OtherModel())
    assert other.needs_rebuild_for_model("ops") and not store.needs_rebuild_for_model("ops")
    with pytest.raises(ModelMismatch, match="run `cairn index rebuild`"):
        other.write("ops", add=[CORPUS[0]], delete_documents=["printer-incident"], generation=2)
    assert store.generation("ops") == 1  # nothing was written
    with pytest.raises(ModelMismatch):
        searcher.search_hybrid(["ops"], "printer", [0.0] * 256, model_id="another model", floor=0.0)
    other.rebuild("ops", CORPUS, generation=2)
    assert store.model("ops") == "another model" and not other.needs_rebuild_for_model("ops")
    with pytest.raises(ModelMismatch):
        hybrid(searcher, ["ops"], "printer")


def test_an_index_without_vectors_needs_a_rebuild(root):
    IndexStore(root).rebuild("ops", CORPUS, generation=1)
    assert IndexStore(root).model("ops") is None
    assert IndexStore(root, embedder=shared_embedder()).needs_rebuild_for_model("ops")
    with pytest.raises(ModelMismatch, match="built by no embedding model"):
        IndexStore(root, embedder=shared_embedder()).write("ops", add=[CORPUS[0]], generation=2)


@pytest.fixture
def hybrid_app(tmp_path):
    """The suite's app, with CAIRN_RETRIEVAL=hybrid (so indexes carry vectors)."""
    with migrated_app(tmp_path / "data", CAIRN_RETRIEVAL="hybrid") as app:
        yield app


@pytest.fixture
def hybrid_pack(hybrid_app):
    from portal.packs.services import create_pack

    return create_pack("ops", "Operations", "generic")


def test_repair_at_start_rebuilds_an_index_built_by_another_model(hybrid_pack):
    from portal.documents.services import upload_file
    from portal.search import service

    pack = hybrid_pack

    upload_file(pack, "locks.md", b"# Locks\n\nDelete stale lock entries in SM12.\n", None)
    IndexStore(service.indexes().root, embedder=OtherModel()).rebuild("ops", [], generation=pack.index_generation)
    assert service.indexes().store.needs_rebuild_for_model("ops")
    assert service.repair_indexes() == ["ops"]
    assert service.indexes().store.model("ops") == embedding.model_id()
    found = service.search_packs([pack], "stale lock entries")
    assert [hit.document_id for hit in found.hits] == ["locks"] and found.best_similarity > DENSE_FLOOR


def test_bm25_retrieval_indexes_no_vectors_and_hybrid_repairs_that(app, pack):
    """The suite's default app is BM25: no vectors; a hybrid start then rebuilds the pack with them."""
    from portal.documents.services import upload_file
    from portal.search import service

    upload_file(pack, "locks.md", b"# Locks\n\nDelete stale lock entries in SM12.\n", None)
    assert service.indexes().store.model("ops") is None
    assert service.search_packs([pack], "SM12").best_similarity is None
    with pytest.raises(ModelMismatch):
        service.search_packs([pack], "SM12", retrieval="hybrid")
    hybrid = service.Indexes(service.indexes().root, 0.9, 0.4, "hybrid")
    assert hybrid.store.needs_rebuild_for_model("ops")


def test_a_write_onto_another_models_index_rebuilds_the_pack(hybrid_pack):
    from portal.documents.services import upload_file
    from portal.search import service

    pack = hybrid_pack

    IndexStore(service.indexes().root, embedder=OtherModel()).rebuild("ops", [], generation=0)
    upload_file(pack, "locks.md", b"# Locks\n\nDelete stale lock entries in SM12.\n", None)
    assert service.indexes().store.model("ops") == embedding.model_id()
    assert [h.document_id for h in service.search_packs([pack], "SM12", retrieval="hybrid").hits] == ["locks"]


def test_an_incremental_update_onto_another_models_index_writes_nothing(store, root):
    """The outbox's write path: ``update`` refuses to append (no mixed vectors) unless the plan replaces all."""
    from portal.search.index import IndexUpdate

    other = IndexStore(root, embedder=OtherModel())
    planned = []
    incremental = lambda shown: (
        planned.append(shown) or IndexUpdate(generation=2, add=[CORPUS[0]], delete_documents=["printer-incident"])
    )
    with pytest.raises(ModelMismatch):
        other.update("ops", incremental)
    with pytest.raises(ModelMismatch):  # nothing to write, but the index still needs its rebuild
        other.update("ops", lambda shown: None)
    assert planned == [1] and store.generation("ops") == 1 and store.model("ops") == embedding.model_id()
    done = other.update("ops", lambda shown: IndexUpdate(generation=3, add=CORPUS, replace_all=True))
    assert done.added == len(CORPUS) and other.model("ops") == "another model" and other.generation("ops") == 3


def test_hybrid_search_by_terms_gives_the_packs_statistics(store, searcher):
    """The evidence check reads the searched packs' statistics in hybrid mode too."""
    from portal.search.analysis import question_terms

    question = "Which transaction deletes stale lock entries?"
    terms = question_terms(question)
    embedder = shared_embedder()
    vector = question_vector(embedder, question)
    by_terms = searcher.search_hybrid(
        ["ops"], question, vector, model_id=embedder.model_id, floor=DENSE_FLOOR, terms=terms
    )
    by_text = hybrid(searcher, ["ops"], question)
    assert [h.passage_id for h in by_terms.hits] == [h.passage_id for h in by_text.hits]
    assert by_terms.hits[0].passage_id == 206 and by_terms.best_similarity == by_text.best_similarity
    bm25 = searcher.search(["ops"], question, terms=terms)
    assert (by_terms.passages, by_terms.doc_freqs) == (bm25.passages, bm25.doc_freqs)
    assert by_terms.passages == len(CORPUS) and by_terms.doc_freqs["stale"] == 1
    assert by_text.doc_freqs == {} and by_text.passages == 0  # only asked for with terms
    both = searcher.search_hybrid(
        ["ops", "other"], question, vector, model_id=embedder.model_id, floor=DENSE_FLOOR, terms=terms
    )
    assert both.passages == len(CORPUS) + len(OTHER)


def test_ask_in_a_hybrid_deployment_answers_from_the_evidence_and_refuses_without(hybrid_pack):
    from portal.agents.services import create_agent
    from portal.documents.services import upload_file
    from portal.runs.ask import ask

    upload_file(
        hybrid_pack, "locks.md", b"# Locks\n\nDelete stale lock entries in SM12 after checking the owner.\n", None
    )
    agent = create_agent(None, "desk", "Desk", "preferred", None, "", ["ops"], offered=True)
    run = ask(agent, None, "How do I delete stale lock entries?")
    assert "SM12" in run.answer and run.answer_basis == "documents"
    refused = ask(agent, None, "What's a good recipe for apple strudel?")
    assert refused.answer == "No evidence found in the granted packs for this question."


# --- the command line ----------------------------------------------------------


def test_cairn_index_rebuild_restores_the_vectors(tmp_path):
    env = {
        **os.environ,
        "CAIRN_DATA_DIR": str(tmp_path / "data"),
        "CAIRN_RETRIEVAL": "hybrid",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    env.pop("DATABASE_URL", None)
    run = lambda *args: subprocess.run(
        [sys.executable, "-m", "portal.cli", *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180
    )
    assert run("init").returncode == 0
    assert run("packs", "create", "notes", "--title", "Notes").returncode == 0
    (tmp_path / "printer.md").write_text("# Printer incident\n\nThe label printer ran out of ribbon.\n")
    ingested = run("ingest", "notes", str(tmp_path / "printer.md"), "--json")
    assert json.loads(ingested.stdout)["document"]["not_embedded"] == 0
    index = tmp_path / "data" / "indexes"
    IndexStore(index).rebuild("notes", [], generation=0)  # an index without vectors, behind the database
    assert IndexStore(index).model("notes") is None
    rebuilt = run("index", "rebuild")
    assert rebuilt.returncode == 0 and "notes: 1 passages" in rebuilt.stdout
    assert IndexStore(index).model("notes") == embedding.model_id()
    embedder = shared_embedder()
    searcher = Searcher(index)
    try:
        nearest = searcher.nearest(
            ["notes"], question_vector(embedder, "printer without ink ribbon"), 24, model_id=embedder.model_id
        )
    finally:
        searcher.close()
    assert len(nearest) == 1 and nearest[0].document_id == "printer"
    found = json.loads(run("search", "printer ribbon", "--pack", "notes", "--json").stdout)
    assert [hit["document_id"] for hit in found["hits"]] == ["printer"]


def test_the_lexical_half_asks_for_the_document_words_of_a_vocabulary_too(store, searcher):
    """A user's word no passage holds ("wrench") finds the passage by the word a vocabulary gives for it."""
    question = "Which wrench do I take?"
    plain = hybrid(searcher, ["ops"], question, floor=1.0)  # the dense half kept out: only words decide
    embedder = shared_embedder()
    expanded = searcher.search_hybrid(
        ["ops"],
        question,
        question_vector(embedder, question),
        model_id=embedder.model_id,
        floor=1.0,
        terms=["wrench", "take"],
        expanded=("lock",),
    )
    assert plain.hits == []
    assert [hit.passage_id for hit in expanded.hits] == [206]
    assert expanded.doc_freqs == {"wrench": 0, "take": 0, "lock": 1}  # the statistics cover the document word
