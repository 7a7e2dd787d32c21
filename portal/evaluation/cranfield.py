"""The Cranfield collection through Cairn's own index and searcher.

Each abstract is indexed as one passage (title + text) in a temporary pack, so the
figures measure the analyzer, the query building and BM25 exactly as the portal
uses them. Judgement codes 1–4 are relevant with gains 4–1 (ENGINEERING.md).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from portal.evaluation.metrics import average_precision, mean, ndcg_at, recall_at
from portal.search.embedding import DENSE_FLOOR, question_vector, shared_embedder
from portal.search.index import IndexStore
from portal.search.schema import IndexedPassage
from portal.search.searcher import Searcher

# Plain Lucene BM25 with Anserini's English analyzer over title + abstract (ENGINEERING.md).
PLAIN_LUCENE = {
    (0.9, 0.4): {"ndcg@10": 0.341, "recall@100": 0.722, "map": 0.288},
    (1.2, 0.75): {"ndcg@10": 0.356, "recall@100": 0.736, "map": 0.305},
}
PACK = "cranfield"


@dataclass
class CranfieldResult:
    k1: float
    b: float
    queries: int
    ndcg_at_10: float
    recall_at_100: float
    map: float
    retrieval: str = "bm25"


def _records(path: Path) -> list[dict[str, str]]:
    """Parse the SMART format: ``.I id`` then fields ``.T``, ``.A``, ``.B``, ``.W``."""
    records, current, field = [], None, None
    for line in path.read_text(errors="replace").splitlines():
        marker = re.match(r"^\.([A-Z])\s*(.*)$", line)
        if marker and marker.group(1) == "I":
            current = {"id": marker.group(2).strip()}
            records.append(current)
            field = None
        elif marker:
            field = marker.group(1)
            current[field] = ""
        elif current is not None and field:
            current[field] += line + "\n"
    return records


def load(folder: Path):
    documents = {
        r["id"].lstrip("0") or "0": (r.get("T", "").strip(), r.get("W", "").strip())
        for r in _records(folder / "cran.all.1400")
    }
    # Queries are numbered 1..225 in file order in cranqrel, not by their .I numbers.
    queries = {str(n): r.get("W", "").strip() for n, r in enumerate(_records(folder / "cran.qry"), start=1)}
    gains: dict[str, dict[str, float]] = {}
    for line in (folder / "cranqrel").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2].lstrip("-").isdigit() and 1 <= int(parts[2]) <= 4:
            gains.setdefault(parts[0], {})[parts[1]] = float(5 - int(parts[2]))
    return documents, queries, gains


def evaluate(folder: Path, k1: float = 0.9, b: float = 0.4, retrieval: str = "bm25") -> CranfieldResult:
    """Judge the 225 queries with BM25 alone or with ``retrieval="hybrid"`` (BM25 + the packaged model, RRF)."""
    documents, queries, gains = load(folder)
    embedder = shared_embedder() if retrieval == "hybrid" else None
    with tempfile.TemporaryDirectory(prefix="cairn-cranfield-") as root:
        store = IndexStore(root, k1=k1, b=b, embedder=embedder)
        store.rebuild(
            PACK,
            (
                IndexedPassage(
                    passage_id=int(doc_id), document_id=doc_id, pack=PACK, text=text, title=title, heading_path=""
                )
                for doc_id, (title, text) in documents.items()
            ),
            generation=1,
        )
        searcher = Searcher(root, k1=k1, b=b)
        ndcg, recall, ap = [], [], []
        for query_id, judged in gains.items():
            if embedder is None:
                result = searcher.search([PACK], queries[query_id], limit=100, per_document_cap=100)
            else:
                result = searcher.search_hybrid(
                    [PACK],
                    queries[query_id],
                    question_vector(embedder, queries[query_id]),
                    model_id=embedder.model_id,
                    floor=DENSE_FLOOR,
                    limit=100,
                    per_document_cap=100,
                )
            ranked = [hit.document_id for hit in result.hits]
            relevant = set(judged)
            ndcg.append(ndcg_at(ranked, judged, 10))
            recall.append(recall_at(ranked, relevant, 100))
            ap.append(average_precision(ranked, relevant))
        searcher.close()
        store.close()
    return CranfieldResult(k1, b, len(gains), mean(ndcg), mean(recall), mean(ap), retrieval)
