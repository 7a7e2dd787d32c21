"""Credential detectors: each finds the spans of one kind of credential in a text.

The rules of ``portal/ingest/classify.py`` name them; ``classify`` runs them over an
upload's text, title and file name.

Detection runs the compiled patterns (``denylist``) and validators of
detect-secrets' plugins with ``finditer`` over the whole text, which gives the
exact span of every occurrence. ``plugin.analyze_line`` is not used: it returns
values without positions (GitHub tokens as ``ghp``, JWTs without their
signature), reports one keyword match per line, and calls providers over the
network when detect-secrets' global settings turn verification on. Small
regexes of our own cover what the library misses: unquoted AWS secret keys,
GCP service-account keys, whole private-key blocks, ``Authorization`` headers,
``github_pat_`` tokens, the other password forms of connection strings, and
unquoted ``NAME=value`` / ``name: value`` settings.

A setting (``db_password = "…"``, ``API_TOKEN=…``) counts only when its name
sounds like a credential and its value looks like one; those judgments are in
``credential_values.py``. A value that a specific rule recognises (an AWS key in
``AWS_ACCESS_KEY_ID=…``, a JWT in ``token: …``) is reported by that rule only.
"""

from __future__ import annotations

import hashlib
import re
import threading
from bisect import bisect_right
from collections.abc import Iterable, Iterator

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.stripe import StripeDetector

from portal.ingest.credential_values import looks_like_password, looks_like_secret, looks_random, name_family

