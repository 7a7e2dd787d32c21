"""The `cairn` command line, run in process with Flask's CLI runner against the test app (one smoke
test runs it as a real subprocess: `python -m portal.cli`, as the console script does)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import cli_runner
from portal.models import Agent, Pack

CAIRN = [sys.executable, "-m", "portal.cli"]
# The commands run from a temporary folder: put this checkout first, not wherever `portal` is installed from.
PROJECT_ENV = {"PYTHONPATH": str(Path(__file__).resolve().parents[1])}


@pytest.fixture
def cli(app):
    app.config.update(CAIRN_ADMIN_EMAIL="root@example.test", CAIRN_ADMIN_PASSWORD="long enough password")
    run = cli_runner(app)
    run("init")
    return run


def test_init_packs_ingest_search_and_rebuild(cli, tmp_path):
    assert "up to date" in cli("init").stdout
    cli("users", "create", "member@example.test", "--role", "Member", "--company", "Acme", stdin="member password\n")
    cli("packs", "create", "runbooks", "--title", "Runbooks", "--kind", "generic")
    cli("packs", "create", "acme-fds", "--title", "Acme specs", "--kind", "company", "--company", "Acme")
    good = tmp_path / "lock-entries.md"
    good.write_text("# Lock entries\n\nDelete stale lock entries in SM12 only after checking the owner.\n")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    result = cli("ingest", "runbooks", str(good), str(empty), "--json", ok=False)
    assert result.returncode == 1
    accepted, refused = [json.loads(line) for line in result.stdout.splitlines()]
    assert accepted["status"] == "accepted" and accepted["reason"] is None
    assert accepted["document"]["id"] == "lock-entries" and accepted["document"]["version"] == 1
    assert len(accepted["document"]["sha256"]) == 64 and accepted["document"]["passages"] == 1
    assert accepted["document"]["images"] == {"kept": 0, "not_kept": {}}
    assert refused == {
        "file": str(empty),
        "status": "refused",
        "reason": "empty",
        "message": refused["message"],
        "document": None,
    }
    assert "no text" in refused["message"]

    packs = json.loads(cli("packs", "list", "--json").stdout)
    assert packs == [
        {"slug": "acme-fds", "title": "Acme specs", "kind": "company", "company": "Acme", "documents": 0},
        {"slug": "runbooks", "title": "Runbooks", "kind": "generic", "company": None, "documents": 1},
    ]
    found = json.loads(cli("search", "stale lock entries", "--pack", "runbooks", "--json").stdout)
    assert found["query"] == "stale lock entries"
    hit = found["hits"][0]
    assert set(hit) == {
        "passage_id",
        "document_id",
        "document_title",
        "pack",
        "version",
        "page",
        "heading_path",
        "line_start",
        "line_end",
        "score",
        "text",
    }
    assert (hit["document_id"], hit["pack"], hit["version"], hit["line_start"]) == ("lock-entries", "runbooks", 1, 1)
    assert json.loads(cli("search", "payroll", "--pack", "runbooks", "--json").stdout)["hits"] == []

    index_dir = tmp_path / "data" / "indexes" / "runbooks"
    assert index_dir.exists()
    assert "runbooks: 1 passages" in cli("index", "rebuild").stdout
    assert json.loads(cli("search", "SM12", "--pack", "runbooks", "--json").stdout)["hits"]
    ok_again = cli("ingest", "runbooks", str(good), "--json")
    assert json.loads(ok_again.stdout)["message"].startswith("unchanged")
    # a file of another name that is the same document says whose text it replaced
    other = tmp_path / "Lock Entries.md"
    other.write_text("# Lock entries\n\nCheck the owner of a lock in SM12 before deleting it.\n")
    replaced = json.loads(cli("ingest", "runbooks", str(other), "--json").stdout)
    assert replaced["document"]["version"] == 2
    assert replaced["message"].startswith("It replaced the text read from “lock-entries.md”, another file")


def test_unknown_pack_and_bad_user(cli):
    assert cli("search", "x", "--pack", "nope", ok=False).returncode == 2
    bad = cli("users", "create", "not-an-email", "--role", "Auditor", stdin="long enough\n", ok=False)
    assert bad.returncode == 2 and "not an e-mail" in bad.stderr


@pytest.mark.parametrize("command", [("init",), ("packs", "list"), ("eval", "--no-cranfield")])
def test_a_bad_classification_policy_stops_every_command_with_a_message(tmp_path, command):
    """The smoke test of the real process: `python -m portal.cli` reads the environment and exits 2 with a message."""
    env = {
        **os.environ,
        **PROJECT_ENV,
        "CAIRN_DATA_DIR": str(tmp_path / "data"),
        "CAIRN_CLASSIFICATION_POLICY": '[{"rule": "privat_key", "decision": "block"}]',
    }
    result = subprocess.run(CAIRN + list(command), env=env, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 2
    assert "CAIRN_CLASSIFICATION_POLICY: unknown classification rule(s): privat_key" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_the_run_sequence_never_seeds_the_demo_into_a_deployment_with_its_own_administrator(cli, tmp_path):
    """scripts/run after `cairn init` with your own administrator: no demo administrator, and it says why."""
    skipped = cli("seed-demo", "--if-empty")
    assert "demo seed skipped: the database is not empty" in skipped.stdout
    refused = cli("seed-demo", ok=False)
    assert refused.returncode == 1
    assert "users of its own (root@example.test)" in refused.stderr and "--force" in refused.stderr
    assert json.loads(cli("packs", "list", "--json").stdout) == []
    from playhouse.db_url import connect

    db = connect(os.environ.get("CAIRN_TEST_DATABASE_URL") or f"sqlite:///{tmp_path / 'data' / 'cairn.db'}")
    emails = [row[0] for row in db.execute_sql('SELECT email FROM "user"').fetchall()]
    db.close()
    assert emails == ["root@example.test"]


def test_set_password_replaces_the_password(cli, tmp_path):
    assert (
        "new password set for root@example.test"
        in cli("users", "set-password", "root@example.test", stdin="another long password\n").stdout
    )
    short = cli("users", "set-password", "root@example.test", stdin="short\n", ok=False)
    assert short.returncode == 2 and "at least 8 characters" in short.stderr
    assert cli("users", "set-password", "nobody@example.test", stdin="long enough\n", ok=False).returncode == 2
    from playhouse.db_url import connect
    from werkzeug.security import check_password_hash

    db = connect(os.environ.get("CAIRN_TEST_DATABASE_URL") or f"sqlite:///{tmp_path / 'data' / 'cairn.db'}")
    (hashed,) = db.execute_sql('SELECT password_hash FROM "user"').fetchone()
    db.close()
    assert check_password_hash(hashed, "another long password")


def test_only_the_command_line_imports_the_command_line():
    """Commands call services, never the other way round (agents/cli.py once imported the CLI helpers)."""
    portal_dir = Path(__file__).resolve().parents[1] / "portal"
    importers = [
        str(path.relative_to(portal_dir))
        for path in portal_dir.rglob("*.py")
        if "cli" not in path.relative_to(portal_dir).parts[:1] and ("portal.cli" in path.read_text(encoding="utf-8"))
    ]
    assert importers == []


def test_arguments_lose_control_characters_as_forms_do_but_a_path_to_a_file_stays_as_typed(cli, tmp_path):
    """A title typed with a right-to-left override, a bell and a terminal escape was stored as typed: members saw
    the agent's name reordered in their chat, and a terminal listing it rang and turned red."""
    cli("packs", "create", "rtl", "--title", "Pack \u202eevil\x07bell", "--description", "a\x1b[31mred")
    cli("agents", "create", "rtl-agent", "--name", "N\u202eame\x1b[31m", "--mode", "open")
    pack = Pack.get(Pack.slug == "rtl")
    assert (pack.title, pack.description) == ("Pack evilbell", "a[31mred")
    assert Agent.get(Agent.slug == "rtl-agent").name == "Name[31m"

    # a file may be named so: its path reaches the upload as typed, whose own rule refuses the name with a reason
    odd = tmp_path / "notes\x07.md"
    odd.write_text("# Notes\n\nDelete stale lock entries in SM12.\n")
    outcome = json.loads(cli("ingest", "rtl", str(odd), "--json", ok=False).stdout.splitlines()[0])
    assert (outcome["reason"], outcome["file"]) == ("bad_name", str(odd))
    assert "U+0007" in outcome["message"]


def test_numbers_out_of_range_are_usage_errors_never_a_traceback_or_a_silent_server(cli, users):
    """`cairn tokens revoke 99999999999999999999999` printed OverflowError's traceback; `cairn serve --workers 0`
    started a gunicorn that never answered, and `--port -1` printed gunicorn's traceback (found by a probe)."""
    from portal.api.tokens import create_token

    huge = cli("tokens", "revoke", "99999999999999999999999", ok=False)
    assert huge.returncode == 2 and "is not in the range" in huge.stderr
    for arguments in (["--workers", "0"], ["--threads", "0"], ["--port", "-1"], ["--port", "70000"]):
        refused = cli("serve", *arguments, ok=False)
        assert refused.returncode == 2 and "is not in the range" in refused.stderr, arguments
    token, _secret = create_token(users["Auditor"], "probe")
    assert cli("tokens", "revoke", str(token.id)).stdout.startswith(f"revoked token {token.id} (probe)")
    again = cli("tokens", "revoke", str(token.id))
    assert "was revoked already; nothing changed" in again.stdout
