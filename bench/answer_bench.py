"""Latency of ``portal.runs.ask.ask`` with the extractive answerer, at 100,000 passages in the granted packs.

Run on demand, not in the test suite:

    .venv/bin/python bench/answer_bench.py --passages 100000

Method: a temporary data folder and SQLite database (or ``--database-url``, a
fresh PostgreSQL database) migrated like production; N synthetic passages
(sentences of made-up words, Zipf-distributed, drawn with numpy from a fixed
seed; 10 passages of about 150 words per document) are inserted through the
Peewee models in bulk — documents, one revision each, passages with line
ranges, one multi-row INSERT per table and batch — and each pack's Lucene index is rebuilt from the database
(``search.service.rebuild_pack``, i.e. ``IndexStore.rebuild``). Uploading
100,000 passages through ``documents.services`` would take many minutes and
measure ingest, not answering. One agent in preferred mode is granted all the
packs. Each timed ``ask`` is the whole run as the try page does it: BM25 over
the granted packs, the acceptable-passage check, receipt building, the
extractive answer (the search analyzer's content terms as tokenizer) and the
transaction that stores the run and its receipt (SQLite, WAL, synchronous
FULL). Targets: p95 under 150 ms at 100,000 passages, under 250 ms at a
million (issue 17). ``--reuse`` repeats only the timing on an earlier run's
data folder and database.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from measure import folder_bytes, make_vocabulary, percentile  # noqa: E402

from portal import create_app  # noqa: E402
from portal.agents.services import create_agent  # noqa: E402
from portal.db import database  # noqa: E402
from portal.migrate import migrate  # noqa: E402
from portal.models import Agent, Document, Pack, Passage, Revision  # noqa: E402
from portal.packs.services import create_pack  # noqa: E402
from portal.runs.ask import ask  # noqa: E402
from portal.search import jvm  # noqa: E402
from portal.search.service import rebuild_pack  # noqa: E402

PASSAGES_PER_DOCUMENT = 10
SENTENCES_PER_PASSAGE = 12
QUERY_SKIPS_TOP_RANKS = 10
BATCH = 1_000  # documents per transaction
ROWS_PER_INSERT = 1_000  # passages per INSERT: 8 parameters a row stays under SQLite's 32,766


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=100_000, help="passages in the granted packs (default 100000)")
    parser.add_argument("--packs", type=int, default=2, help="granted packs the passages are spread over (default 2)")
    parser.add_argument("--questions", type=int, default=300, help="timed questions (default 300)")
    parser.add_argument("--warmup", type=int, default=30, help="untimed questions first (default 30)")
    parser.add_argument("--vocabulary", type=int, default=30_000, help="distinct words (default 30000)")
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--data-dir", type=Path, help="use this folder instead of a temporary one")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON too")
    parser.add_argument(
        "--database-url",
        help="a fresh, empty database to load (e.g. postgresql://postgres@127.0.0.1:5432/bench); default SQLite "
        "in the data folder",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="the data folder and database hold an earlier run's corpus and indexes: only ask (repeat a timing)",
    )
    return parser.parse_args()


def word_indices(generator: np.random.Generator, cumulative: np.ndarray, count: int) -> np.ndarray:
    """``count`` vocabulary ranks drawn with Zipf weights (vectorised: a million passages are 150 million words)."""
    return np.searchsorted(cumulative, generator.random(count) * cumulative[-1], side="right")


def passage_texts(generator: np.random.Generator, vocabulary: np.ndarray, cumulative: np.ndarray, count: int):
    """``count`` passages: a heading line, a blank line and 12 sentences of 9-15 words wrapped two to a line."""
    lengths = generator.integers(9, 16, size=(count, SENTENCES_PER_PASSAGE))
    words = vocabulary[word_indices(generator, cumulative, int(lengths.sum()))].tolist()
    texts, position = [], 0
    for number, row in enumerate(lengths.tolist()):
        sentences = []
        for length in row:
            sentences.append(" ".join(words[position : position + length]).capitalize() + ".")
            position += length
        lines = [" ".join(sentences[k : k + 2]) for k in range(0, SENTENCES_PER_PASSAGE, 2)]
        texts.append(f"## Section {number % PASSAGES_PER_DOCUMENT}\n\n" + "\n".join(lines))
    return texts


def load_corpus(args, vocabulary: list[str]) -> list[Pack]:
    """Documents, revisions and passages inserted in bulk, then each pack's index rebuilt from the database.

    Rows go in with one multi-row INSERT per table and batch (a fresh corpus, so
    nothing else writes); the rebuild is ``cairn index rebuild``'s code path.
    """
    generator = np.random.default_rng(args.seed)
    words = np.array(vocabulary, dtype=object)
    cumulative = np.cumsum(1.0 / np.arange(1, len(vocabulary) + 1))
    packs = [create_pack(f"bench-{n}", f"Bench pack {n}", "generic") for n in range(args.packs)]
    documents = args.passages // PASSAGES_PER_DOCUMENT
    for start in range(0, documents, BATCH):
        numbers = range(start, min(start + BATCH, documents))
        texts = passage_texts(generator, words, cumulative, len(numbers) * PASSAGES_PER_DOCUMENT)
        with database().atomic():
            Document.insert_many(
                [
                    {
                        "pack": packs[number % len(packs)].id,
                        "doc_id": f"doc-{number}",
                        "title": f"Document {number}",
                        "current_version": 1,
                    }
                    for number in numbers
                ]
            ).execute()
            document_ids = dict(
                Document.select(Document.doc_id, Document.id)
                .where(Document.doc_id.in_([f"doc-{number}" for number in numbers]))
                .tuples()
            )
            mine = [texts[k : k + PASSAGES_PER_DOCUMENT] for k in range(0, len(texts), PASSAGES_PER_DOCUMENT)]
            Revision.insert_many(
                [
                    {
                        "document": document_ids[f"doc-{number}"],
                        "version": 1,
                        "text": "\n\n".join(parts),
                        "sha256": "0" * 64,
                    }
                    for number, parts in zip(numbers, mine)
                ]
            ).execute()
            revision_ids = dict(
                Revision.select(Revision.document, Revision.id)
                .where(Revision.document.in_(list(document_ids.values())))
                .tuples()
            )
            rows = []
            for number, parts in zip(numbers, mine):
                revision, line, offset = revision_ids[document_ids[f"doc-{number}"]], 1, 0
                for ordinal, text in enumerate(parts):
                    lines = text.count("\n") + 1
                    rows.append(
                        {
                            "revision": revision,
                            "ordinal": ordinal,
                            "text": text,
                            "line_start": line,
                            "line_end": line + lines - 1,
                            "char_start": offset,
                            "char_end": offset + len(text),
                            "heading_path": f"Document {number} > Section {ordinal}",
                        }
                    )
                    line += lines + 1
                    offset += len(text) + 2
            for first in range(0, len(rows), ROWS_PER_INSERT):
                Passage.insert_many(rows[first : first + ROWS_PER_INSERT]).execute()
    for pack in packs:
        Pack.update(index_generation=1).where(Pack.id == pack.id).execute()
    return packs


def rebuild_indexes(packs: list[Pack]) -> float:
    """Seconds to rebuild every pack's index from the database (``rebuild_all``'s per-pack step)."""
    started = time.perf_counter()
    for pack in packs:
        rebuild_pack(Pack.get_by_id(pack.id))
    return time.perf_counter() - started


def make_questions(count: int, vocabulary: list[str], rng: random.Random) -> list[str]:
    """3 to 7 words as frequent as in the text; one in ten shares no word with the corpus (no evidence)."""
    candidates = vocabulary[QUERY_SKIPS_TOP_RANKS:]
    cumulative = list(itertools.accumulate(1.0 / rank for rank in range(1, len(candidates) + 1)))
    questions = []
    for number in range(count):
        if number % 10 == 9:
            questions.append("what about payroll in antarctica?")
        else:
            words = rng.choices(candidates, cum_weights=cumulative, k=rng.randint(3, 7))
            questions.append("How do I " + " ".join(words) + "?")
    return questions


def target_p95_ms(passages: int) -> float:
    """Issue 17's targets: 150 ms up to 100,000 passages, 250 ms beyond (a million)."""
    return 150.0 if passages <= 100_000 else 250.0