Span = tuple[int, int]


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    """Sorted, disjoint spans covering the given ones; touching spans are joined."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


_AWS = AWSKeyDetector()
_AZURE = AzureStorageKeyDetector()
_BASIC_AUTH = BasicAuthDetector()
_GITHUB = GitHubTokenDetector()
_JWT = JwtTokenDetector()
_PRIVATE_KEY = PrivateKeyDetector()
_SLACK = SlackDetector()
_STRIPE = StripeDetector()

_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_-]*")
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_BASE64_CHARS = frozenset(_ALNUM + "+/")
_WORD_CHARS = frozenset(_ALNUM + "_")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")

_AWS_SECRET_IN_CONTEXT = re.compile(
    r"(?i)(?:\baws[\w.-]{0,20}?(?:secret|key)[\w.-]{0,20}?|\bsecret_?access_?key)"
    r"[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
)
# A bare AWS secret access key: 40 base64 characters with upper case, lower case and digits (a SHA-1 in
# hex has no upper case). Taken only with evidence: a "secret"/"key" label just before it, or an access
# key id near it (the two halves of a key pair are written down together).
# Not a piece of a longer token either (a JWT's or a URL's parts are joined by . _ -).
_AWS_SECRET_SHAPE = re.compile(
    r"(?<![A-Za-z0-9/+=._-])(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])"
    r"(?=[A-Za-z0-9/+]*[0-9])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_-])(?![.][A-Za-z0-9])"
)
_AWS_SECRET_LABEL = re.compile(r"(?i)\b(?:secret|key)\b[\w -]{0,24}?(?:\bis\b|[:=])?[ \t]*[\"'`]?[ \t]*$")
_AWS_PAIR_DISTANCE = 300  # characters between a key id and its secret: the same or a neighbouring line
_GCP_SERVICE_ACCOUNT = re.compile(
    r"\"private_key\"\s*:\s*\"(-----BEGIN [A-Z ]*PRIVATE KEY-----[^\"\n]*)\""
    r"|\"private_key_id\"\s*:\s*\"([0-9a-f]{40})\""
)
# A block's body holds no other BEGIN line: a BEGIN line without its END was read to the end of the
# text from each one (quadratic: 15,000 of them, about two minutes to classify), and an unclosed BEGIN
# took everything up to a later key's END with it, prose included. Such a line is read as a key cut off
# (``_KeyBodies``).
_PRIVATE_KEY_BLOCK = re.compile(
    r"(-{4,5}) ?BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?) ?\1((?:(?!-{4,5} ?BEGIN ).)*?)"
    r"\1 ?END \2PRIVATE KEY\3 ?\1",
    re.DOTALL,
)
_PRIVATE_KEY_START = re.compile(r"(?m)^[ \t]*(?:-{4,5} ?BEGIN [A-Z0-9 ]*PRIVATE KEY|PuTTY-User-Key-File-)")
_KEY_BODY_LINE = re.compile(r"[ \t]*[A-Za-z0-9+/=]{4,}[ \t]*")  # a line without its break (_line)
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/=]{16,}")  # a block of only BEGIN and END lines is prose or code
_BASE64_EVIDENCE = re.compile(r"[0-9+/=]")
_KEY_HEADER_LINE = re.compile(
    r"(?i)[ \t]*(?:version|comment|proc-type|dek-info|hash|charset|encryption|public-lines|private-lines"
    r"|private-mac|private-hash|key-derivation|argon2-[a-z]+|putty-user-key-file-[0-9]+)[ \t]*:"
)
_AUTHORIZATION = re.compile(r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:bearer|token|basic)\s+([A-Za-z0-9._~+/-]+=*)")
_GITHUB_FINE_GRAINED = re.compile(r"\bgithub_pat_[A-Za-z0-9_]{50,}")
_URL_EMPTY_USER_PASSWORD = re.compile(r"://:([^:/?#\[\]@!$&'()*+,;=\s]+)@")
_URL_QUERY_PASSWORD = re.compile(r"(?i)[?&](?:password|passwd|pwd)=([^&#\s\"']+)")
_KEY_VALUE_PASSWORD = re.compile(r"(?i)(?:^|;)[ \t]*(?:password|pwd)[ \t]*=[ \t]*([^;\"'\s]+)")
_KEY_VALUE_PASSWORD_HINT = re.compile(r"(?i)password|pwd")
_KEY_VALUE_CONNECTION = re.compile(
    r"(?i)\b(?:server|host|data source|user id|uid|database|initial catalog)[ \t]*=[^;\n]*;"
)
_UNQUOTED_SETTING = re.compile(
    r"[ \t]*(?:export[ \t]+|-[ \t]+)?[\"']?([A-Za-z_][A-Za-z0-9_.-]*)[\"']?[ \t]*[:=][ \t]*"
    r"([^\s\"'`]+)[ \t]*\r?"
)
_QUOTED_TOKEN_SETTING = re.compile(r"(?i)\b([\w.-]*token)[\"']?\s*[:=]\s*([\"'])([^\"'\s]+)\2")
_CREDENTIAL_HINT = re.compile(r"(?i)key|pass|pwd|secret|token|contrase")


def _lines_matching(text: str, hint: re.Pattern) -> Iterator[tuple[int, str]]:
    """Each line (split at ``\\n``) in which ``hint`` occurs, with the offset it starts at."""
    end = -1
    for match in hint.finditer(text):
        if match.start() < end:
            continue
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        end = len(text) if end < 0 else end
        yield start, text[start:end]


def _isolated(text: str, start: int, end: int | None = None, inner: frozenset[str] = _BASE64_CHARS) -> bool:
    """True when the span is not the middle of a longer run of ``inner`` characters (``end`` checked if given)."""
    before = start > 0 and text[start - 1] in inner
    after = end is not None and end < len(text) and text[end] in inner
    return not (before or after)


def _extend_token(text: str, end: int) -> int:
    """A library pattern matches a fixed length; a real token may be longer."""
    return _TOKEN_CHARS.match(text, end).end()


def _assignments(text: str) -> tuple[tuple[str, Span], ...]:
    """Credential-looking values assigned to credential-sounding names, with their family.

    A value that a specific detector recognises (an AWS key, a JWT …) is left to that detector, so that it
    is reported, and decided, as what it is. Two rules share the result: it is remembered for the last few
    texts, by digest, so no uploaded text is kept in memory.
    """
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _RECENT_LOCK:
        found = _RECENT_ASSIGNMENTS.get(key)
    if found is None:
        found = _find_assignments(text)
        with _RECENT_LOCK:
            _RECENT_ASSIGNMENTS[key] = found
            while len(_RECENT_ASSIGNMENTS) > 8:
                del _RECENT_ASSIGNMENTS[next(iter(_RECENT_ASSIGNMENTS))]
    return found


_RECENT_ASSIGNMENTS: dict[bytes, tuple[tuple[str, Span], ...]] = {}
_RECENT_LOCK = threading.Lock()


def _find_assignments(text: str) -> tuple[tuple[str, Span], ...]:
    specific = merge_spans(span for detector in _SPECIFIC_DETECTORS for span in detector(text))
    starts = [start for start, _ in specific]
    found = []
    for family, (start, end) in _assignment_candidates(text):
        k = bisect_right(starts, end - 1) - 1
        if k < 0 or specific[k][1] <= start:
            found.append((family, (start, end)))
    return tuple(found)


def _assignment_candidates(text: str) -> Iterator[tuple[str, Span]]:
    for offset, line in _lines_matching(text, _CREDENTIAL_HINT):
        if "=" not in line and ":" not in line:
            continue
        for pattern, group in QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP.items() if _has_quote(line) else ():
            for match in pattern.finditer(line):
                family = name_family(_assigned_name(line, match))
                if family and looks_like_secret(match.group(group)):
                    yield family, (offset + match.start(group), offset + match.end(group))
        for match in _QUOTED_TOKEN_SETTING.finditer(line) if _has_quote(line) else ():
            if name_family(match.group(1)) == "api_token" and looks_like_secret(match.group(3)):
                yield "api_token", (offset + match.start(3), offset + match.end(3))
        setting = _UNQUOTED_SETTING.fullmatch(line)
        if setting:
            family, value = name_family(setting.group(1)), setting.group(2)
            if family and looks_like_secret(value) and looks_random(value):
                yield family, (offset + setting.start(2), offset + setting.end(2))


def _has_quote(line: str) -> bool:
    return '"' in line or "'" in line or "`" in line


def _assigned_name(line: str, match: re.Match) -> str:
    """The whole identifier around the keyword that a detect-secrets keyword pattern matched."""
    if match.group(0)[:1] in "\"'`":  # "value" == name: the name ends the match
        return re.search(r"[\w.-]*$", match.group(0)).group(0)
    start = match.start()
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] in "_.-"):
        start -= 1
    return re.match(r"[\w.-]*", line[start:]).group(0)


def detect_cloud_access_keys(text: str) -> Iterator[Span]:
    """AWS key ids and secret keys, GCP service-account keys, Azure storage account keys."""
    key_ids, *quoted_secrets = _AWS.denylist
    for match in key_ids.finditer(text):
        if _isolated(text, *match.span()):
            yield match.span()
    for pattern in quoted_secrets:
        for match in pattern.finditer(text):
            yield match.span(1)
    for match in _AWS_SECRET_IN_CONTEXT.finditer(text):
        yield match.span(1)
    yield from _aws_secrets_by_evidence(text, key_ids)
    for match in _GCP_SERVICE_ACCOUNT.finditer(text):
        yield match.span(1) if match.group(1) else match.span(2)
    for pattern in _AZURE.denylist:
        for match in pattern.finditer(text):
            yield match.start() + len("AccountKey="), _extend_base64(text, match.end())


def _aws_secrets_by_evidence(text: str, key_ids: re.Pattern) -> Iterator[Span]:
    """Secret access keys without a setting name: labelled ("secret is …", "key = …") or next to a key id."""
    id_starts = [match.start() for match in key_ids.finditer(text)]
    for match in _AWS_SECRET_SHAPE.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        labelled = _AWS_SECRET_LABEL.search(text, max(line_start, match.start() - 40), match.start())
        k = bisect_right(id_starts, match.start())
        near_id = any(
            abs(id_starts[i] - match.start()) <= _AWS_PAIR_DISTANCE for i in (k - 1, k) if 0 <= i < len(id_starts)
        )
        if labelled or near_id:
            yield match.span()


def _extend_base64(text: str, end: int) -> int:
    while end < len(text) and (text[end] in _BASE64_CHARS or text[end] == "="):
        end += 1
    return end


def detect_private_keys(text: str) -> Iterator[Span]:
    """Whole private-key blocks, BEGIN line to END line.

    A block without its END line (cut off, or a PuTTY key file) runs from its first line through the
    armour headers and base64 lines that follow it.
    """
    blocks = [match.span() for match in _PRIVATE_KEY_BLOCK.finditer(text) if _KEY_MATERIAL.search(match.group(4))]
    yield from blocks
    if not any(pattern.search(text) for pattern in _PRIVATE_KEY.denylist):
        return
    bodies, k = _KeyBodies(text), 0
    for match in _PRIVATE_KEY_START.finditer(text):
        start = match.start() + len(match.group(0)) - len(match.group(0).lstrip())
        while k < len(blocks) and blocks[k][1] <= start:  # starts and blocks both come in order
            k += 1
        if k == len(blocks) or start < blocks[k][0]:
            yield start, bodies.end_after(start)


class _KeyBodies:
    """Where the body of a key without its END line ends: after its first line, the armour headers and
    base64 lines that follow, up to prose or the blank line after the body.

    A ``PuTTY-User-Key-File-`` line both starts a key and is a header line of the key before it, so a
    run of them was read from each one to its end (quadratic: 12,903 of them, about three minutes to
    classify). A reading from a line depends only on that line and on whether a body line was seen
    yet, so each is kept: every line is read at most twice however many keys share it.
    """

    def __init__(self, text: str):
        self.text = text
        # (where a line starts, a body line seen before it) -> the end of the last line taken from there on
        self._ends: dict[tuple[int, bool], int | None] = {}

    def end_after(self, start: int) -> int:
        end, following = _line(self.text, start)
        if following > len(self.text):
            return end
        taken = self._end_from(following, False)
        return end if taken is None else taken

    def _end_from(self, position: int, seen_body: bool) -> int | None:
        text, read = self.text, []  # (line, seen_body) read on this call, with the end of each line taken
        while (position, seen_body) not in self._ends and position < len(text):
            line_end, following = _line(text, position)
            kind = _key_line_kind(text[position:line_end])
            if kind == "prose" or (kind == "blank" and seen_body):
                break  # prose, or the blank line after the body
            read.append(((position, seen_body), None if kind == "blank" else line_end))
            seen_body = seen_body or kind == "body"
            position = following
        end = self._ends.get((position, seen_body))
        for key, line_end in reversed(read):
            end = line_end if end is None else end
            self._ends[key] = end
        return end


def _line(text: str, start: int) -> tuple[int, int]:
    """Where the line from ``start`` ends without its line break, and where the next line starts (past the end
    of ``text`` after its last line). The break is ``\\n`` or ``\\r\\n``: a key's span ends before either, so a
    file with CRLF line ends (a .ppk saved on Windows) keeps them all, as one with LF does."""
    newline = text.find("\n", start)
    newline = len(text) if newline < 0 else newline
    end = newline - 1 if newline > start and text[newline - 1] == "\r" else newline
    return end, newline + 1


def _key_line_kind(line: str) -> str:
    """``body`` (base64), ``header`` (an armour or PuTTY header), ``blank`` or ``prose``, as a key's body reads it."""
    if _KEY_BODY_LINE.fullmatch(line) and (len(line.strip()) >= 16 or line.isupper() or _BASE64_EVIDENCE.search(line)):
        return "body"
    if _KEY_HEADER_LINE.match(line):
        return "header"
    return "prose" if line.strip() else "blank"


