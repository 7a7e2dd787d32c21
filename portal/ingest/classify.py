"""Data-classification policy applied to every upload before anything is stored (SPEC 4).

``classify`` scans the text, title and file name with the rules of a ``Policy``.
Each rule has a detector and a decision; the strictest decision of any finding
wins (block > review_required > redact > allow), and a rule set to ``allow`` is
switched off. Redaction replaces each finding by ``[REDACTED:credential]``;
overlapping or touching findings become one marker, and a private-key block is
one finding from its BEGIN line to its END line.

Invisible format characters (zero-width space and joiners, word joiner,
byte-order mark, soft hyphen, bidi controls: Unicode category Cf) do not hide a
credential: a reader sees ``AKIA\u200bIOSF…`` whole, so each field is also
scanned with them taken out, and what is found there is redacted in the field
as written.

Built-in rules (all ``redact`` by default; ``Policy.from_config`` overrides):
``cloud_access_key``, ``private_key``, ``bearer_token``, ``api_token``,
``connection_string_password``, ``password_assignment``, ``jwt``.

The detectors are in ``portal/ingest/credentials.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from portal.errors import Refused
from portal.ingest.credentials import (
    Span,
    detect_api_tokens,
    detect_bearer_tokens,
    detect_cloud_access_keys,
    detect_connection_string_passwords,
    detect_jwts,
    detect_password_assignments,
    detect_private_keys,
    merge_spans,
)

DECISIONS = ("allow", "redact", "review_required", "block")  # least to most strict
FIELDS = ("text", "title", "filename")
REDACTION_MARKER = "[REDACTED:credential]"
FIELD_NAMES = {"text": "text", "title": "title", "filename": "file name"}

Detector = Callable[[str], Iterable[Span]]


@dataclass(frozen=True, slots=True)
class Finding:
    """A credential found by ``rule`` at ``[start, end)`` of ``field`` (text, title or filename)."""

    rule: str
    start: int
    end: int
    field: str


@dataclass(frozen=True, slots=True)
class Classification:
    """The policy's verdict on one upload.

    ``redacted_*`` hold each field with every finding replaced by the marker;
    they are only meant to be stored when ``decision == "redact"``.
    ``deciding_kinds`` names, for people, the kinds of credential behind the
    decision (``"private key (text)"``), never a secret.
    """

    decision: str
    findings: list[Finding]
    redacted_text: str
    redacted_title: str
    redacted_filename: str
    deciding_kinds: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Rule:
    """A named detector, the decision it triggers, and how people are told about it."""

    name: str
    label: str
    detector: Detector
    decision: str


@dataclass(frozen=True)
class Policy:
    """An ordered set of rules with unique names."""

    rules: tuple[Rule, ...]

    def __post_init__(self):
        names = [rule.name for rule in self.rules]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"classification rules named more than once: {', '.join(duplicates)}")
        for rule in self.rules:
            _check_decision(rule.name, rule.decision)

    @classmethod
    def default(cls) -> Policy:
        """Every built-in rule with its default decision (all ``redact``)."""
        return _DEFAULT_POLICY

    @classmethod
    def from_config(cls, settings: Iterable[Mapping[str, str]] | None) -> Policy:
        """The default policy with the decisions of some rules overridden.

        ``settings`` is the deployment's list, e.g. ``[{"rule": "private_key",
        "decision": "block"}]``; a decision of ``allow`` switches a rule off.
        Unknown rule names, unknown keys, bad decisions and a rule listed twice
        raise ``ValueError`` naming them.
        """
        known = {rule.name: rule for rule in _DEFAULT_POLICY.rules}
        overrides: dict[str, str] = {}
        unknown: list[str] = []
        for entry in settings or ():
            if not isinstance(entry, Mapping) or set(entry) != {"rule", "decision"}:
                raise ValueError(
                    f"each classification setting needs exactly the keys 'rule' and 'decision', got {entry!r}"
                )
            name, decision = entry["rule"], entry["decision"]
            if name not in known:
                unknown.append(str(name))
                continue
            if name in overrides:
                raise ValueError(f"classification rule listed more than once: {name}")
            _check_decision(name, decision)
            overrides[name] = decision
        if unknown:
            raise ValueError(f"unknown classification rule(s): {', '.join(unknown)}; known rules: {', '.join(known)}")
        return cls(
            tuple(replace(rule, decision=overrides.get(rule.name, rule.decision)) for rule in _DEFAULT_POLICY.rules)
        )


def _check_decision(rule: str, decision: object) -> None:
    if decision not in DECISIONS:
        raise ValueError(
            f"classification rule {rule}: decision must be one of {', '.join(DECISIONS)}, not {decision!r}"
        )


def classify(text: str, title: str, filename: str, policy: Policy | None = None) -> Classification:
    """Scan an upload's text, title and file name together; the strictest finding decides."""
    policy = policy or Policy.default()
    values = {"text": text, "title": title, "filename": filename}
    visible = {field: _Visible.of(values[field]) for field in FIELDS}
    findings: set[Finding] = set()
    for rule in policy.rules:
        if rule.decision == "allow":
            continue
        for field in FIELDS:
            for start, end in visible[field].detect(rule.detector):
                findings.add(Finding(rule.name, start, end, field))
    ordered = sorted(findings, key=lambda f: (FIELDS.index(f.field), f.start, f.end, f.rule))
    rules = {rule.name: rule for rule in policy.rules}
    decision = max((rules[f.rule].decision for f in ordered), key=DECISIONS.index, default="allow")
    kinds: dict[str, None] = {}
    for finding in ordered:
        rule = rules[finding.rule]
        if rule.decision == decision:
            kinds[f"{rule.label} ({FIELD_NAMES[finding.field]})"] = None
    redacted = {
        field: redact(values[field], [(f.start, f.end) for f in ordered if f.field == field]) for field in FIELDS
    }
    return Classification(
        decision=decision,
        findings=ordered,
        redacted_text=redacted["text"],
        redacted_title=redacted["title"],
        redacted_filename=redacted["filename"],
        deciding_kinds=tuple(kinds),
    )