def jvm_heap_megabytes() -> dict:
    """The JVM's heap: its maximum (-Xmx, ``CAIRN_JVM_HEAP``), what is in use and what it has taken from the OS."""
    with jvm.java_lock:
        runtime = jvm.J().JRuntime.getRuntime()
        total, free, maximum = runtime.totalMemory(), runtime.freeMemory(), runtime.maxMemory()
    return {"max": maximum >> 20, "used": (total - free) >> 20, "committed": total >> 20}


def main() -> None:
    args = parse_arguments()
    rng = random.Random(args.seed)
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="cairn-answer-bench-"))
    app = create_app(
        {
            "CAIRN_DATA_DIR": str(data_dir),
            "DATABASE_URL": args.database_url,
            "SECRET_KEY": "bench",
            "CAIRN_REPAIR_INDEX_ON_START": False,
            "CAIRN_MODEL_BASE_URL": None,
        }
    )
    with app.app_context():
        vocabulary = make_vocabulary(args.vocabulary, rng)
        load_seconds = rebuild_seconds = None
        if args.reuse:
            migrate(app.config["DATABASE"])  # an earlier run's database, from before the latest migrations
            packs = list(Pack.select().where(Pack.slug.startswith("bench-")).order_by(Pack.slug))
            agent = Agent.get(Agent.slug == "bench-agent")
        else:
            migrate(app.config["DATABASE"])
            started = time.perf_counter()
            packs = load_corpus(args, vocabulary)
            load_seconds = time.perf_counter() - started
            rebuild_seconds = rebuild_indexes(packs)
            agent = create_agent(None, "bench-agent", "Bench agent", "preferred", None, "", [p.slug for p in packs])
        passages = (
            Passage.select().join(Revision).join(Document).where(Document.pack.in_([p.id for p in packs])).count()
        )
        index_bytes = folder_bytes(data_dir / "indexes") if (data_dir / "indexes").is_dir() else folder_bytes(data_dir)
        questions = make_questions(args.warmup + args.questions, vocabulary, rng)
        for question in questions[: args.warmup]:
            ask(agent, None, question)
        totals, cpu, retrieval, extractive, references, statuses = [], [], [], [], [], {}
        for question in questions[args.warmup :]:
            begun, begun_cpu = time.perf_counter(), time.thread_time()
            run = ask(agent, None, question)
            totals.append((time.perf_counter() - begun) * 1000)
            cpu.append((time.thread_time() - begun_cpu) * 1000)
            retrieval.append(run.timings["retrieval_ms"])
            extractive.append(run.timings.get("extractive_ms", 0.0))
            references.append(run.references().count())
            statuses[run.status] = statuses.get(run.status, 0) + 1
        heap = jvm_heap_megabytes()

    def summary(samples):
        return {
            "p50": round(percentile(samples, 0.5), 2),
            "p95": round(percentile(samples, 0.95), 2),
            "mean": round(statistics.fmean(samples), 2),
            "max": round(max(samples), 2),
        }

    result = {
        "passages": args.passages,
        "packs": args.packs,
        "questions": args.questions,
        "database": "postgresql" if args.database_url else "sqlite",
        "passages_in_database": passages,
        "load_seconds": round(load_seconds, 1) if load_seconds is not None else None,
        "rebuild_seconds": round(rebuild_seconds, 1) if rebuild_seconds is not None else None,
        "index_megabytes": round(index_bytes / 1e6, 1),
        "jvm_heap_mb": heap,
        "ask_ms": summary(totals),
        "ask_cpu_ms": summary(cpu),
        "retrieval_ms": summary(retrieval),
        "extractive_ms": summary(extractive),
        "mean_references": round(statistics.fmean(references), 2),
        "statuses": statuses,
        "target_p95_ms": target_p95_ms(args.passages),
        "target_met": percentile(totals, 0.95) < target_p95_ms(args.passages),
    }
    print(markdown(result))
    if args.json:
        print(json.dumps(result))


def markdown(result: dict) -> str:
    rows = [
        ("`ask` end to end", result["ask_ms"]),
        ("`ask`, CPU time of the asking thread (Python and the Java it calls)", result["ask_cpu_ms"]),
        ("retrieval (BM25 + receipt)", result["retrieval_ms"]),
        ("extractive answer", result["extractive_ms"]),
    ]
    lines = [
        f"{result['passages_in_database']:,} passages in {result['packs']} granted packs on {result['database']} "
        f"(bulk insert {result['load_seconds']} s, index rebuild {result['rebuild_seconds']} s, indexes "
        f"{result['index_megabytes']:,} MB; JVM heap max/used/committed {result['jvm_heap_mb']} MB); "
        f"{result['questions']} questions, mean {result['mean_references']} references issued; "
        f"statuses {result['statuses']}",
        "",
        "| | p50 ms | p95 ms | mean ms | max ms |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {name} | {s['p50']} | {s['p95']} | {s['mean']} | {s['max']} |" for name, s in rows]
    lines += ["", f"Target p95 < {result['target_p95_ms']:.0f} ms: {'met' if result['target_met'] else 'NOT met'}"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
