"""Where a page request's CPU goes: the load bench's page kinds replayed in one process, under cProfile.

Run on demand, not in the test suite:

    .venv/bin/python bench/page_profile.py                         # CPU per request of each kind
    .venv/bin/python bench/page_profile.py --profile "source page" # and where that kind's time goes

Method: the data of ``bench/load_bench.py`` (``cairn init``, ``cairn seed-demo``, its
upload pack and Members), then the app in this process and the Flask test client: no
HTTP, no gunicorn, no other request in flight, so the CPU time of a request is the
portal's own. Each Member signs in through the login form and asks a few of the demo
questions; each staff user signs in. Then every kind runs ``--requests`` times (uploads
a sixth as often), after three unmeasured requests of each kind warm the caches, and
its CPU time (``time.process_time``, the JVM's threads included) and wall time per
request are printed. ``--profile KIND`` runs that kind again under cProfile and prints
the functions with the most cumulative time (cProfile's overhead makes those times
larger than the plain ones, and larger for deep call trees such as peewee's).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import os
import pstats
import random
import sys
import tempfile
import time
import tomllib
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import load_bench as load  # noqa: E402

KINDS = list(load.PAGE_KINDS)
WARM_UP_REQUESTS = 3


class Client:
    """One signed-in person on the Flask test client, with the User-Agent their session is tied to."""

    _numbers = itertools.count(1)

    def __init__(self, app):
        self.client = app.test_client()
        self.user_agent = f"cairn-page-profile/{next(self._numbers)}"
        self.csrf = ""

    def get(self, path: str):
        return self.client.get(path, headers={"User-Agent": self.user_agent})

    def form(self, path: str, fields: dict, htmx: bool = True, **options):
        headers = {"User-Agent": self.user_agent, "X-CSRFToken": self.csrf}
        if htmx:
            headers["HX-Request"] = "true"
        return self.client.post(path, data=fields, headers=headers, **options)

    def sign_in(self, email: str, password: str) -> None:
        csrf = load._CSRF_FIELD.search(self.get("/login").get_data(as_text=True)).group(1)
        answer = self.form("/login", {"email": email, "password": password, "csrf_token": csrf}, htmx=False)
        if answer.status_code != 302:
            raise SystemExit(f"signing in as {email} answered {answer.status_code}")
        home = self.client.get(
            answer.headers["location"], headers={"User-Agent": self.user_agent}, follow_redirects=True
        )
        self.csrf = load._CSRF_HEADER.search(home.get_data(as_text=True)).group(1)


class Member:
    """A signed-in Member with a conversation of a few answers, and the documents those cited."""

    def __init__(self, client: Client, agent: str, questions: list[str]):
        self.client = client
        answer = client.form("/chat/", {"agent": agent, "question": questions[0]})
        self.conversation = int(answer.headers["hx-push-url"].rsplit("/", 1)[1])
        html = answer.get_data(as_text=True)
        for question in questions[1:4]:
            html += client.form(f"/chat/{self.conversation}", {"question": question}).get_data(as_text=True)
        self.runs = sorted({int(run) for run, number in load._ANSWER_LINK.findall(html) if not number})
        sources = "".join(client.get(f"/chat/answers/{run}/sources").get_data(as_text=True) for run in self.runs)
        links = load._ANSWER_LINK.findall(sources)
        self.cited = sorted({f"/chat/answers/{run}/sources/{number}/document" for run, number in links if number})


class Replay:
    """The page kinds of ``load_bench.page_client``, one request at a time."""

    def __init__(self, app):
        plan = load.question_plan()
        agents = sorted(plan)
        self.members = []
        for number in range(8):
            client = Client(app)
            client.sign_in(f"member{number:02d}@load.bench.test", load.MEMBER_PASSWORD)
            agent = agents[number % len(agents)]
            self.members.append(Member(client, agent, plan[agent]))
        self.members = [m for m in self.members if m.runs and m.cited]  # a member whose answers cited nothing
        if not self.members:
            raise SystemExit("no Member's answers cited a source: nothing to replay")
        staff, _ = load.demo_users()
        self.staff = []
        for email in sorted(staff):
            client = Client(app)
            client.sign_in(email, staff[email])
            self.staff.append((client, email.startswith("admin@")))
        self.admin = next(client for client, is_admin in self.staff if is_admin)
        self.queries = load.search_queries()
        self.packs = [p["slug"] for p in tomllib.loads(load.CATALOG.read_text())["packs"]]
        self.rng = random.Random(1)
        self.uploads = 0

    def request(self, kind: str, number: int) -> None:
        member = self.members[number % len(self.members)]
        staff = self.staff[number % len(self.staff)][0]
        rng = self.rng
        if kind == "conversation page":
            answer = member.client.get(f"/chat/{member.conversation}")
        elif kind == "source page":
            answer = member.client.get(f"/chat/answers/{rng.choice(member.runs)}/sources")
        elif kind == "cited document":
            answer = member.client.get(rng.choice(member.cited))
        elif kind == "rating":
            fields = (
                {"rating": "helpful"}
                if rng.random() < 0.6
                else {"rating": "not_helpful", "reasons": ["incomplete"], "note": "page profile"}
            )
            answer = member.client.form(f"/chat/answers/{rng.choice(member.runs)}/feedback", fields)
        elif kind == "pack search":
            query = urllib.parse.urlencode({"q": rng.choice(self.queries)})
            answer = staff.get(f"/packs/{rng.choice(self.packs)}/search?{query}")
        elif kind == "feedback review":
            answer = staff.get(rng.choice(["/feedback/", "/feedback/?rating=not_helpful", "/feedback/?status=new"]))
        else:
            self.uploads += 1
            name = f"profile-{self.uploads:05d}.md"
            text = f"# Page profile note {name}\n\n## Procedure\n\nCheck the output queue in SP01.\n".encode()
            fields = {"csrf_token": self.admin.csrf, "files": (io.BytesIO(text), name, "text/markdown")}
            answer = self.admin.form(f"/packs/{load.UPLOAD_PACK}/documents", fields, content_type="multipart/form-data")
        if answer.status_code >= 400:
            raise SystemExit(f"{kind} answered {answer.status_code}: {answer.get_data(as_text=True)[:300]}")


def requests_of(kind: str, requests: int) -> int:
    return max(5, requests // 6) if kind == "upload" else requests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=60, help="requests of each kind (default 60)")
    parser.add_argument("--profile", choices=KINDS, help="profile this kind too")
    parser.add_argument("--top", type=int, default=40, help="functions printed with --profile (default 40)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cairn-page-profile-") as folder:
        data_dir = Path(folder) / "data"
        load.prepare_data(data_dir, 8)
        os.environ["CAIRN_DATA_DIR"] = str(data_dir)
        from portal import create_app

        replay = Replay(create_app())
        for kind in KINDS:
            for number in range(WARM_UP_REQUESTS):
                replay.request(kind, number)
        print(f"{'kind':<18} {'CPU ms':>7} {'wall ms':>8}")
        for kind in KINDS:
            count = requests_of(kind, arguments.requests)
            cpu, wall = time.process_time(), time.perf_counter()
            for number in range(count):
                replay.request(kind, number)
            cpu, wall = (time.process_time() - cpu) / count, (time.perf_counter() - wall) / count
            print(f"{kind:<18} {1000 * cpu:>7.1f} {1000 * wall:>8.1f}")
        if arguments.profile:
            profile = cProfile.Profile()
            profile.enable()
            for number in range(requests_of(arguments.profile, arguments.requests)):
                replay.request(arguments.profile, number)
            profile.disable()
            printed = io.StringIO()
            pstats.Stats(profile, stream=printed).sort_stats("cumulative").print_stats(arguments.top)
            print(printed.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
