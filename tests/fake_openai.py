"""A real HTTP server on 127.0.0.1 speaking the chat-completions protocol, for tests.

The model provider is outside the project, so tests talk to this instead, over
HTTP. Script what the next requests get (``reply``, ``reply_after``,
``reply_trickling``, ``fail_with_status``, ``reply_malformed_json``,
``reply_without_choices``, ``reply_refusal``, ``reply_raw``); every request received is kept in ``requests``.
"""

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict

    @property
    def system_prompt(self) -> str:
        return next(m["content"] for m in self.body["messages"] if m["role"] == "system")


class FakeOpenAI:
    """Start with ``start()`` (or ``with``); ``base_url`` ends in ``/v1`` like a real provider."""

    def __init__(self):
        self.requests: list[ReceivedRequest] = []
        self.usage = {"prompt_tokens": 1, "completion_tokens": 1}
        self._behaviour: tuple = ("reply", "OK [1]")
        self._release = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ----------------------------------------------------------------
    def reply(self, content: str, prompt_tokens: int = 1, completion_tokens: int = 1) -> None:
        """Answer ``content``, reporting these token counts in ``usage`` (what the call costs)."""
        self._behaviour = ("reply", content)
        self.usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}

    def reply_refusal(self, refusal: str) -> None:
        """Decline the way OpenAI's API does: ``message.refusal`` set, ``content`` null."""
        self._behaviour = ("refusal", refusal)

    def reply_after(self, seconds: float, content: str) -> None:
        """Answer only after ``seconds``, or when the server stops: for timeouts."""
        self._behaviour = ("delay", seconds, content)

    def reply_trickling(self, content: str, seconds_per_byte: float) -> None:
        """Start answering at once but send one byte at a time: for the overall deadline."""
        self._behaviour = ("trickle", content, seconds_per_byte)

    def fail_with_status(self, code: int) -> None:
        self._behaviour = ("status", code)

    def reply_malformed_json(self) -> None:
        self._behaviour = ("malformed",)

    def reply_without_choices(self) -> None:
        self._behaviour = ("no_choices",)

    def reply_raw(self, data: bytes) -> None:
        """Answer these bytes as the body, whatever they hold (what ``json.dumps`` would refuse to write)."""
        self._behaviour = ("raw", data)

    def reset(self) -> None:
        """Forget recorded requests, release delayed replies, and reply ``OK [1]`` again."""
        self._release.set()
        self._release = threading.Event()
        self.requests.clear()
        self._behaviour = ("reply", "OK [1]")
        self.usage = {"prompt_tokens": 1, "completion_tokens": 1}

    # -- lifecycle ----------------------------------------------------------------
    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "FakeOpenAI":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                fake.requests.append(ReceivedRequest("POST", self.path, dict(self.headers.items()), body))
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": "not found"}})
                behaviour = fake._behaviour
                kind = behaviour[0]
                if kind == "reply":
                    return self._send(200, _completion(body.get("model"), behaviour[1], fake.usage))
                if kind == "refusal":
                    completion = _completion(body.get("model"), None, fake.usage)
                    completion["choices"][0]["message"]["refusal"] = behaviour[1]
                    return self._send(200, completion)
                if kind == "delay":
                    fake._release.wait(behaviour[1])
                    return self._send(200, _completion(body.get("model"), behaviour[2], fake.usage))
                if kind == "trickle":
                    return self._trickle(
                        json.dumps(_completion(body.get("model"), behaviour[1], fake.usage)).encode(), behaviour[2]
                    )
                if kind == "status":
                    return self._send(behaviour[1], {"error": {"message": "provider error"}})
                if kind == "malformed":
                    return self._send_raw(200, b'{"choices": [{"message": ')
                if kind == "raw":
                    return self._send_raw(200, behaviour[1])
                if kind == "no_choices":
                    return self._send(200, {"id": "chatcmpl-fake", "object": "chat.completion"})
                raise AssertionError(f"unscripted behaviour {behaviour!r}")

            def _send(self, status: int, payload: dict) -> None:
                self._send_raw(status, json.dumps(payload).encode("utf-8"))

            def _send_raw(self, status: int, data: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def _trickle(self, data: bytes, seconds_per_byte: float) -> None:
                release = fake._release
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    for i in range(len(data)):
                        if release.wait(seconds_per_byte):
                            return
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, format, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "FakeOpenAI":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _completion(model: str | None, content: str | None, usage: dict) -> dict:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]},
    }
