"""What one chat answer costs at turn 1 and at turn 500: response bytes and time, over the Flask test client.

Run on demand, not in the test suite:

    .venv/bin/python bench/chat_turn_bench.py

Method: a temporary data folder and SQLite database migrated like production;
one pack with two short runbooks, one preferred-mode agent, one Member signed
in through the login form. The Member starts a conversation with htmx (turn 1,
which answers with the whole chat block), then asks ``--questions`` more with
htmx (turns 2…). The conversation is then grown to ``--turns`` turns by
inserting copies of its first turn through the models (asking hundreds of
questions would measure retrieval, not the chat), and ``--questions`` more are
asked (turns 500…). Every question is the same runbook question, so the
answers are the same size; each request's time is the whole request through
the app (retrieval, the extractive answer, the transaction, rendering). The
conversation page itself (``GET``) is measured at both lengths too.
Expectation: turn 500 answers with as many bytes as turn 2 (give or take a few
digits of the run id) and no slower beyond noise.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from measure import percentile  # noqa: E402

from portal import create_app  # noqa: E402
from portal.agents.services import create_agent  # noqa: E402
from portal.auth.services import create_user  # noqa: E402
from portal.db import database  # noqa: E402
from portal.documents import services as documents  # noqa: E402
from portal.migrate import migrate  # noqa: E402
from portal.models import Conversation, Run, utcnow  # noqa: E402
from portal.packs.services import create_pack  # noqa: E402

PASSWORD = "bench password 1"
QUESTION = "How do I delete old spool requests?"
HTMX = {"HX-Request": "true"}
RUNBOOKS = {
    "spool-overflow.md": "# Spool overflow runbook\n\n## Symptoms\n\nOutput requests pile up and SP01 shows "
    "thousands of entries.\n\n## Fix\n\nRun the report RSPO1041 to delete old spool requests.\n"
    "Then check the TemSe consistency in SP12.\n",
    "lock-entries.md": "# Lock entries runbook\n\n## Fix\n\nDelete stale lock entries in SM12 only after checking "
    "that the owner's session is gone.\n",
}


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=499, help="turns before the long run of questions (default 499)")
    parser.add_argument("--questions", type=int, default=30, help="timed questions at each length (default 30)")
    parser.add_argument("--data-dir", type=Path, help="use this folder instead of a temporary one")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON too")
    return parser.parse_args()


def build(app) -> None:
    with app.app_context():
        migrate(app.config["DATABASE"])
        pack = create_pack("ops", "Operations", "generic")
        for name, text in RUNBOOKS.items():
            documents.upload_file(pack, name, text.encode(), None)
        create_agent(None, "desk", "Service desk", "preferred", "Bench Co", "", ["ops"], add_company=True)
        create_user("member@bench.test", PASSWORD, {"Member"}, "Bench Co")


def grow(app, conversation_id: int, turns: int) -> None:
    """Copies of the first turn, asked before the others, until the conversation has ``turns`` turns."""
    with app.app_context():
        conversation = Conversation.get_by_id(conversation_id)
        first, asked = conversation.turns().get(), conversation.turns().count()
        start = utcnow() - timedelta(days=1)
        Run.update(created_at=start).where(Run.id == first.id).execute()
        row = {k: v for k, v in first.__data__.items() if k != "id"}
        with database().atomic():
            Run.insert_many(
                [{**row, "created_at": start + timedelta(seconds=n)} for n in range(1, turns - asked + 1)]
            ).execute()


def timed(call) -> tuple[float, int]:
    """Milliseconds and response bytes of one request."""
    begun = time.perf_counter()
    response = call()
    elapsed = (time.perf_counter() - begun) * 1000
    assert response.status_code == 200, response.status_code
    return elapsed, len(response.get_data())


def ask_many(client, address: str, count: int) -> list[tuple[float, int]]:
    return [timed(lambda: client.post(address, data={"question": QUESTION}, headers=HTMX)) for _ in range(count)]


def summary(samples: list[tuple[float, int]]) -> dict:
    times = sorted(ms for ms, _ in samples)
    sizes = [size for _, size in samples]
    return {
        "n": len(samples),
        "bytes_min": min(sizes),
        "bytes_max": max(sizes),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(percentile(times, 0.95), 1),
        "mean_ms": round(statistics.fmean(times), 1),
    }


def main() -> None:
    args = parse_arguments()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="cairn-chat-turn-bench-"))
    app = create_app(
        {
            "CAIRN_DATA_DIR": str(data_dir),
            "DATABASE_URL": None,
            "SECRET_KEY": "bench",
            "CAIRN_REPAIR_INDEX_ON_START": False,
            "CAIRN_MODEL_BASE_URL": None,
            "WTF_CSRF_ENABLED": False,
        }
    )
    build(app)
    client = app.test_client()
    signed_in = client.post("/login", data={"email": "member@bench.test", "password": PASSWORD})
    assert signed_in.status_code == 302, signed_in.status_code

    first = timed(lambda: client.post("/chat/", data={"agent": "desk", "question": QUESTION}, headers=HTMX))
    with app.app_context():
        conversation_id = Conversation.get().id
    address = f"/chat/{conversation_id}"
    short = ask_many(client, address, args.questions)
    short_page = [timed(lambda: client.get(address)) for _ in range(args.questions)]
    grow(app, conversation_id, args.turns)
    long = ask_many(client, address, args.questions)
    long_page = [timed(lambda: client.get(address)) for _ in range(args.questions)]
    with app.app_context():
        total = Conversation.get_by_id(conversation_id).turns().count()

    n = args.questions
    result = {
        "answer at turn 1 (the whole chat)": summary([first]),
        f"answers at turns 2–{n + 1}": summary(short),
        f"answers at turns {args.turns + 1}–{args.turns + n}": summary(long),
        f"conversation page at {n + 1} turns": summary(short_page),
        f"conversation page at {total} turns": summary(long_page),
    }
    print(markdown(result))
    if args.json:
        print(json.dumps(result))


def markdown(result: dict) -> str:
    lines = ["| requests | n | bytes | p50 ms | p95 ms | mean ms |", "|---|---|---|---|---|---|"]
    for name, s in result.items():
        size = str(s["bytes_min"]) if s["bytes_min"] == s["bytes_max"] else f"{s['bytes_min']}–{s['bytes_max']}"
        lines.append(f"| {name} | {s['n']} | {size} | {s['p50_ms']} | {s['p95_ms']} | {s['mean_ms']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
