"""The parent half of the reader process: starts the child (``reader_child``), kills it at the deadline.

The child is a fresh interpreter (``subprocess``: fork and exec at once, safe
beside a running JVM) that bounds its own memory (see ``reader_child``). It gets
``limits.READ_SECONDS`` to send the text and then ``limits.IMAGE_SECONDS`` more
for the pictures; pictures still unfinished then are counted as ``deadline``.
Everything travels through pipes: no temporary file is written.
"""

import logging
import os
import selectors
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from portal.errors import Refused
from portal.ingest import limits
from portal.ingest.reader_child import FrameReader, pack_frame

log = logging.getLogger(__name__)

PORTAL_DIR = Path(__file__).resolve().parents[1]
# Imports portal.ingest.reader_child without running portal/__init__.py (the app factory
# and its imports) in the child: the child needs only portal.errors and portal.ingest.
_BOOTSTRAP = (
    "import sys, types; package = types.ModuleType('portal'); package.__path__ = [sys.argv[1]]; "
    "sys.modules['portal'] = package; from portal.ingest.reader_child import main; main()"
)
# The child stops its own picture work at IMAGE_SECONDS; this is how much later the parent kills it.
_GRACE_SECONDS = 1.0
_CHUNK = 1 << 16
# Each child may use up to WORKER_MEMORY_BYTES; at most this many read at once in
# one server process, and a further upload waits for a free slot.
_READERS_AT_ONCE = threading.BoundedSemaphore(max(2, os.cpu_count() or 2))


@dataclass
class ReaderResult:
    """What the child reported: the text with placeholders and the fate of each picture."""

    text: str
    labels: list[str]
    pages: int | None
    kept: dict[int, tuple[bytes, int, int]] = field(default_factory=dict)
    not_kept: dict[int, str] = field(default_factory=dict)
    facts: dict[int, dict] = field(default_factory=dict)
    title: str = ""


def run_reader(kind: str, data: bytes, *, label: str | None = None) -> ReaderResult:
    """Read ``data`` (kind ``docx``, ``pdf`` or ``image``) in a child process; raise Refused."""
    if not _READERS_AT_ONCE.acquire(timeout=limits.READ_SECONDS):
        raise limits.refuse_busy()
    try:
        return _run_child(kind, data, label)
    finally:
        _READERS_AT_ONCE.release()


def _run_child(kind: str, data: bytes, label: str | None) -> ReaderResult:
    request = pack_frame({"kind": kind, "label": label, "image_seconds": limits.IMAGE_SECONDS}, data)
    process = subprocess.Popen(
        [sys.executable or "python3", "-I", "-c", _BOOTSTRAP, str(PORTAL_DIR)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        close_fds=True,
    )
    conversation = _Conversation(kind)
    try:
        return conversation.run(process, request)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            try:
                stream.close()
            except OSError:
                pass
        if conversation.stderr:
            log.info("reader process for %s wrote: %s", kind, conversation.stderr.decode("utf-8", "replace"))


class _Conversation:
    def __init__(self, kind: str):
        self.kind = kind
        self.frames = FrameReader()
        self.stderr = bytearray()
        self.result: ReaderResult | None = None
        self.done = False

    def run(self, process: subprocess.Popen, request: bytes) -> ReaderResult:
        pending = memoryview(request)
        deadline = time.monotonic() + limits.READ_SECONDS
        with selectors.DefaultSelector() as selector:
            for stream, events in (
                (process.stdin, selectors.EVENT_WRITE),
                (process.stdout, selectors.EVENT_READ),
                (process.stderr, selectors.EVENT_READ),
            ):
                os.set_blocking(stream.fileno(), False)
                selector.register(stream, events)
            readers = 2
            while readers:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return self.out_of_time()
                for key, _ in selector.select(remaining):
                    stream = key.fileobj
                    if stream is process.stdin:
                        pending = self.write(stream, pending)
                        if not pending:
                            selector.unregister(stream)
                            stream.close()
                        continue
                    chunk = os.read(stream.fileno(), _CHUNK)
                    if not chunk:
                        selector.unregister(stream)
                        readers -= 1
                    elif stream is process.stderr:
                        self.stderr = (self.stderr + chunk)[-8192:]
                    else:
                        had_text = self.result is not None
                        self.receive(chunk)
                        if self.done:
                            return self.result
                        if self.result is not None and not had_text:
                            deadline = time.monotonic() + limits.IMAGE_SECONDS + _GRACE_SECONDS
        return self.ended(process.wait())

    @staticmethod
    def write(stream, pending: memoryview) -> memoryview:
        try:
            written = os.write(stream.fileno(), pending[:_CHUNK])
        except BlockingIOError:
            return pending
        except BrokenPipeError:
            return pending[len(pending) :]  # the child is gone; its exit is handled below
        return pending[written:]

    def receive(self, chunk: bytes) -> None:
        try:
            frames = self.frames.feed(chunk)
        except (ValueError, UnicodeDecodeError):
            raise limits.refuse_damaged("file", "its reader sent a malformed reply") from None
        for meta, blob in frames:
            kind = meta.get("type")
            if kind == "refused":
                reason = meta.get("reason")
                if reason not in limits.REASONS:
                    raise limits.refuse_damaged("file")
                raise Refused(reason, str(meta.get("message", "")))
            if kind == "text":
                self.result = ReaderResult(
                    str(meta["text"]),
                    [str(x) for x in meta["labels"]],
                    meta.get("pages"),
                    title=str(meta.get("title") or ""),
                )
            elif kind == "figure" and self.result is not None:
                self.result.kept[int(meta["slot"])] = (blob, int(meta["width"]), int(meta["height"]))
            elif kind == "not_kept" and self.result is not None:
                slot = int(meta["slot"])
                reason = meta.get("reason")
                self.result.not_kept[slot] = reason if reason in limits.IMAGE_REASONS else "decode"
                self.result.facts[slot] = {k: int(meta.get(k) or 0) for k in ("width", "height", "size")}
            elif kind == "done":
                self.done = True

    def out_of_time(self) -> ReaderResult:
        if self.result is None:
            raise limits.refuse_timeout(limits.READ_SECONDS)
        return self.result  # pictures without an outcome are counted as "deadline"

    def ended(self, returncode: int) -> ReaderResult:
        """The child exited without finishing: a crash, or memory ran out."""
        log.warning("reader process for %s ended early with status %s", self.kind, returncode)
        if self.result is None:
            raise limits.refuse_damaged("file", "reading it failed")
        for slot in range(len(self.result.labels)):
            if slot not in self.result.kept:
                self.result.not_kept.setdefault(slot, "decode")
        return self.result
