"""Every setting of the portal, declared once with its default and help text.

Settings come from the environment (the name below) and can be overridden by
the ``config`` mapping given to ``create_app`` (tests do that). A test checks
that each one is documented in docs/operations.md.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def _bool(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _java_size(value: str) -> str:
    """A Java memory size as -Xmx takes it: digits and an optional k, m or g (``1g``, ``1536m``)."""
    value = value.strip()
    if not re.fullmatch(r"[1-9][0-9]*[kKmMgG]?", value):
        raise ValueError(f"{value!r} is not a Java memory size such as 1g or 1536m")
    return value


def _json(value: str) -> Any:
    return json.loads(value) if value.strip() else None


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    help: str
    parse: Callable[[str], Any] = str


@dataclass(frozen=True)
class ModelSettings:
    """The names of the settings of one OpenAI-compatible chat-completions model: the answer model and
    the vision model are configured alike, each under its own names (``ChatClient.configured`` reads them)."""

    base_url: str
    api_key: str
    model: str
    timeout: str


ANSWER_MODEL = ModelSettings("CAIRN_MODEL_BASE_URL", "CAIRN_MODEL_API_KEY", "CAIRN_MODEL_NAME", "CAIRN_MODEL_TIMEOUT")
VISION_MODEL = ModelSettings(
    "CAIRN_VISION_BASE_URL", "CAIRN_VISION_API_KEY", "CAIRN_VISION_MODEL", "CAIRN_VISION_TIMEOUT"
)


def _model_settings(
    names: ModelSettings, base_url_help: str, timeout_default: float, timeout_help: str
) -> tuple[Setting, ...]:
    """A model's four settings; its key and model name are described the same way for every model."""
    return (
        Setting(names.base_url, None, base_url_help),
        Setting(names.api_key, None, f"Bearer key for {names.base_url}."),
        Setting(names.model, "gpt-4o-mini", f"Model name sent to {names.base_url}."),
        Setting(names.timeout, timeout_default, timeout_help, float),
    )


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "CAIRN_DATA_DIR",
        "data",
        "Folder holding the SQLite database, uploaded originals, figures and the Lucene indexes.",
    ),
    Setting(
        "DATABASE_URL",
        None,
        "Database URL. Unset: SQLite at $CAIRN_DATA_DIR/cairn.db (WAL, synchronous FULL, mode 0600). "
        "postgresql://user@host/db for PostgreSQL.",
    ),
    Setting(
        "SECRET_KEY",
        None,
        "Key that signs sessions and CSRF tokens. Unset: generated once and kept in "
        "$CAIRN_DATA_DIR/secret_key (mode 0600).",
    ),
    Setting(
        "CAIRN_SECURE_COOKIES",
        False,
        "Send the session cookie only over HTTPS. Turn on behind TLS (the Procfile does).",
        _bool,
    ),
    Setting(
        "CAIRN_SIGN_IN_LIMIT_PER_ACCOUNT",
        "10 per 15 minutes",
        "Failed sign-ins allowed for one e-mail address before the sign-in page answers 429 until the window "
        "ends (a fixed window: the owner waits at most that long). Only wrong passwords count.",
    ),
    Setting(
        "CAIRN_SIGN_IN_LIMIT_PER_ADDRESS",
        "30 per 15 minutes",
        "Failed sign-ins allowed from one network address (any accounts) per window; see CAIRN_PROXIES.",
    ),
    Setting(
        "CAIRN_SIGN_IN_LIMIT_STORAGE",
        "memory://",
        "Where the sign-in counters live (a Flask-Limiter storage URI). memory:// counts inside each server "
        "process (each gunicorn worker on its own) and forgets at restart; one count across processes needs a "
        "shared store such as redis://host:6379.",
    ),
    Setting(
        "CAIRN_API_RATE_LIMIT",
        "120 per minute",
        "Requests one API token may make per window (a Flask-Limiter limit, counted in "
        "CAIRN_SIGN_IN_LIMIT_STORAGE); over it the API answers 429 with Retry-After. Requests without a "
        "valid token count per network address.",
    ),
    Setting(
        "CAIRN_PROXIES",
        0,
        "How many reverse proxies in front of the portal set X-Forwarded-For/-Proto. 0: none are trusted, "
        "the address limit counts the peer address (behind a proxy that is the proxy's: set this).",
        int,
    ),
    Setting("CAIRN_ADMIN_EMAIL", None, "`cairn init` creates this PlatformAdmin when it does not exist yet."),
    Setting("CAIRN_ADMIN_PASSWORD", None, "Password for CAIRN_ADMIN_EMAIL (read only by `cairn init`)."),
    Setting("CAIRN_BM25_K1", 0.9, "BM25 k1 (term-frequency saturation).", float),
    Setting("CAIRN_BM25_B", 0.4, "BM25 b (document-length normalisation).", float),
    Setting(
        "CAIRN_RETRIEVAL",
        "bm25",
        "Search method: `bm25` (Lucene BM25 alone) or `hybrid` (BM25 and the packaged wordllama embedding "
        "model, fused by rank; see docs/retrieval-quality.md). Only `hybrid` stores passage vectors; "
        "after switching, the indexes are rebuilt at the next start (or run `cairn index rebuild`).",
        lambda value: value.strip().lower(),
    ),
    Setting(
        "CAIRN_JVM_HEAP",
        "1g",
        "Maximum Java heap for Lucene (-Xmx), e.g. 1g or 1536m; each serving process has its own JVM. 1g "
        "serves and rebuilds a million passages (docs/performance.md); the index files themselves are "
        "memory-mapped outside the heap.",
        _java_size,
    ),
    Setting(
        "CAIRN_REPAIR_INDEX_ON_START",
        True,
        "At server start, index pending changes and rebuild every pack index that is missing or "
        "behind the database (`cairn` commands always index pending changes).",
        _bool,
    ),
    Setting(
        "CAIRN_CLASSIFICATION_POLICY",
        None,
        "JSON list of classification rules overriding the defaults, e.g. "
        '[{"rule": "private_key", "decision": "block"}].',
        _json,
    ),
    *_model_settings(
        ANSWER_MODEL,
        "OpenAI-compatible chat-completions base URL (e.g. http://127.0.0.1:8080/v1). "
        "Unset: answers come from the built-in extractive answerer.",
        20.0,
        "Seconds to wait for the model before answering from the evidence.",
    ),
    *_model_settings(
        VISION_MODEL,
        "OpenAI-compatible chat-completions base URL of a vision-capable model that describes a document's "
        "figures (the document page's Describe images). Unset: Describe images says no model is configured.",
        60.0,
        "Seconds to wait for the vision model's answer about one figure.",
    ),
    Setting(
        "CAIRN_VISION_PRICE_INPUT",
        0.15,
        "US dollars per million input tokens of the vision model (the provider's usage counts): each call's cost.",
        float,
    ),
    Setting("CAIRN_VISION_PRICE_OUTPUT", 0.60, "US dollars per million output tokens of the vision model.", float),
    Setting(
        "CAIRN_VISION_MONTHLY_CAP",
        5.0,
        "US dollars that describing figures may spend per calendar month (UTC) in the whole deployment; "
        "once reached, no further call is made until the next month.",
        float,
    ),
    Setting(
        "CAIRN_OFFER_SHARED_AGENTS",
        True,
        "Offer agents that serve no company to the members of every company in the support chat.",
        _bool,
    ),
)

