"""The packaged embedding model: wordllama's 256-dimension static token embeddings, loaded offline.

The model ships inside the ``wordllama`` wheel (weights and tokenizer), so nothing
is downloaded at run time and no torch is needed. A text's vector is the mean of
its tokens' vectors, normalised to length 1, so a dot product is a cosine.

We compute exactly what ``WordLlama.embed(text, norm=True)`` computes for the
text with its whitespace collapsed, but faster: the model's tokenizer never
merges across a space, so each word's token ids are looked up once and cached,
and the mean is taken over those ids. Tokenizing every passage whole (about a
thousand characters each) ran at about two thousand passages a second here, too
slow for ingest's target of a thousand a second with everything else it does.

``MODEL_ID`` names the model and the text recipe; an index records it and is
rebuilt when it differs (vectors of two models are never mixed).
"""

from __future__ import annotations

import functools
import importlib.metadata
import threading
from pathlib import Path

import numpy as np

from portal.search.errors import SearchError

CONFIG_NAME = "l2_supercat"
DIMENSIONS = 256
RECIPE = "title-heading-text/1"
"""Bump when ``passage_text`` or the tokenisation changes: every index then rebuilds its vectors."""
DENSE_FLOOR = 0.25
"""Cosine below which a dense candidate does not count; calibrated for this model in docs/retrieval-quality.md."""
_WORD_CACHE_LIMIT = 500_000
_BATCH = 256


class EmbeddingUnavailable(SearchError):
    """The packaged model is missing or incomplete; hybrid search cannot run."""


@functools.cache
def model_id() -> str:
    """Which model and recipe built a vector, e.g. ``wordllama 0.4.0.post1 l2_supercat 256d title-heading-text/1``.

    Cached: reading the package metadata costs milliseconds, and every hybrid search asks.
    """
    try:
        version = importlib.metadata.version("wordllama")
    except importlib.metadata.PackageNotFoundError:
        version = "missing"
    return f"wordllama {version} {CONFIG_NAME} {DIMENSIONS}d {RECIPE}"


def passage_text(title: str, heading_path: str, text: str) -> str:
    """What is embedded for a passage: ``title — heading path — text`` (the stored text stays as written)."""
    return " — ".join(part for part in (title, heading_path, text) if part)


def can_embed(text: str) -> bool:
    """Whether ``text`` gives a vector: it needs at least one token, i.e. something besides whitespace."""
    return bool(text.split())


def canonical(text: str) -> str:
    """The text with every run of whitespace made one space (the model gives spaces no meaning)."""
    return " ".join(text.split())


def question_vector(embedder: Embedder, question: str) -> list[float] | None:
    """The unit vector a question is searched with, as a list for Lucene; None when it has nothing to embed.

    Question words ("what", "how", "do", …) are left out as in the BM25 half: in a
    mean of token vectors they pull every question towards every other one
    (measured on the demo set: paraphrase Recall@8 of the dense half alone 0.881
    with them, 0.929 without; docs/retrieval-quality.md).
    """
    from portal.search.analysis import question_words

    vector = embedder.embed_one(question_words(question))
    return vector.tolist() if vector is not None else None


class Embedder:
    """Turns texts into unit vectors with the packaged model; thread-safe, loads on first use."""

    def __init__(self):
        self._lock = threading.Lock()
        self._model = None
        self._word_ids: dict[str, np.ndarray] = {}

    @property
    def model_id(self) -> str:
        return model_id()

    def embed(self, texts: list[str]) -> list[np.ndarray | None]:
        """One float32 unit vector per text, or None for a text with no token (nothing to embed)."""
        vectors: list[np.ndarray | None] = []
        for start in range(0, len(texts), _BATCH):
            vectors.extend(self._embed_batch(texts[start : start + _BATCH]))
        return vectors

    def embed_one(self, text: str) -> np.ndarray | None:
        return self.embed([text])[0]

    def _embed_batch(self, texts: list[str]) -> list[np.ndarray | None]:
        model = self._loaded()
        words = [text.split() for text in texts]  # ``can_embed`` is False exactly for an empty list here
        with self._lock:
            self._learn_words({word for text_words in words for word in text_words}, model)
            ids = [[self._word_ids[word] for word in text_words] for text_words in words]
        table = model.embedding
        out: list[np.ndarray | None] = []
        for text_ids in ids:
            flat = np.concatenate(text_ids) if text_ids else np.empty(0, dtype=np.int32)
            if flat.size == 0:
                out.append(None)
                continue
            total = table.take(flat, axis=0).sum(axis=0, dtype=np.float32)
            norm = float(np.linalg.norm(total))
            out.append(total / norm if norm > 0 and np.isfinite(norm) else None)
        return out

    def _learn_words(self, words: set[str], model) -> None:
        """Tokenize the words not seen yet, all in one call to the tokenizer."""
        missing = [word for word in words if word not in self._word_ids]
        if not missing:
            return
        if len(self._word_ids) + len(missing) > _WORD_CACHE_LIMIT:
            self._word_ids.clear()
        vocabulary = model.embedding.shape[0]
        for word, encoding in zip(missing, model.tokenizer.encode_batch(missing, add_special_tokens=False)):
            self._word_ids[word] = np.clip(np.asarray(encoding.ids, dtype=np.int32), 0, vocabulary - 1)

    def _loaded(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = load_model()
        return self._model


def package_folder() -> Path:
    """The installed ``wordllama`` package's folder, which holds the weights and the tokenizer."""
    try:
        import wordllama
    except ImportError as error:
        raise EmbeddingUnavailable("The wordllama package is not installed; hybrid search needs it.") from error
    return Path(wordllama.__file__).parent


def load_model():
    """The model from the package's own folder, never from the network.

    ``WordLlama.load()`` looks for the tokenizer under ``tokenizer/`` by default
    (the wheel has ``tokenizers/``) and would then download it; pointing
    ``cache_dir`` at the package and forbidding downloads keeps it offline. We
    check the two files first so a broken install fails with a clear message
    instead of a download attempt.
    """
    folder = package_folder()
    from wordllama import WordLlama

    weights = folder / "weights" / f"{CONFIG_NAME}_{DIMENSIONS}.safetensors"
    tokenizer = folder / "tokenizers" / f"{CONFIG_NAME}_tokenizer_config.json"
    for needed in (weights, tokenizer):
        if not needed.is_file():
            raise EmbeddingUnavailable(f"The wordllama package lacks {needed}; reinstall it.")
    model = WordLlama.load(config=CONFIG_NAME, dim=DIMENSIONS, cache_dir=folder, disable_download=True)
    model.tokenizer.no_padding()
    model.tokenizer.no_truncation()
    return model


_shared: Embedder | None = None
_shared_lock = threading.Lock()


def shared_embedder() -> Embedder:
    """The process-wide embedder (the model and the word cache are loaded once)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Embedder()
        return _shared
