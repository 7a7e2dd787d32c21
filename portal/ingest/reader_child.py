"""The child half of the reader process: reads Word, PDF and image files, so that a read can be stopped.

``reader_parent`` starts it, writes one request frame (the file) to its stdin
and reads frames back from its stdout as work progresses: ``text`` (the text
with picture placeholders), one ``figure`` or ``not_kept`` per picture, then
``done`` — or a single ``refused``. Frames are an 8-byte header (JSON length,
blob length), UTF-8 JSON, then the blob: nothing the parent reads back is
unpickled. Module-level imports stay light; readers are imported per request.
"""

import json
import os
import struct
import sys
import traceback

_HEADER = struct.Struct(">II")
MAX_META_BYTES = 16 * 1024 * 1024
MAX_BLOB_BYTES = 64 * 1024 * 1024


def pack_frame(meta: dict, blob: bytes = b"") -> bytes:
    encoded = json.dumps(meta, ensure_ascii=False).encode("utf-8")
    return _HEADER.pack(len(encoded), len(blob)) + encoded + blob


class FrameReader:
    """Splits a byte stream into (meta, blob) frames as chunks arrive."""

    def __init__(self):
        self.buffer = bytearray()

    def feed(self, chunk: bytes) -> list[tuple[dict, bytes]]:
        self.buffer += chunk
        frames = []
        while len(self.buffer) >= _HEADER.size:
            meta_size, blob_size = _HEADER.unpack_from(self.buffer)
            if meta_size > MAX_META_BYTES or blob_size > MAX_BLOB_BYTES:
                raise ValueError("frame too large")
            end = _HEADER.size + meta_size + blob_size
            if len(self.buffer) < end:
                break
            meta = json.loads(self.buffer[_HEADER.size : _HEADER.size + meta_size].decode("utf-8"))
            blob = bytes(self.buffer[_HEADER.size + meta_size : end])
            del self.buffer[:end]
            frames.append((meta, blob))
        return frames


def _read_exactly(stream, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            raise EOFError("request ended early")
        data += chunk
    return bytes(data)


def _limit_resources() -> None:
    """Bound this process: address space (a bomb fails with MemoryError), CPU, no core files."""
    try:
        import resource
    except ImportError:  # not a POSIX system: the parent's deadline still applies
        return

    from portal.ingest import limits

    memory = limits.WORKER_MEMORY_BYTES
    cpu = int(limits.READ_SECONDS + limits.IMAGE_SECONDS) + 10
    for kind, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CPU, cpu), (resource.RLIMIT_CORE, 0)):
        try:
            resource.setrlimit(kind, (value, value))
        except (ValueError, OSError):
            pass  # a lower hard limit is already in place


def open_reading(kind: str, data: bytes, request: dict):
    """The Reading for one request; raises Refused."""
    if kind == "docx":
        from portal.ingest.docx import read_docx

        return read_docx(data)
    if kind == "pdf":
        from portal.ingest.pdf_reader import read_pdf

        return read_pdf(data)
    if kind == "image":
        from portal.ingest.images import read_image_file

        return read_image_file(data, request.get("label") or "image")
    raise ValueError(f"unknown kind {kind!r}")


def serve(request: dict, data: bytes, send) -> None:
    """Read one file and report through ``send(meta, blob=b"")``."""
    from portal.errors import Refused
    from portal.ingest import limits
    from portal.ingest.images import ImageBudget, NotKept, configure_pillow

    configure_pillow()
    try:
        reading = open_reading(request["kind"], data, request)
    except Refused as refusal:
        send({"type": "refused", "reason": refusal.reason, "message": refusal.message})
        return
    except MemoryError:
        refusal = limits.refuse_damaged("file", "reading it needed more memory than allowed")
        send({"type": "refused", "reason": refusal.reason, "message": refusal.message})
        return
    except Exception:  # a reader library choked on the file
        traceback.print_exc()  # to stderr, which the parent logs
        refusal = limits.refuse_damaged("file")
        send({"type": "refused", "reason": refusal.reason, "message": refusal.message})
        return
    send(
        {"type": "text", "text": reading.text, "labels": reading.labels, "pages": reading.pages, "title": reading.title}
    )
    budget = ImageBudget(float(request.get("image_seconds", limits.IMAGE_SECONDS)))
    reported = set()
    try:
        for slot, outcome in reading.images(budget):
            reported.add(slot)
            if isinstance(outcome, NotKept):
                send({"type": "not_kept", "slot": slot, "reason": outcome.reason, **outcome.facts()})
            else:
                send({"type": "figure", "slot": slot, "width": outcome.width, "height": outcome.height}, outcome.webp)
    except Exception:  # includes MemoryError: the pictures not reached are counted as unreadable
        traceback.print_exc()
        for slot in range(len(reading.labels)):
            if slot not in reported:
                send({"type": "not_kept", "slot": slot, "reason": "decode"})
    finally:
        reading.close()
    send({"type": "done"})


def main() -> None:
    _limit_resources()
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything a library prints goes to stderr, not into the protocol
    meta_size, blob_size = _HEADER.unpack(_read_exactly(sys.stdin.buffer, _HEADER.size))
    request = json.loads(_read_exactly(sys.stdin.buffer, meta_size))
    data = _read_exactly(sys.stdin.buffer, blob_size)

    def send(meta: dict, blob: bytes = b"") -> None:
        protocol.write(pack_frame(meta, blob))
        protocol.flush()

    serve(request, data, send)
    protocol.close()


if __name__ == "__main__":
    main()