SETTINGS_BY_NAME = {s.name: s for s in SETTINGS}


class ConfigError(ValueError):
    """A setting has a value the portal cannot run with; the message names the setting."""


def environment_settings() -> dict[str, Any]:
    """Defaults, then the environment; touches no file (commands check these before they start)."""
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        raw = os.environ.get(setting.name)
        values[setting.name] = _parsed(setting.name, setting.parse, raw) if raw not in (None, "") else setting.default
    return values


def _parsed(name: str, parse: Callable[[Any], Any], value: Any, errors=(ValueError,)) -> Any:
    """``parse(value)``, its error (one of ``errors``) a ``ConfigError`` that names the setting."""
    try:
        return parse(value)
    except errors as error:
        raise ConfigError(f"{name}: {error}") from None


def check_settings(values: dict[str, Any]) -> None:
    """Refuse, at start, settings that would otherwise fail later (every ingest, for a bad policy)."""
    from limits import parse_many

    from portal.ingest.classify import Policy

    policy = values.get("CAIRN_CLASSIFICATION_POLICY")
    _parsed("CAIRN_CLASSIFICATION_POLICY", Policy.from_config, policy, errors=(TypeError, ValueError))
    _parsed("CAIRN_JVM_HEAP", _java_size, str(values.get("CAIRN_JVM_HEAP")))
    for name in ("CAIRN_SIGN_IN_LIMIT_PER_ACCOUNT", "CAIRN_SIGN_IN_LIMIT_PER_ADDRESS", "CAIRN_API_RATE_LIMIT"):
        try:
            parse_many(str(values.get(name)))
        except ValueError:
            raise ConfigError(f"{name}: {values.get(name)!r} is not a limit such as '10 per 15 minutes'") from None


def load_settings(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Defaults, then the environment, then explicit overrides; checked (``ConfigError``)."""
    values = environment_settings()
    values.update(overrides or {})
    check_settings(values)
    data_dir = Path(values["CAIRN_DATA_DIR"]).resolve()
    values["CAIRN_DATA_DIR"] = str(data_dir)
    if not values.get("DATABASE_URL"):
        values["DATABASE_URL"] = f"sqlite:///{data_dir / 'cairn.db'}"
    if not values.get("SECRET_KEY"):
        values["SECRET_KEY"] = _stored_secret_key(data_dir)
    return values


def _stored_secret_key(data_dir: Path) -> str:
    """Keep a generated key beside the data so sessions survive restarts."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "secret_key"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32))
    return path.read_text().strip()