# Unicode's format characters (category Cf) as of Python 3.11's tables, written out because
# building the class from unicodedata takes 0.4 s at import; tests/test_classify.py checks it.
_INVISIBLE = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)


@dataclass(frozen=True, slots=True)
class _Visible:
    """A field as written and, when it holds invisible characters, as read without them: ``kept[i]`` is
    where character ``i`` of ``text`` stands in ``value``."""

    value: str
    text: str | None = None
    kept: tuple[int, ...] = ()

    @classmethod
    def of(cls, value: str) -> _Visible:
        if not _INVISIBLE.search(value):
            return cls(value)
        kept = tuple(i for i, char in enumerate(value) if not _INVISIBLE.match(char))
        return cls(value, "".join(value[i] for i in kept), kept)

    def detect(self, detector: Detector) -> set[Span]:
        """``detector``'s spans in the field as written and in its visible text, the latter mapped back onto
        the field (a span covers the invisible characters inside it)."""
        spans = set(detector(self.value))
        if self.text is not None:
            found = detector(self.text)
            spans.update((self.kept[start], self.kept[end - 1] + 1) for start, end in found if end > start)
        return spans


def redact(value: str, spans: Iterable[Span]) -> str:
    """``value`` with the spans replaced by one marker per run of overlapping or touching spans."""
    parts, position = [], 0
    for start, end in merge_spans(spans):
        parts += [value[position:start], REDACTION_MARKER]
        position = end
    parts.append(value[position:])
    return "".join(parts)


def cut_redacted(value: str, limit: int) -> str:
    """``value`` cut to at most ``limit`` characters, never inside a redaction marker (one the cut would split
    goes whole). Redaction can lengthen a value: ``pwd=abcd1234`` becomes ``pwd=[REDACTED:credential]``, so a
    title or file name that fitted its column before it may not after."""
    if len(value) <= limit:
        return value
    end = limit
    for marker in re.finditer(re.escape(REDACTION_MARKER), value):
        if marker.start() < limit < marker.end():
            end = marker.start()
            break
    return value[:end].rstrip()


def refuse_if_not_allowed(classification: Classification) -> None:
    """Raise ``Refused`` for block and review_required; the message names kinds, never secrets."""
    kinds = ", ".join(classification.deciding_kinds)
    if classification.decision == "block":
        raise Refused(
            "classification_blocked",
            f"The upload was refused: it contains credentials this portal does not accept — {kinds}. "
            "Remove them and upload again. Nothing was stored.",
        )
    if classification.decision == "review_required":
        raise Refused(
            "review_required",
            f"The upload was refused: it contains credentials that need a review before they can be "
            f"stored — {kinds} — and there is no review queue. Remove them and upload again. "
            "Nothing was stored.",
        )


_DEFAULT_POLICY = Policy(
    (
        Rule("cloud_access_key", "cloud access key", detect_cloud_access_keys, "redact"),
        Rule("private_key", "private key", detect_private_keys, "redact"),
        Rule("bearer_token", "bearer token", detect_bearer_tokens, "redact"),
        Rule("api_token", "API token", detect_api_tokens, "redact"),
        Rule(
            "connection_string_password",
            "password in a connection string",
            detect_connection_string_passwords,
            "redact",
        ),
        Rule("password_assignment", "password or secret in a setting", detect_password_assignments, "redact"),
        Rule("jwt", "JSON Web Token", detect_jwts, "redact"),
    )
)
