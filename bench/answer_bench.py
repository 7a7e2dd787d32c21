"""Latency of ``portal.runs.ask.ask`` with the extractive answerer, at 100,000 passages in the granted packs.

Run on demand, not in the test suite:

    .venv/bin/python bench/answer_bench.py --passages 100000

Method: a temporary data folder and SQLite database migrated like production;
N synthetic passages (sentences of made-up words, Zipf-distributed, fixed
seed; 10 passages of about 150 words per document) are inserted through the
Peewee models in bulk — documents, one revision each, passages with line
ranges — and each pack's Lucene index is rebuilt from the database
(``search.service.rebuild_pack``, i.e. ``IndexStore.rebuild``). Uploading
100,000 passages through ``documents.services`` would take many minutes and
measure ingest, not answering. One agent in preferred mode is granted all the
packs. Each timed ``ask`` is the whole run as the try page does it: BM25 over
the granted packs, the acceptable-passage check, receipt building, the
extractive answer (the search analyzer's content terms as tokenizer) and the
transaction that stores the run and its receipt (SQLite, WAL, synchronous
FULL). Target: p95 under 150 ms.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from portal import create_app  # noqa: E402
from portal.agents.services import create_agent  # noqa: E402
from portal.db import database  # noqa: E402
from portal.migrate import migrate  # noqa: E402
from portal.models import Document, Pack, Passage, Revision  # noqa: E402
from portal.packs.services import create_pack  # noqa: E402
from portal.runs.ask import ask  # noqa: E402
from portal.search.service import rebuild_pack  # noqa: E402

TARGET_P95_MS = 150.0
PASSAGES_PER_DOCUMENT = 10
SENTENCES_PER_PASSAGE = 12
QUERY_SKIPS_TOP_RANKS = 10
BATCH = 1_000


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
    return parser.parse_args()


def make_vocabulary(size: int, rng: random.Random) -> list[str]:
    """Pronounceable made-up words, most frequent first; none is an English stopword."""
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


def sentence(rng: random.Random, vocabulary: list[str], cumulative: list[float]) -> str:
    words = rng.choices(vocabulary, cum_weights=cumulative, k=rng.randint(9, 15))
    return " ".join(words).capitalize() + "."


def passage_text(number: int, rng, vocabulary, cumulative) -> str:
    """A heading line, a blank line and a paragraph of sentences wrapped two to a line (~150 words)."""
    sentences = [sentence(rng, vocabulary, cumulative) for _ in range(SENTENCES_PER_PASSAGE)]
    lines = [" ".join(pair) for pair in itertools.zip_longest(sentences[::2], sentences[1::2], fillvalue="")]
    return f"## Section {number}\n\n" + "\n".join(line.strip() for line in lines)


def load_corpus(args, rng: random.Random, vocabulary: list[str]) -> list[Pack]:
    """Documents, revisions and passages inserted in bulk, then each pack's index rebuilt from the database."""
    cumulative = list(itertools.accumulate(1.0 / rank for rank in range(1, len(vocabulary) + 1)))
    packs = [create_pack(f"bench-{n}", f"Bench pack {n}", "generic") for n in range(args.packs)]
    documents = args.passages // PASSAGES_PER_DOCUMENT
    for start in range(0, documents, BATCH):
        with database().atomic():
            for number in range(start, min(start + BATCH, documents)):
                pack = packs[number % len(packs)]
                texts = [passage_text(k, rng, vocabulary, cumulative) for k in range(PASSAGES_PER_DOCUMENT)]
                full = "\n\n".join(texts)
                document = Document.create(
                    pack=pack, doc_id=f"doc-{number}", title=f"Document {number}", current_version=1
                )
                revision = Revision.create(document=document, version=1, text=full, sha256="0" * 64)
                rows, line, offset = [], 1, 0
                for ordinal, text in enumerate(texts):
                    lines = text.count("\n") + 1
                    rows.append(
                        {
                            "revision": revision.id,
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
                Passage.insert_many(rows).execute()
    for pack in packs:
        Pack.update(index_generation=1).where(Pack.id == pack.id).execute()
        rebuild_pack(pack)
    return packs


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


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    args = parse_arguments()
    rng = random.Random(args.seed)
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="cairn-answer-bench-"))
    app = create_app(
        {
            "CAIRN_DATA_DIR": str(data_dir),
            "DATABASE_URL": None,
            "SECRET_KEY": "bench",
            "CAIRN_REPAIR_INDEX_ON_START": False,
            "CAIRN_MODEL_BASE_URL": None,
        }
    )
    with app.app_context():
        migrate(app.config["DATABASE"])
        vocabulary = make_vocabulary(args.vocabulary, rng)
        started = time.perf_counter()
        packs = load_corpus(args, rng, vocabulary)
        load_seconds = time.perf_counter() - started
        agent = create_agent(None, "bench-agent", "Bench agent", "preferred", None, "", [p.slug for p in packs])
        questions = make_questions(args.warmup + args.questions, vocabulary, rng)
        for question in questions[: args.warmup]:
            ask(agent, None, question)
        totals, retrieval, extractive, references, statuses = [], [], [], [], {}
        for question in questions[args.warmup :]:
            begun = time.perf_counter()
            run = ask(agent, None, question)
            totals.append((time.perf_counter() - begun) * 1000)
            retrieval.append(run.timings["retrieval_ms"])
            extractive.append(run.timings.get("extractive_ms", 0.0))
            references.append(run.references().count())
            statuses[run.status] = statuses.get(run.status, 0) + 1

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
        "load_and_index_seconds": round(load_seconds, 1),
        "ask_ms": summary(totals),
        "retrieval_ms": summary(retrieval),
        "extractive_ms": summary(extractive),
        "mean_references": round(statistics.fmean(references), 2),
        "statuses": statuses,
        "target_p95_ms": TARGET_P95_MS,
        "target_met": percentile(totals, 0.95) < TARGET_P95_MS,
    }
    print(markdown(result))
    if args.json:
        print(json.dumps(result))


def markdown(result: dict) -> str:
    rows = [
        ("`ask` end to end", result["ask_ms"]),
        ("retrieval (BM25 + receipt)", result["retrieval_ms"]),
        ("extractive answer", result["extractive_ms"]),
    ]
    lines = [
        f"{result['passages']:,} passages in {result['packs']} granted packs (bulk insert + index rebuild: "
        f"{result['load_and_index_seconds']} s); {result['questions']} questions, mean "
        f"{result['mean_references']} references issued; statuses {result['statuses']}",
        "",
        "| | p50 ms | p95 ms | mean ms | max ms |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {name} | {s['p50']} | {s['p95']} | {s['mean']} | {s['max']} |" for name, s in rows]
    lines += ["", f"Target p95 < {result['target_p95_ms']:.0f} ms: {'met' if result['target_met'] else 'NOT met'}"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
