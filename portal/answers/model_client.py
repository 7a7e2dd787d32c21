"""A client for an OpenAI-compatible chat-completions endpoint, standard library only.

It sends messages and nothing else: no tools, no functions, temperature 0. Every
failure becomes a ``ModelError`` whose kind the run can report; the API key is
never put in a message, a log line or a repr.
"""

import http.client
import json
import re
import time
import urllib.parse
from dataclasses import dataclass

from portal.config import ModelSettings
from portal.controls import readable_text
from portal.errors import CairnError
from portal.numbers import MAX_NUMBER

MAX_RESPONSE_BYTES = 4 * 1024 * 1024


def _seconds(value: float) -> str:
    return f"{value:g} s"


class ModelError(CairnError):
    """The model call failed; ``kind`` is ``timeout``, ``http_status``, ``malformed``, ``connection`` or
    ``refused`` (the provider's ``message.refusal``: the model declined).

    ``summary`` is the short phrase a run shows, such as ``timeout after 10 s``
    or ``HTTP 500``.
    """

    KINDS = ("timeout", "http_status", "malformed", "connection", "refused")

    def __init__(self, kind: str, summary: str, status: int | None = None):
        if kind not in self.KINDS:
            raise ValueError(f"unknown model error kind {kind!r}")
        super().__init__(summary)
        self.kind = kind
        self.summary = summary
        self.status = status


@dataclass(frozen=True)
class Completion:
    """The first choice's text and the tokens the provider counted (0 when it did not say)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ChatClient:
    """Calls ``{base_url}/chat/completions`` and returns the first choice's message content."""

    def __init__(self, base_url: str, api_key: str, model: str, timeout_s: float):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self._api_key = api_key

    @classmethod
    def configured(cls, config, names: ModelSettings) -> "ChatClient | None":
        """The model the settings ``names`` configure in ``config`` (the app's), or None when its base URL
        is unset."""
        if not config.get(names.base_url):
            return None
        return cls(
            config[names.base_url],
            config.get(names.api_key) or "",
            config[names.model],
            float(config[names.timeout]),
        )

    def __repr__(self) -> str:
        return f"ChatClient(base_url={self.base_url!r}, model={self.model!r}, timeout_s={self.timeout_s})"

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def complete(self, messages: list[dict]) -> str:
        """POST the messages; the answer text, or ``ModelError`` naming what failed."""
        return self.exchange(messages).text

    def exchange(self, messages: list[dict], max_tokens: int | None = None) -> Completion:
        """POST the messages; the answer with the provider's token counts (what a call costs)."""
        request = {"model": self.model, "messages": messages, "temperature": 0}
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        return self._completion(self._post(json.dumps(request).encode("utf-8")))

    def _post(self, body: bytes) -> bytes:
        """The response body, read within ``timeout_s`` overall; redirects are errors.

        http.client rather than urllib: a redirect must not carry the bearer token
        elsewhere, and the socket timeout is narrowed as the deadline approaches.
        """
        deadline = time.monotonic() + self.timeout_s
        timed_out = ModelError("timeout", f"timeout after {_seconds(self.timeout_s)}")
        connection = self._connection()
        path = urllib.parse.urlsplit(self.url).path or "/"
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Authorization": f"Bearer {self._api_key}",
        }
        response = None
        try:
            connection.request("POST", path, body=body, headers=headers)
            # Kept: the connection drops its socket once a "Connection: close" reply starts.
            sock = connection.sock
            response = self._within(deadline, sock, timed_out, connection.getresponse)
            if not 200 <= response.status < 300:
                raise ModelError("http_status", f"HTTP {response.status}", status=response.status)
            chunks: list[bytes] = []
            size = 0
            while chunk := self._within(deadline, sock, timed_out, lambda: response.read1(65536)):
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise ModelError("malformed", "malformed response: larger than 4 MB")
                chunks.append(chunk)
            return b"".join(chunks)
        except TimeoutError:
            raise timed_out from None
        except http.client.HTTPException as error:
            raise ModelError("connection", f"connection failed: {type(error).__name__}") from None
        except OSError as error:
            raise ModelError("connection", f"connection failed: {_reason(error)}") from None
        except ValueError:  # a header http.client refuses, such as a key with a line break
            raise ModelError("connection", "connection failed: invalid request header") from None
        finally:
            if response is not None:
                response.close()
            connection.close()

    def _connection(self) -> http.client.HTTPConnection:
        try:
            parts = urllib.parse.urlsplit(self.url)
            port = parts.port
        except ValueError:
            parts, port = None, None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
            raise ModelError("connection", "connection failed: invalid base URL")
        if parts.scheme == "https":
            return http.client.HTTPSConnection(parts.hostname, port, timeout=self.timeout_s)
        return http.client.HTTPConnection(parts.hostname, port, timeout=self.timeout_s)

    @staticmethod
    def _within(deadline: float, sock, timed_out: ModelError, step):
        """Run one blocking step with the socket timeout cut to what is left of the deadline."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise timed_out
        sock.settimeout(remaining)
        return step()

    @staticmethod
    def _completion(raw: bytes) -> Completion:
        try:
            document = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, or a number of more than 4,300 digits
            raise ModelError("malformed", "malformed response: not JSON") from None
        try:
            message = document["choices"][0]["message"]
            content = message.get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            message, content = None, None
        refusal = message.get("refusal") if isinstance(message, dict) else None
        # The model read passages, pictures and questions other people wrote and may repeat what they hold:
        # its text is stored like text read out of a file (no NUL, which PostgreSQL cannot store, and none
        # of the controls that reorder how it is shown).
        if isinstance(refusal, str):
            refusal = readable_text(_whole_characters(refusal))
        if isinstance(content, str):
            content = readable_text(_whole_characters(content))
        if isinstance(refusal, str) and refusal.strip() and not (isinstance(content, str) and content.strip()):
            raise ModelError("refused", "the model refused: " + " ".join(refusal.split())[:200])
        if not isinstance(content, str):
            raise ModelError("malformed", "malformed response: no choices[0].message.content text")
        if not content.strip():
            raise ModelError("malformed", "malformed response: empty answer")
        usage = document.get("usage") if isinstance(document, dict) else None
        return Completion(content, _count(usage, "prompt_tokens"), _count(usage, "completion_tokens"))


# JSON may escape one half of a surrogate pair alone ("\\ud83d"), which ``json.loads`` reads as a lone surrogate:
# no UTF-8 holds one, so storing the answer (or a figure's description) failed with UnicodeEncodeError, a 500.
# Each is the replacement character, as a request's undecodable bytes are; a whole pair was read as one character.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _whole_characters(text: str) -> str:
    return _LONE_SURROGATE.sub("\ufffd", text)


def _count(usage, key: str) -> int:
    """A token count from ``usage``; anything but a non-negative integer counts as 0, and one beyond
    ``MAX_NUMBER`` (no call uses two billion tokens) as ``MAX_NUMBER``: a cost worked out from it stays a
    number the database stores, and still reaches the spend cap."""
    value = usage.get(key) if isinstance(usage, dict) else None
    return min(value, MAX_NUMBER) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _reason(error: OSError) -> str:
    """An error's reason without anything from the request (headers, key)."""
    return error.strerror or type(error).__name__
