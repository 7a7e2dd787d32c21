"""Ingest throughput end to end: files → read, classify, split, store, index (`cairn ingest`'s code path).

    .venv/bin/python bench/ingest_bench.py --passages 20000

Generates Markdown files of realistic prose (headings, lists, identifiers) in a
temporary folder, ingests them into a fresh temporary data folder through
`portal.documents.ingest_files.ingest_paths` and reports passages per second.
Target: at least 1,000 passages per second.

The same files are ingested twice in one run, into two fresh data folders:
with ``CAIRN_RETRIEVAL=hybrid`` (each passage indexed with its vector) and with
``bm25`` (no vectors), so the cost of embedding shows next to the baseline.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "idoc queue backlog partner status inbound outbound job spool request transport import lock entry "
    "update task work process dump memory kernel certificate destination rfc batch schedule billing "
    "delivery order invoice plant warehouse release downtime restart checklist monitor alert threshold "
    "owner escalation follow-up root cause fix symptom system client host database table growth"
).split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 18))]
    return " ".join(words).capitalize() + f" ({rng.choice(['SM37', 'SM12', 'ST22', 'WE02', 'SP01'])})."


def document(rng: random.Random, sections: int) -> str:
    parts = [f"# Runbook {rng.randint(1, 10**6)}\n"]
    for n in range(sections):
        parts.append(f"## Step {n + 1}\n")
        parts.append(" ".join(sentence(rng) for _ in range(6)) + "\n")
        parts.append("\n".join(f"- {sentence(rng)}" for _ in range(3)) + "\n")
    parts.append("Keywords: runbook, benchmark\n")
    return "\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=20_000, help="about how many passages to ingest")
    parser.add_argument("--sections", type=int, default=20, help="sections per file (about 1 passage each)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="cairn-ingest-bench-") as scratch:
        root = Path(scratch)
        files = []
        for n in range(max(1, args.passages // args.sections)):
            path = root / "files" / f"runbook-{n:05d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(document(rng, args.sections))
            files.append(path)

        results = [ingest(root / "with-vectors", files, vectors=True), ingest(root / "bm25-only", files, vectors=False)]
    print("| index | files | passages | seconds | passages/s |\n|---|---|---|---|---|")
    for result in results:
        print(
            f"| {result['index']} | {result['files']} | {result['passages']} | {result['seconds']} | "
            f"{result['passages_per_second']} |"
        )
    print(json.dumps(results))
    return 0 if all(result["refused"] == 0 for result in results) else 1


def ingest(data_dir: Path, files: list[Path], vectors: bool) -> dict:
    """Ingest ``files`` into a fresh data folder and time it (the first file, which starts the JVM, is not timed)."""
    from portal import create_app
    from portal.cli.packs import outcome_json
    from portal.documents.ingest_files import ingest_paths
    from portal.migrate import migrate
    from portal.packs.services import create_pack

    app = create_app(
        {
            "CAIRN_DATA_DIR": str(data_dir),
            "SECRET_KEY": "bench",
            "CAIRN_REPAIR_INDEX_ON_START": False,
            "CAIRN_RETRIEVAL": "hybrid" if vectors else "bm25",
        }
    )
    with app.app_context():
        migrate(app.config["DATABASE"])
        create_pack("bench", "Benchmark")
        list(ingest_paths("bench", files[:1]))  # start the JVM (and load the model) outside the timing
        started = time.perf_counter()
        lines = [outcome_json(path, outcome) for path, outcome in ingest_paths("bench", files[1:])]
        elapsed = time.perf_counter() - started
        app.extensions["cairn_indexes"].close()
    passages = sum(line["document"]["passages"] for line in lines if line["document"])
    refused = sum(1 for line in lines if line["status"] == "refused")
    return {
        "index": "hybrid (BM25 + vectors)" if vectors else "bm25 (no vectors)",
        "files": len(lines),
        "refused": refused,
        "passages": passages,
        "seconds": round(elapsed, 2),
        "passages_per_second": round(passages / elapsed),
    }


if __name__ == "__main__":
    sys.exit(main())