def detect_bearer_tokens(text: str) -> Iterator[Span]:
    """The credential of an ``Authorization: Bearer|Token|Basic …`` header."""
    for match in _AUTHORIZATION.finditer(text):
        if looks_like_secret(match.group(1)) and len(match.group(1)) >= 8:
            yield match.span(1)


def detect_api_tokens(text: str) -> Iterator[Span]:
    """GitHub, Slack and Stripe tokens, and token-like values of api_key/…_token settings."""
    yield from _provider_tokens(text)
    for family, span in _assignments(text):
        if family == "api_token":
            yield span


def _provider_tokens(text: str) -> Iterator[Span]:
    for detector in (_GITHUB, _SLACK, _STRIPE):
        for pattern in detector.denylist:
            for match in pattern.finditer(text):
                if _isolated(text, match.start(), inner=_WORD_CHARS):
                    yield match.start(), _extend_token(text, match.end())
    for match in _GITHUB_FINE_GRAINED.finditer(text):
        yield match.span()


def detect_connection_string_passwords(text: str) -> Iterator[Span]:
    """The password of ``scheme://user:password@host``, ``?password=`` and ``Password=…;`` forms."""
    for pattern in (*_BASIC_AUTH.denylist, _URL_EMPTY_USER_PASSWORD, _URL_QUERY_PASSWORD):
        for match in pattern.finditer(text):
            if looks_like_password(match.group(1)):
                yield match.span(1)
    for offset, line in _lines_matching(text, _KEY_VALUE_PASSWORD_HINT):
        if ";" in line and _KEY_VALUE_CONNECTION.search(line):
            for match in _KEY_VALUE_PASSWORD.finditer(line):
                if looks_like_password(match.group(1)):
                    yield offset + match.start(1), offset + match.end(1)


def detect_password_assignments(text: str) -> Iterator[Span]:
    """Token-like values assigned to password/secret settings (``db_password = "…"``)."""
    for family, span in _assignments(text):
        if family == "password_assignment":
            yield span


def detect_jwts(text: str) -> Iterator[Span]:
    """JSON Web Tokens: ``eyJ`` header and payload that decode to JSON, plus the signature."""
    for pattern in _JWT.denylist:
        for match in pattern.finditer(text):
            start, end = match.span()
            if not text[start:end].endswith(".") and text.startswith(".", end):
                end += 1
            signature = _BASE64URL.match(text, end)
            end = signature.end() if signature else end
            header, _, rest = text[start:end].partition(".")
            payload, dot, _signature = rest.partition(".")
            if dot and _JWT.is_formally_valid(f"{header}.{payload}"):
                yield start, end


_SPECIFIC_DETECTORS = (
    detect_cloud_access_keys,
    detect_private_keys,
    detect_bearer_tokens,
    _provider_tokens,
    detect_connection_string_passwords,
    detect_jwts,
)
