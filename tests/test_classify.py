"""Data classification at upload: detectors, redaction, decisions, configuration (SPEC 4).

Every credential here is fake, and is assembled from parts so that no
token-shaped string sits in the source.
"""

from __future__ import annotations

import base64
import json
import re
import sys
import unicodedata

import pytest

from helpers import FIXTURES_DIR, require_shared_fixtures
from portal.errors import Refused
from portal.ingest.classify import (
    REDACTION_MARKER,
    Classification,
    Finding,
    Policy,
    classify,
    refuse_if_not_allowed,
)

MARK = REDACTION_MARKER
FAKE_SECRETS = FIXTURES_DIR / "synthetic-fake-secrets.md"
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"


def b64url(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


JWT = ".".join(
    [
        b64url({"alg": "HS256", "typ": "JWT"}),
        b64url({"sub": "1234567890", "name": "Test"}),
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ]
)
PEM_BODY = "MIIEowIBAAKCAQEAfake0fake1fake2fake3fake4fake5fake6fake7fake8fake9\nTHISxISxNOTxAxKEY0123456789abcdefghij=="


def pem(kind: str) -> str:
    label = f"{kind} PRIVATE KEY".strip()
    return f"-----BEGIN {label}-----\n{PEM_BODY}\n-----END {label}-----"


# (rule, secret, text with the secret at {s}) — the text around {s} must survive as written.
DETECTOR_CASES = [
    ("cloud_access_key", AWS_KEY_ID, "The CI user has access key {s} for uploads."),
    ("cloud_access_key", "ASIA" + "Y34FZKBOKMUTVV7A", "Temporary key: `{s}`."),
    ("cloud_access_key", AWS_SECRET, "AWS_SECRET_ACCESS_KEY={s}\nAWS_DEFAULT_REGION=us-east-1"),
    ("cloud_access_key", AWS_SECRET, 'aws_secret_access_key = "{s}"'),
    ("cloud_access_key", AWS_SECRET, '{{"SecretAccessKey": "{s}", "Expiration": "soon"}}'),
    # The secret half of a key pair without a setting name: labelled, or next to its key id.
    ("cloud_access_key", AWS_SECRET, "secret is {s}"),
    ("cloud_access_key", AWS_SECRET, "key = {s}"),
    ("cloud_access_key", AWS_SECRET, "The secret key: `{s}` (rotate quarterly)."),
    ("cloud_access_key", AWS_SECRET, f"Access key id {MARK}, secret is {{s}}."),
    (
        "cloud_access_key",
        "Ab1+" * 22,
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};EndpointSuffix=core.windows.net",
    ),
    (
        "cloud_access_key",
        "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0B\\n-----END PRIVATE KEY-----\\n",
        '{{"type": "service_account", "private_key": "{s}", "client_email": "ci@proj.iam.gserviceaccount.com"}}',
    ),
    ("cloud_access_key", "0f" * 20, '{{"type": "service_account", "private_key_id": "{s}"}}'),
    ("private_key", pem("RSA"), "Deploy key:\n\n{s}\n\nKeep it safe."),
    ("private_key", pem("EC"), "{s}"),
    ("private_key", pem(""), "Before.\n{s}\nAfter."),
    ("private_key", pem("ENCRYPTED"), "Before.\n{s}\nAfter."),
    ("private_key", pem("OPENSSH"), "```\n{s}\n```"),
    (
        "private_key",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: Fake 1\n\nlQOYBFabc123def456ghi789jkl0\n=ab12\n"
        "-----END PGP PRIVATE KEY BLOCK-----",
        "{s}\nNot part of the key.",
    ),
    ("private_key", "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY, "A truncated key:\n{s}\n\nThe rest is prose."),
    ("bearer_token", "abcDEF123456ghiJKL789mno", "curl -H 'Authorization: Bearer {s}' https://api.example.com"),
    ("bearer_token", "Zm9vOmJhcjEyMzQ1Ng==", "Authorization: Basic {s}\nAccept: application/json"),
    ("api_token", "ghp_" + "A1b2C3d4" * 4 + "e5F6", "export GITHUB_TOKEN_FOR_CI=1 ; use {s} to push"),
    ("api_token", "github_pat_" + "11ABCDEFG0" + "x1Y2z3" * 12, "fine-grained: {s}"),
    ("api_token", "xoxb-" + "123456789012-1234567890123-" + "abcdefghijklmnopqrstuvwx", "slack bot {s} here"),
    (
        "api_token",
        "https://hooks.slack.com/services/" + "T00000000/B00000000/" + "XXXXXXXXXXXXXXXXXXXXXXXX",
        "Webhook: {s}",
    ),
    ("api_token", "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dcTestTestTest", "Stripe: {s} (live)."),
    ("api_token", "rk_" + "live_" + "0123456789abcdefABCDEF01", "restricted {s}"),
    ("api_token", "a8f5f167f44f4964e6c998dee827110c", 'api_key = "{s}"'),
    ("api_token", "a8f5f167f44f4964e6c998dee827110c", "config.apiKey: '{s}'"),
    ("api_token", "9c1185a5c5e9fc54612808977ee8f548", 'access_token = "{s}"'),
    ("api_token", "a8f5f167f44f4964e6c998dee827110c", "SENDGRID_API_KEY={s}"),
    ("connection_string_password", "s3cr3tPa55", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app"),
    ("connection_string_password", "hunter2hunter", "redis://:{s}@cache:6379/0"),
    ("connection_string_password", "Zx81spectrum", "jdbc:mysql://db:3306/app?user=app&password={s}&ssl=true"),
    (
        "connection_string_password",
        "P@ssw0rd!x",
        "Server=tcp:db.example.net,1433;Initial Catalog=app;User ID=sa;Password={s};Encrypt=True;",
    ),
    ("password_assignment", "Tr0ub4dor&3", 'db_password = "{s}"'),
    ("password_assignment", "Tr0ub4dor3xyz", "database:\n  password: {s}\n  host: db"),
    ("password_assignment", "9b3e5e1c7d2f", 'client_secret: "{s}"'),
    ("jwt", JWT, "Session cookie: {s} (expires hourly)"),
    ("jwt", JWT, "token={s}."),
]


INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


@pytest.mark.parametrize("invisible", ["", *INVISIBLE])
@pytest.mark.parametrize(("rule", "secret", "template"), DETECTOR_CASES)
def test_each_detector_finds_and_redacts_exactly_the_secret(rule, secret, template, invisible):
    # Split by an invisible character, a reader's copy shows the secret whole: it must not hide it.
    secret = secret[: len(secret) // 2] + invisible + secret[len(secret) // 2 :]
    text = template.format(s=secret)
    result = classify(text, "Notes", "notes.md")
    assert result.decision == "redact"
    assert rule in {f.rule for f in result.findings}
    assert result.redacted_text == template.format(s=MARK)
    assert any(text[f.start : f.end] == secret for f in result.findings if f.rule == rule)


@pytest.mark.parametrize("invisible", INVISIBLE)
def test_a_key_split_by_an_invisible_character_in_a_title_or_file_name_is_redacted(invisible):
    split = AWS_KEY_ID[:4] + invisible + AWS_KEY_ID[4:]
    result = classify("Plain text.", f"Keys {split}", f"keys-{split}.md")
    assert (result.redacted_title, result.redacted_filename) == (f"Keys {MARK}", f"keys-{MARK}.md")


def test_the_invisible_characters_are_exactly_unicodes_format_characters():
    from portal.ingest.classify import _INVISIBLE

    everything = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    assert set(_INVISIBLE.findall(everything)) == {c for c in everything if unicodedata.category(c) == "Cf"}


def test_invisible_characters_around_a_secret_stay_outside_its_marker():
    text = f"id \u200b{AWS_KEY_ID}\u200b end"
    assert classify(text, "t", "f.md").redacted_text == f"id \u200b{MARK}\u200b end"


def test_the_fake_secrets_fixture_is_redacted_and_its_prose_survives():
    require_shared_fixtures()
    text = FAKE_SECRETS.read_text(encoding="utf-8")
    assert text.count(AWS_KEY_ID) == 2 and text.count(AWS_SECRET) == 1
    key_block = re.search(r"-----BEGIN RSA PRIVATE KEY-----.*?-----END RSA PRIVATE KEY-----", text, re.DOTALL)

    result = classify(text, "Deployment notes", FAKE_SECRETS.name)

    assert result.decision == "redact"
    expected = text.replace(key_block.group(0), MARK).replace(AWS_KEY_ID, MARK).replace(AWS_SECRET, MARK)
    assert result.redacted_text == expected
    assert "\n## Deploy key\n\n" + MARK + "\n\n## Ordinary content" in result.redacted_text
    assert "AWS_DEFAULT_REGION=us-east-1" in result.redacted_text
    assert "The service restarts nightly at 02:00 UTC. Logs are kept for 30 days." in result.redacted_text
    assert [f.rule for f in result.findings] == ["cloud_access_key"] * 3 + ["private_key"]
    assert [text[f.start : f.end] for f in result.findings] == [AWS_KEY_ID, AWS_SECRET, AWS_KEY_ID, key_block.group(0)]
    assert result.deciding_kinds == ("cloud access key (text)", "private key (text)")
    assert result.redacted_title == "Deployment notes"


PROSE = """\
Never share your password with anyone, not even the service desk. The token you
receive by mail expires after an hour, and the key to a calm on-call week is
preparation. Rotate the secret key every 90 days; the API key lives in the vault.
password: see the vault
Password: ask the on-call engineer
The secretary: "Jane Doe"
Set password = <your password> and api_key = "YOUR_API_KEY" in the form.
token: ${DEPLOY_TOKEN}
Use postgres://user:password@localhost/db as the example connection string.
CAIRN_ADMIN_PASSWORD='choose-a-password'
Authorization: Bearer <token>
The key: turn it clockwise. Keys: F5 refreshes, F1 opens help.
See https://docs.example.com:443/guide and mail ops@example.com.
"""


def test_ordinary_prose_about_passwords_and_keys_is_allowed_unchanged():
    result = classify(PROSE, "Password and token handbook", "secret-keys-handbook.md")
    assert result.decision == "allow"
    assert result.findings == []
    assert result.redacted_text == PROSE
    assert result.deciding_kinds == ()
    refuse_if_not_allowed(result)  # allowed: no exception


def test_clean_text_is_allowed_with_no_changes():
    text = "# Restart checklist\n\n1. Stop the application server.\n2. Wait for the queue to drain.\n"
    result = classify(text, "Restart checklist", "restart.md")
    assert result == Classification("allow", [], text, "Restart checklist", "restart.md", ())


def test_title_and_file_name_are_scanned_too():
    result = classify("Nothing secret here.", f"Keys {AWS_KEY_ID}", f"notes-{AWS_KEY_ID}.md")
    assert result.decision == "redact"
    assert {f.field for f in result.findings} == {"title", "filename"}
    assert result.redacted_text == "Nothing secret here."
    assert result.redacted_title == f"Keys {MARK}"
    assert result.redacted_filename == f"notes-{MARK}.md"


def test_strictest_decision_wins_across_text_title_and_filename():
    policy = Policy.from_config(
        [{"rule": "private_key", "decision": "block"}, {"rule": "jwt", "decision": "review_required"}]
    )
    assert classify(f"key {AWS_KEY_ID}", "t", "f.md", policy).decision == "redact"

    result = classify(f"key {AWS_KEY_ID}", f"token {JWT}", "f.md", policy)
    assert result.decision == "review_required"
    assert result.deciding_kinds == ("JSON Web Token (title)",)

    result = classify(f"token {JWT}", "t", f"{pem('EC')}.md", policy)
    assert result.decision == "block"
    assert result.deciding_kinds == ("private key (file name)",)

    result = classify(f"token {JWT}\n{pem('RSA')}", f"key {AWS_KEY_ID}", "f.md", policy)
    assert result.decision == "block"
    assert result.deciding_kinds == ("private key (text)",)


def test_config_can_block_private_keys():
    policy = Policy.from_config([{"rule": "private_key", "decision": "block"}])
    decisions = {rule.name: rule.decision for rule in policy.rules}
    assert decisions["private_key"] == "block"
    assert set(decisions.values()) == {"redact", "block"}
    result = classify(pem("RSA"), "Deploy key", "deploy.md", policy)
    assert result.decision == "block"
    with pytest.raises(Refused) as refused:
        refuse_if_not_allowed(result)
    assert refused.value.reason == "classification_blocked"
    assert "private key" in refused.value.message and "Nothing was stored" in refused.value.message


def test_config_allow_switches_a_rule_off():
    policy = Policy.from_config([{"rule": "jwt", "decision": "allow"}])
    result = classify(f"token {JWT}", "t", "f.md", policy)
    assert result.decision == "allow" and result.findings == []


def test_empty_config_is_the_default_policy():
    assert Policy.from_config([]) == Policy.default()
    assert Policy.from_config(None) == Policy.default()
    assert {rule.decision for rule in Policy.default().rules} == {"redact"}


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ([{"rule": "privat_key", "decision": "block"}, {"rule": "ssh", "decision": "block"}], "privat_key, ssh"),
        ([{"rule": "private_key", "decision": "forbid"}], "forbid"),
        ([{"rule": "private_key"}], "'rule' and 'decision'"),
        ([{"rule": "private_key", "decision": "block", "note": "x"}], "'rule' and 'decision'"),
        ([{"rule": "jwt", "decision": "block"}, {"rule": "jwt", "decision": "redact"}], "more than once: jwt"),
    ],
)
def test_bad_config_is_refused_with_a_message_naming_the_problem(config, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Policy.from_config(config)


def test_refusal_messages_name_the_kinds_but_never_the_secret():
    policy = Policy.from_config([{"rule": rule.name, "decision": "review_required"} for rule in Policy.default().rules])
    text = "\n".join(template.format(s=secret) for _, secret, template in DETECTOR_CASES)
    result = classify(text, f"title {AWS_KEY_ID}", "notes.md", policy)
    assert result.decision == "review_required"
    with pytest.raises(Refused) as refused:
        refuse_if_not_allowed(result)
    assert refused.value.reason == "review_required"
    message = refused.value.message
    for kind in (
        "cloud access key (text)",
        "cloud access key (title)",
        "private key",
        "bearer token",
        "API token",
        "password in a connection string",
        "password or secret in a setting",
        "JSON Web Token",
    ):
        assert kind in message
    for _, secret, _ in DETECTOR_CASES:
        assert secret not in message
        for part in re.split(r"[\s\\]+", secret):
            assert len(part) < 8 or part.startswith("-----") or part not in message


def test_overlapping_findings_become_one_marker():
    text = f"curl -H 'Authorization: Bearer {JWT}' https://api.example.com"
    result = classify(text, "t", "f.md")
    assert {f.rule for f in result.findings} == {"bearer_token", "jwt"}
    assert result.redacted_text == f"curl -H 'Authorization: Bearer {MARK}' https://api.example.com"


def test_a_value_a_specific_rule_knows_is_reported_only_by_that_rule():
    result = classify(f"AWS_ACCESS_KEY_ID={AWS_KEY_ID}\nsession_token: {JWT}\n", "t", "f.md")
    assert sorted(f.rule for f in result.findings) == ["cloud_access_key", "jwt"]


def test_findings_record_rule_span_and_field():
    text = f"one {AWS_KEY_ID} two {AWS_KEY_ID}"
    result = classify(text, "t", "f.md")
    assert result.findings == [Finding("cloud_access_key", 4, 24, "text"), Finding("cloud_access_key", 29, 49, "text")]
    assert result.redacted_text == f"one {MARK} two {MARK}"


def test_keys_inside_longer_strings_are_not_taken_for_aws_key_ids():
    text = "checksum XAKIAIOSFODNN7EXAMPLEY and id ABIA" + "0" * 16 + "0"
    assert classify(text, "t", "f.md").decision == "allow"


def test_a_key_block_ends_before_the_next_begin_line_and_an_unclosed_one_is_a_key_cut_off():
    """A BEGIN line without its END was read to the end of the text from each one: quadratic, 15,000 of
    them took about two minutes to classify. It also took the prose after it up to a later key's END into
    one block."""
    text = "-----BEGIN RSA PRIVATE KEY-----\nThe rest of this runbook is prose.\n\n" + pem("RSA") + "\n\nAfter."
    result = classify(text, "t", "f.md")
    assert result.redacted_text == (
        "[REDACTED:credential]\nThe rest of this runbook is prose.\n\n[REDACTED:credential]\n\nAfter."
    )
    unclosed = "-----BEGIN PRIVATE KEY-----" * 14_800
    assert classify(unclosed, "t", "f.md").redacted_text == "[REDACTED:credential]"


# A PuTTY key file (.ppk): no END line, its headers and base64 lines are the key.
PUTTY_KEY = "\n".join(
    [
        "PuTTY-User-Key-File-2: ssh-rsa",
        "Encryption: none",
        "Comment: deploy@build-01",
        "Public-Lines: 2",
        "AAAAB3NzaC1yc2EAAAABJQAAAQEA" + "fake0fake1fake2fake3fake4fake5fake6fake7",
        "THISxISxNOTxAxKEYxJUSTxAxTESTxFIXTURE0123456789abcdefghij==",
        "Private-Lines: 2",
        "AAABAQCfake0fake1fake2fake3fake4fake5fake6fake7fake8fake9fakeA",
        "NOTxAxREALxPRIVATExKEYxBODYx0123456789abcdefghijklmnop",
        "Private-MAC: " + "0a1b2c3d4e" * 4,
    ]
)


def test_a_putty_key_file_is_detected_and_redacted_whole():
    result = classify(f"Deploy key for the build host:\n\n{PUTTY_KEY}\n\nKeep it out of the wiki.", "t", "f.md")
    assert [f.rule for f in result.findings] == ["private_key"]
    assert result.redacted_text == f"Deploy key for the build host:\n\n{MARK}\n\nKeep it out of the wiki."


# A key without its END line, whose body ends where its lines stop: OpenSSH's armour cut off before END.
UNCLOSED_KEY = "\n".join(
    [
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "THISxISxNOTxAxKEYxJUSTxAxTESTxFIXTURE0123456789abcdefghij==",
    ]
)


@pytest.mark.parametrize(
    "text",
    [
        f"Deploy key for the build host:\n\n{PUTTY_KEY}\n\nKeep it out of the wiki.",
        f"Deploy key:\n{PUTTY_KEY}\nKeep it out of the wiki.",  # prose right after the key's last line
        f"{PUTTY_KEY}\n",
        f"Two keys:\n{PUTTY_KEY}\n{PUTTY_KEY}\n\nEnd.",
        f"Cut off:\n{UNCLOSED_KEY}\n\nAfter.",
    ],
    ids=["blank-line-after", "prose-after", "line-break-at-end", "two-keys", "unclosed-armour"],
)
def test_a_key_file_with_crlf_line_ends_is_redacted_as_the_same_file_with_lf(text):
    """A .ppk saved on Windows has CRLF line ends: the key's span ends with its last line, not
    with that line's CR, so the redacted text keeps every line end as written (no lone LF in a CRLF file)."""
    lf = classify(text, "t", "f.md").redacted_text
    assert MARK in lf and "Private-MAC" not in lf and "THISxISxNOTxAxKEY" not in lf
    crlf = classify(text.replace("\n", "\r\n"), "t", "f.md").redacted_text
    assert crlf == lf.replace("\n", "\r\n")


def test_a_run_of_putty_header_lines_is_read_once_not_once_per_line(monkeypatch):
    """A ``PuTTY-User-Key-File-`` line both starts a key and is a header line of the key before it, so
    each such line read every line after it: 12,903 of them (400,000 characters) took over a minute to
    detect and nearly three to classify. Counted, not timed: every line is read at most twice."""
    from portal.ingest import credentials

    lines_read = 0
    body_line = credentials._KEY_BODY_LINE

    class CountedBodyLine:  # each line a key's body reads is first asked whether it is base64
        def fullmatch(self, line):
            nonlocal lines_read
            lines_read += 1
            return body_line.fullmatch(line)

    monkeypatch.setattr(credentials, "_KEY_BODY_LINE", CountedBodyLine())
    headers = 2_000
    spans = list(credentials.detect_private_keys("PuTTY-User-Key-File-2: ssh-rsa\n" * headers))
    assert len(spans) == headers and spans[0] == (0, headers * 31 - 1)
    assert lines_read <= 2 * headers


def test_a_large_document_is_classified():
    text = ("Plain operational prose about restarts, queues and password rotation.\n" * 5000 + f"key {AWS_KEY_ID}\n")[
        :400_000
    ]
    result = classify(text, "t", "f.md")
    assert result.decision == "redact" and len(result.findings) == 1


def test_the_portal_refuses_to_start_with_an_unknown_rule_in_the_policy(tmp_path, monkeypatch):
    from portal import create_app
    from portal.config import ConfigError

    monkeypatch.setenv("CAIRN_CLASSIFICATION_POLICY", '[{"rule": "privat_key", "decision": "block"}]')
    with pytest.raises(
        ConfigError,
        match=r"CAIRN_CLASSIFICATION_POLICY: unknown classification rule\(s\): "
        r"privat_key",
    ):
        create_app({"CAIRN_DATA_DIR": str(tmp_path / "data"), "SECRET_KEY": "x", "CAIRN_REPAIR_INDEX_ON_START": False})
    monkeypatch.setenv("CAIRN_CLASSIFICATION_POLICY", "[{not json")
    with pytest.raises(ConfigError, match="CAIRN_CLASSIFICATION_POLICY: "):
        create_app({"CAIRN_DATA_DIR": str(tmp_path / "data"), "SECRET_KEY": "x", "CAIRN_REPAIR_INDEX_ON_START": False})


@pytest.mark.parametrize(
    "template",
    [
        "Access key id {key_id}, secret is {secret}.",
        "id: {key_id}\nkey = {secret}",
        "{key_id} / {secret}",
        "The CI user: {key_id}\n\n{secret}\n\nRotate both every 90 days.",
    ],
)
def test_the_secret_half_of_an_aws_key_pair_is_redacted_with_its_key_id(template):
    text = template.format(key_id=AWS_KEY_ID, secret=AWS_SECRET)
    result = classify(text, "Notes", "notes.md")
    assert result.redacted_text == template.format(key_id=MARK, secret=MARK)


@pytest.mark.parametrize(
    "text",
    [
        "Commit " + "0a1b2c3d4e" * 4 + " fixed the cache.",  # a SHA-1 in hex
        "Checksum " + AWS_SECRET + " of the release archive.",  # no label and no key id near it
        "The key to a calm week is preparation; ids like " + "Ab1" * 13 + "x" + " are build numbers.",
    ],
)
def test_forty_character_strings_without_evidence_are_not_taken_for_aws_secrets(text):
    assert classify(text, "Notes", "notes.md").decision == "allow"


def test_an_aws_key_pair_in_a_word_file_is_redacted_before_anything_is_stored(app, pack):
    from portal.documents.services import upload_file
    from portal.models import Revision
    from resources.make_fixtures import add_picture, docx_bytes, image_bytes

    def build(document):
        document.add_heading("CI credentials", level=1)
        document.add_paragraph(f"Access key id {AWS_KEY_ID}")
        document.add_paragraph(f"secret is {AWS_SECRET}")
        document.add_paragraph(f"key = {AWS_SECRET}")
        add_picture(document, image_bytes(120, 80), alt="A diagram")

    outcome = upload_file(pack, "ci-credentials.docx", docx_bytes(build), None)

    assert outcome.accepted and outcome.document.redacted
    stored = Revision.get_by_id(outcome.revision.id)
    assert AWS_SECRET not in stored.text and AWS_KEY_ID not in stored.text
    assert f"secret is {MARK}" in stored.text and f"key = {MARK}" in stored.text
    assert stored.original_path is None  # the Word file itself still holds the secret: not kept


# A short password setting: its marker is 13 characters longer than the value it replaces.
SHORT_SETTING = "a_pwd=abcd1234"


def test_a_title_that_redaction_lengthens_still_fits_its_column(app, pack):
    """A heading of 254 characters fits the title's column; redacting the short password in it made it 267,
    which PostgreSQL refused (a 500) and SQLite stored past the limit. It is cut, never inside a marker."""
    from portal.documents.services import upload_file
    from portal.models import MAX_TITLE_CHARS, Document

    heading = "T" * (MAX_TITLE_CHARS - len(SHORT_SETTING) - 1) + SHORT_SETTING
    outcome = upload_file(pack, "long-title.md", f"# {heading}\n\nThe text.\n".encode(), None)

    assert outcome.accepted and outcome.document.redacted
    title = Document.get_by_id(outcome.document.id).title
    assert len(title) <= MAX_TITLE_CHARS
    assert "abcd1234" not in title and "[REDACTED" not in title  # the marker did not fit: it went whole


def test_a_file_name_that_redaction_lengthens_still_fits_its_column(app, pack):
    from portal.documents.filenames import MAX_NAME_CHARS
    from portal.documents.services import upload_file
    from portal.models import Revision

    name = f"{AWS_KEY_ID} " + "c" * (MAX_NAME_CHARS - len(AWS_KEY_ID) - 5) + ".txt"  # 255; its marker is one longer
    outcome = upload_file(pack, name, b"Plain text.", None)

    assert outcome.accepted and outcome.document.redacted
    stored = Revision.get_by_id(outcome.revision.id).original_name
    assert len(stored) <= MAX_NAME_CHARS and stored.startswith(f"{MARK} c") and stored.endswith("c.txt")


def test_a_title_typed_that_redaction_lengthens_still_fits_its_column(app, pack):
    from portal.documents import editing
    from portal.documents.services import upload_file
    from portal.models import MAX_TITLE_CHARS, Document

    document = upload_file(pack, "notes.md", b"# Notes\n\nThe text.\n", None).document
    typed = f"{AWS_KEY_ID} " + "T" * (MAX_TITLE_CHARS - len(AWS_KEY_ID) - 1)  # 255; its marker is one longer

    editing.edit_document(document, document.current_version, None, typed)

    title = Document.get_by_id(document.id).title
    assert len(title) <= MAX_TITLE_CHARS and title.startswith(f"{MARK} TTT")
