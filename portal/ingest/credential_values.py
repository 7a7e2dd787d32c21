"""Whether a setting name sounds like a credential and its value looks like one: what keeps prose out.

detect-secrets' KeywordDetector alone flags prose (``The secretary: "Jane"``,
``password="see the vault"``), so its matches are kept only when the whole name
contains a credential word (password, secret, token, api key …) and the value
is one token-like string: no spaces, no placeholder (``<token>``, ``${VAR}``,
``YOUR_API_KEY``, ``choose-a-password``, ``****``), not a plain word or a
dotted name. Unquoted values must also mix letters and digits. The detectors in
``credentials.py`` ask these questions; they look at strings only, never at a
whole text.
"""

from __future__ import annotations

import re

_UNQUOTED_VALUE = re.compile(r"[A-Za-z0-9+/=_.~!@#%^&*?:-]+")  # no brackets, commas or quotes: code, not a secret
# self.secret, 2fa-enabled, rust_openssl.hpke.X25519Key: names and words, not secrets
_JOINED_WORDS = re.compile(r"[A-Za-z]+(?:[-_.][A-Za-z]+)+|[a-z0-9]+(?:-[a-z0-9]+)+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[^\W\dA-Z_]+|[0-9]+")
_PASSWORD_WORDS = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "secret", "contraseña", "contrasena"})
_API_KEY_WORDS = frozenset({"apikey", "secretkey", "accesskey", "authkey", "privatekey", "clientsecret"})
_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "secret",
        "access",
        "auth",
        "private",
        "client",
        "service",
        "account",
        "signing",
        "encryption",
        "master",
        "db",
        "database",
        "license",
    }
)
_PLACEHOLDER_START = tuple("<${%[(*#")
_SINGLE_WORD = re.compile(r"[A-Za-z][a-z]*[?!]?")  # "string", "Required": a type or a word, not a secret
_PLACEHOLDER_VALUE = re.compile(r"[A-Z][A-Z0-9_]*_[A-Z0-9_]+")
_PLACEHOLDER_WORDS = frozenset(
    {
        "password",
        "passwd",
        "secret",
        "token",
        "key",
        "apikey",
        "your",
        "example",
        "sample",
        "placeholder",
        "changeme",
        "redacted",
        "dummy",
        "mock",
        "fake",
    }
)
_VALUE_SEPARATORS = re.compile(r"[-_.]+")
_PLACEHOLDER_PASSWORDS = frozenset({"password", "passwd", "pass", "pwd", "secret", "pw"})


def name_family(name: str) -> str | None:
    """``password_assignment`` or ``api_token`` for a credential-sounding setting name, else None."""
    words = [word.lower() for word in _NAME_WORDS.findall(name)]
    if any(word in _PASSWORD_WORDS or word.endswith(("password", "passwd")) for word in words):
        return "password_assignment"
    if any(word.endswith("token") or word in _API_KEY_WORDS for word in words) or (
        "key" in words and _KEY_QUALIFIERS.intersection(words)
    ):
        return "api_token"
    return None


def looks_like_secret(value: str) -> bool:
    """A single token-like value, not a placeholder, a reference or a masked value."""
    return (
        len(value) >= 6
        and not any(char.isspace() for char in value)
        and not value.startswith(_PLACEHOLDER_START)
        and "{{" not in value
        and len(set(value)) > 2
        and not _PLACEHOLDER_VALUE.fullmatch(value)
        and not _SINGLE_WORD.fullmatch(value)
        and not _PLACEHOLDER_WORDS.intersection(part.lower() for part in _value_words(value))
    )


def _value_words(value: str) -> list[str]:
    """Words of a value: split at ``-_.``, and at camel case too when it holds only letters."""
    parts = _VALUE_SEPARATORS.split(value)
    return _NAME_WORDS.findall(value) if value.isalpha() else parts


def looks_random(value: str) -> bool:
    """An unquoted value needs more evidence: 8+ token characters with letters and digits, not joined words."""
    classes = (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )
    return (
        len(value) >= 8
        and classes >= 2
        and _UNQUOTED_VALUE.fullmatch(value) is not None
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and not _JOINED_WORDS.fullmatch(value)
    )


def looks_like_password(value: str) -> bool:
    return (
        value.lower() not in _PLACEHOLDER_PASSWORDS and not value.startswith(_PLACEHOLDER_START) and len(set(value)) > 1
    )
