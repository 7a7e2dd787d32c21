"""Load on the portal as people use it: members chatting and reading sources, staff searching, uploading, reviewing.

Run on demand, not in the test suite:

    .venv/bin/python bench/load_bench.py                  # 2 workers x 4 threads, 20 s per phase
    .venv/bin/python bench/load_bench.py --workers 1 --seconds 30

Method: a fresh data folder (temporary unless ``--data-dir``), ``cairn init``,
``cairn seed-demo``, a pack for the uploads and ``--members`` more Members of
the demo company; then gunicorn on a loopback port with the arguments
``cairn serve`` uses (``portal.cli.server.gunicorn_arguments``). Every client
connection signs in through the login form as a browser does (CSRF token,
session cookie, one User-Agent per session: sessions are tied to it) and sends
one request at a time over its own keep-alive HTTP connection (a closed loop),
so "connections" is the number of requests in flight.

Two phases of ``--seconds`` each, then the server is stopped:

1. **pages**, ``--page-connections`` (32): each connection is a Member and a
   staff user and picks by weight: the conversation page, an answer's source
   page, a cited document, a rating (htmx), a pack search, the Answer feedback
   review list, an upload of a small new Markdown document (htmx; PlatformAdmin
   connections only, the others search instead).
2. **chat**, ``--chat-connections`` (16): each connection is a Member asking the
   demo questions (portal/demo/eval/questions.json) in its own conversation
   with htmx, as the chat page does.

Printed: requests/s, p50/p95/p99/max per kind, every answer that was not
2xx/3xx (and every failed connection), the server's and the clients' CPU and
the CPU the host stole in each phase, the load average, the resident memory
of each gunicorn process, and whether the targets of issue 17 were met: no
errors; page kinds p99 under 250 ms in phase 1; chat questions at least 30/s
with p99 under 1 s in phase 2.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import urllib.parse
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from measure import percentile  # noqa: E402

from portal.cli.server import DEFAULT_THREADS, DEFAULT_WORKERS, gunicorn_arguments  # noqa: E402

CATALOG = ROOT / "portal" / "demo" / "catalog.toml"
QUESTIONS = ROOT / "portal" / "demo" / "eval" / "questions.json"
UPLOAD_PACK = "load-bench-uploads"
MEMBER_PASSWORD = "load bench member password"
TIMEOUT_S = 60
IDLE_REOPEN_S = 1.0
"""gunicorn closes a kept-alive connection after 2 s idle (``--keep-alive``): reopen before that, never mid-request."""

PAGE_KINDS = {  # kind: weight in phase 1
    "conversation page": 15,
    "source page": 20,
    "cited document": 20,
    "rating": 8,
    "pack search": 20,
    "feedback review": 12,
    "upload": 5,
}
READ_KINDS = ("conversation page", "source page", "cited document", "pack search", "feedback review")
PAGE_P99_TARGET_MS = 250.0
CHAT_RATE_TARGET = 30.0
CHAT_P99_TARGET_MS = 1000.0

_ANSWER_LINK = re.compile(r"/chat/answers/(\d+)/sources(?:/(\d+)/document)?\b")
_CSRF_HEADER = re.compile(r'"X-CSRFToken": "([^"]+)"')
_CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')
_SERVER_PROBLEM = re.compile(r"Traceback|\[(ERROR|CRITICAL)\]|ERROR|failed|database is locked")


# --- the portal under test ---------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _cairn(env: dict, *arguments: str, stdin: str | None = None) -> None:
    subprocess.run(
        [sys.executable, "-m", "portal.cli", *arguments],
        env=env,
        cwd=ROOT,
        input=stdin,
        text=True,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def demo_users() -> tuple[dict[str, str], str]:
    """The demo's staff users (email: password) and its company's name, from the seed's catalog."""
    catalog = tomllib.loads(CATALOG.read_text())
    staff = {u["email"]: u["password"] for u in catalog["users"] if "Member" not in u["roles"]}
    return staff, catalog["company"]["name"]


def prepare_data(data_dir: Path, members: int) -> dict:
    """Migrate, seed the demo, add the upload pack and ``members`` Members; return the environment to serve with."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_") and k != "DATABASE_URL"}
    env.update(CAIRN_DATA_DIR=str(data_dir), PYTHONPATH=str(ROOT))
    _cairn(env, "init")
    _cairn(env, "seed-demo", "--if-empty")
    _cairn(env, "packs", "create", UPLOAD_PACK, "--title", "Load bench uploads")
    _, company = demo_users()
    for number in range(members):
        email = f"member{number:02d}@load.bench.test"
        _cairn(env, "users", "create", email, "--role", "Member", "--company", company, stdin=MEMBER_PASSWORD + "\n")
    return env


class Portal:
    """gunicorn serving the prepared data folder on a loopback port, as ``cairn serve`` runs it."""

    def __init__(self, env: dict, workers: int, threads: int, log_path: Path):
        self.port = _free_port()
        no_control_socket = ["--no-control-socket"] if _gunicorn_has_control_socket() else []
        self.log = log_path.open("w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                *no_control_socket,
                *gunicorn_arguments("127.0.0.1", self.port, workers, threads),
            ],
            env=env,
            cwd=ROOT,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.log_path = log_path

    def wait_until_serving(self, deadline_s: float = 180) -> None:
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT_S)
                connection.request("GET", "/healthz")
                if connection.getresponse().status == 200:
                    return
            except OSError:
                pass
            if self.process.poll() is not None:
                raise SystemExit(f"gunicorn exited with {self.process.returncode}; see {self.log_path}")
            time.sleep(0.2)
        raise SystemExit(f"gunicorn did not answer within {deadline_s} s; see {self.log_path}")

    def worker_rss_mb(self) -> list[float]:
        """Resident memory of each worker process (children of the gunicorn master), in MB."""
        return [_rss_mb(pid) for pid in self._worker_pids()]

    def cpu_seconds(self) -> float:
        """CPU time the master and its workers have used so far (user + system)."""
        return sum(_cpu_seconds(pid) for pid in [self.process.pid, *self._worker_pids()])

    def _worker_pids(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in children.read_text().split()] if children.exists() else []

    def master_rss_mb(self) -> float:
        return _rss_mb(self.process.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(60)
        self.log.close()


def _gunicorn_has_control_socket() -> bool:
    """Newer gunicorn opens a control socket at one path per user; a second server (the demo's) must not clash."""
    import gunicorn.config

    return any(setting.name == "control_socket_disable" for setting in gunicorn.config.KNOWN_SETTINGS)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _own_cpu_seconds() -> float:
    """CPU time of this bench process (the clients share the machine with the server)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _stolen_cpu_seconds() -> float:
    """CPU time the hypervisor gave other guests while this machine's cores wanted it (``steal`` in
    /proc/stat): on a shared host it is why two runs of the same tree back to back differ."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else 0.0


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# --- a browser ---------------------------------------------------------------------------------------


class Failed(Exception):
    """A request that did not answer 2xx/3xx, or whose connection failed."""


@dataclass
class Response:
    status: int
    body: str
    headers: dict[str, str]


class Browser:
    """One signed-in person on one keep-alive connection: its cookies, its User-Agent, its CSRF token."""

    _numbers = itertools.count(1)

    def __init__(self, port: int):
        self.port = port
        self.user_agent = f"cairn-load-bench/{next(self._numbers)}"
        self.cookies: dict[str, str] = {}
        self.csrf = ""
        self._connection: http.client.HTTPConnection | None = None
        self._last_used = 0.0

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> Response:
        sent = {"User-Agent": self.user_agent, "Accept": "text/html"}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        sent.update(headers or {})
        if self._connection is not None and time.monotonic() - self._last_used > IDLE_REOPEN_S:
            self._connection.close()
            self._connection = None
        if self._connection is None:
            self._connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT_S)
        try:
            self._connection.request(method, path, body=body, headers=sent)
            answer = self._connection.getresponse()
            text = answer.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException) as error:
            self._connection.close()
            self._connection = None
            raise Failed(f"{method} {path}: {error.__class__.__name__}: {error}") from error
        finally:
            self._last_used = time.monotonic()
        self._keep_cookies(answer.headers.get_all("Set-Cookie") or [])
        return Response(answer.status, text, {k.lower(): v for k, v in answer.getheaders()})

    def _keep_cookies(self, set_cookies: list[str]) -> None:
        for header in set_cookies:
            name, _, rest = header.partition("=")
            value = rest.split(";", 1)[0]
            if value and "max-age=0" not in header.lower():
                self.cookies[name.strip()] = value
            else:
                self.cookies.pop(name.strip(), None)

    def form(self, path: str, fields: dict | list, htmx: bool = True) -> Response:
        body = urllib.parse.urlencode(fields, doseq=True).encode()
        headers = {"Content-Type": "application/x-www-form-urlencoded", "X-CSRFToken": self.csrf}
        if htmx:
            headers["HX-Request"] = "true"
        return self.request("POST", path, body, headers)

    def upload(self, path: str, file_name: str, content: bytes) -> Response:
        boundary = f"cairnbench{random.getrandbits(64):x}"
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n{self.csrf}\r\n'
                f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{file_name}"\r\n'
                "Content-Type: text/markdown\r\n\r\n"
            ).encode()
            + content
            + f"\r\n--{boundary}--\r\n".encode()
        )
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "HX-Request": "true"}
        return self.request("POST", path, body, headers)

    def sign_in(self, email: str, password: str) -> None:
        page = self.request("GET", "/login")
        csrf = _CSRF_FIELD.search(page.body).group(1)
        fields = {"email": email, "password": password, "csrf_token": csrf}
        answer = self.form("/login", fields, htmx=False)
        if answer.status != 302:
            raise Failed(f"signing in as {email} answered {answer.status}")
        home = answer
        while home.status in (301, 302, 303):  # to the person's start page, which carries the CSRF token
            home = self.request("GET", urllib.parse.urlsplit(home.headers["location"]).path)
        self.csrf = _CSRF_HEADER.search(home.body).group(1)


# --- what people do ------------------------------------------------------------------------------------


@dataclass
class Recorder:
    """Every request's kind, time and outcome, shared by the client threads."""

    times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    failures: Counter = field(default_factory=Counter)
    failure_samples: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def timed(self, kind: str, path: str, send, *arguments):
        """``send(*arguments)``, timed and recorded as ``kind``; its answer, or None when it was not 2xx/3xx."""
        started = time.perf_counter()
        try:
            answer = send(*arguments)
        except (Failed, OSError, http.client.HTTPException) as error:
            self._failed(kind, path, "no answer", str(error))
            return None
        elapsed = time.perf_counter() - started
        with self.lock:
            self.times[kind].append(elapsed)
        if not 200 <= answer.status < 400:
            self._failed(kind, path, answer.status, answer.body[:300])
            return None
        return answer

    def _failed(self, kind: str, path: str, status, excerpt: str) -> None:
        key = (kind, re.sub(r"\d+", "N", path), status)
        with self.lock:
            self.failures[key] += 1
            self.failure_samples.setdefault(key, f"{path}: {' '.join(excerpt.split())[:200]}")


@dataclass
class Member:
    browser: Browser
    agent: str
    questions: list[str]
    conversation: int | None = None
    runs: list[int] = field(default_factory=list)
    cited: list[str] = field(default_factory=list)
    asked: int = 0

    def next_question(self) -> str:
        question = self.questions[self.asked % len(self.questions)]
        self.asked += 1
        return question

    def remember(self, html: str) -> None:
        for run_id, number in _ANSWER_LINK.findall(html):
            if number:
                path = f"/chat/answers/{run_id}/sources/{number}/document"
                if path not in self.cited:
                    self.cited.append(path)
            elif int(run_id) not in self.runs:
                self.runs.append(int(run_id))
        del self.cited[:-40], self.runs[:-40]

    def ask(self, recorder: Recorder) -> None:
        question = self.next_question()
        if self.conversation is None:
            fields = {"agent": self.agent, "question": question}
            answer = recorder.timed("chat question", "/chat/", self.browser.form, "/chat/", fields)
            if answer is not None:
                self.conversation = int(answer.headers["hx-push-url"].rsplit("/", 1)[1])
        else:
            path = f"/chat/{self.conversation}"
            answer = recorder.timed("chat question", path, self.browser.form, path, {"question": question})
        if answer is not None:
            self.remember(answer.body)


def question_plan() -> dict[str, list[str]]:
    """Each offered demo agent (company agents and shared ones) with the demo questions about its packs."""
    catalog = tomllib.loads(CATALOG.read_text())
    questions = json.loads(QUESTIONS.read_text())
    plan = {}
    for agent in catalog["agents"]:
        packs = set(agent.get("packs", []))
        if agent.get("company") or packs:
            asked = [q["question"] for q in questions if packs & set(q["packs"])]
            if asked:
                plan[agent["slug"]] = asked
    return plan


def signed_in_members(port: int, count: int, plan: dict[str, list[str]], members: int) -> list[Member]:
    agents = sorted(plan)
    made = []
    for number in range(count):
        browser = Browser(port)
        browser.sign_in(f"member{number % members:02d}@load.bench.test", MEMBER_PASSWORD)
        agent = agents[number % len(agents)]
        questions = plan[agent][:]
        random.Random(number).shuffle(questions)
        made.append(Member(browser, agent, questions))
    return made


def search_queries() -> list[str]:
    words = [w for q in json.loads(QUESTIONS.read_text()) for w in re.findall(r"[A-Za-z][\w-]{3,}", q["question"])]
    rng = random.Random(7)
    return [" ".join(rng.sample(words, 3)) for _ in range(200)]


def page_client(member: Member, staff: Browser, staff_is_admin: bool, recorder: Recorder, until: float, seed: int):
    rng = random.Random(seed)
    kinds, weights = zip(*PAGE_KINDS.items())
    queries = search_queries()
    packs = [p["slug"] for p in tomllib.loads(CATALOG.read_text())["packs"]]
    uploads = itertools.count(1)
    while time.monotonic() < until:
        kind = rng.choices(kinds, weights)[0]
        if kind == "upload" and not staff_is_admin:
            kind = "pack search"
        if kind in ("conversation page", "source page", "rating", "cited document") and not member.runs:
            kind = "pack search"
        if kind == "cited document" and not member.cited:
            kind = "source page"
        if kind == "conversation page":
            path = f"/chat/{member.conversation}"
            recorder.timed(kind, path, member.browser.request, "GET", path)
        elif kind == "source page":
            path = f"/chat/answers/{rng.choice(member.runs)}/sources"
            answer = recorder.timed(kind, path, member.browser.request, "GET", path)
            if answer is not None:
                member.remember(answer.body)
        elif kind == "cited document":
            path = rng.choice(member.cited)
            recorder.timed(kind, path, member.browser.request, "GET", path)
        elif kind == "rating":
            path = f"/chat/answers/{rng.choice(member.runs)}/feedback"
            fields = (
                {"rating": "helpful"}
                if rng.random() < 0.6
                else {"rating": "not_helpful", "reasons": ["incomplete"], "note": "load bench"}
            )
            recorder.timed(kind, path, member.browser.form, path, fields)
        elif kind == "pack search":
            path = f"/packs/{rng.choice(packs)}/search?" + urllib.parse.urlencode({"q": rng.choice(queries)})
            recorder.timed(kind, path, staff.request, "GET", path)
        elif kind == "feedback review":
            path = rng.choice(["/feedback/", "/feedback/?rating=not_helpful", "/feedback/?status=new"])
            recorder.timed(kind, path, staff.request, "GET", path)
        elif kind == "upload":
            name = f"bench-{seed:02d}-{next(uploads):05d}.md"
            text = (
                f"# Load bench note {seed}-{name}\n\n## Procedure\n\nCheck the output queue in SP01, then the "
                f"background job log in SM37 for job ZLOAD_{seed}. Restart the job when it was cancelled.\n"
            ).encode()
            path = f"/packs/{UPLOAD_PACK}/documents"
            recorder.timed(kind, path, staff.upload, path, name, text)


def chat_client(member: Member, recorder: Recorder, until: float):
    while time.monotonic() < until:
        member.ask(recorder)


def run_threads(targets: list) -> None:
    threads = [threading.Thread(target=target, daemon=True) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


# --- the report ---------------------------------------------------------------------------------------


def summary(recorder: Recorder, seconds: float) -> dict:
    kinds = {}
    for kind, times in sorted(recorder.times.items()):
        kinds[kind] = {
            "requests": len(times),
            "per_second": round(len(times) / seconds, 1),
            "p50_ms": round(1000 * statistics.median(times), 1),
            "p95_ms": round(1000 * percentile(times, 0.95), 1),
            "p99_ms": round(1000 * percentile(times, 0.99), 1),
            "max_ms": round(1000 * max(times), 1),
        }
    total = sum(len(t) for t in recorder.times.values())
    failures = [
        {"kind": k, "path": p, "status": s, "count": n, "sample": recorder.failure_samples[(k, p, s)]}
        for (k, p, s), n in sorted(recorder.failures.items(), key=str)
    ]
    return {
        "seconds": round(seconds, 1),
        "requests": total,
        "per_second": round(total / seconds, 1),
        "kinds": kinds,
        "failures": failures,
    }


def print_phase(name: str, connections: int, result: dict) -> None:
    print(
        f"\n{name}: {connections} connections, {result['seconds']} s, {result['requests']} requests, "
        f"{result['per_second']} requests/s; server CPU {result['server_cpu_seconds']} s, "
        f"{result['server_cpu_ms_per_request']} ms a request; bench clients' CPU {result['client_cpu_seconds']} s; "
        f"CPU stolen by the host {result['stolen_cpu_seconds']} s"
    )
    print(f"  {'kind':<18} {'requests':>8} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for kind, row in result["kinds"].items():
        print(
            f"  {kind:<18} {row['requests']:>8} {row['per_second']:>7} {row['p50_ms']:>8} {row['p95_ms']:>8} "
            f"{row['p99_ms']:>8} {row['max_ms']:>8}"
        )
    for failure in result["failures"]:
        print(
            f"  NOT 2xx/3xx: {failure['count']} x {failure['status']} {failure['kind']} {failure['path']} "
            f"({failure['sample']})"
        )


def verdicts(pages: dict, chat: dict) -> list[tuple[str, bool]]:
    errors = sum(f["count"] for f in pages["failures"] + chat["failures"])
    page_p99 = max((pages["kinds"][k]["p99_ms"] for k in READ_KINDS if k in pages["kinds"]), default=0.0)
    chat_row = chat["kinds"].get("chat question", {"per_second": 0.0, "p99_ms": float("inf")})
    return [
        (f"no errors ({errors})", errors == 0),
        (f"pages p99 under {PAGE_P99_TARGET_MS:.0f} ms (worst page kind {page_p99} ms)", page_p99 < PAGE_P99_TARGET_MS),
        (
            f"chat questions at least {CHAT_RATE_TARGET:.0f}/s ({chat_row['per_second']}/s)",
            chat_row["per_second"] >= CHAT_RATE_TARGET,
        ),
        (
            f"chat p99 under {CHAT_P99_TARGET_MS:.0f} ms ({chat_row['p99_ms']} ms)",
            chat_row["p99_ms"] < CHAT_P99_TARGET_MS,
        ),
    ]


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[DEFAULT_WORKERS],
        help=f"gunicorn worker processes; several values measure each in turn (default {DEFAULT_WORKERS})",
    )
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="threads per worker")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase (default 20)")
    parser.add_argument("--page-connections", type=int, default=32)
    parser.add_argument("--chat-connections", type=int, default=16)
    parser.add_argument("--members", type=int, default=8, help="Members created for the bench (default 8)")
    parser.add_argument("--data-dir", type=Path, help="a new folder to seed instead of a temporary one")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    return parser.parse_args()


def main() -> int:
    arguments = parse_arguments()
    met = True
    results = []
    with tempfile.TemporaryDirectory(prefix="cairn-load-") as temporary:
        seeded = arguments.data_dir or Path(temporary) / "seeded"
        started = time.monotonic()
        env = prepare_data(seeded, arguments.members)
        print(f"demo seeded in {time.monotonic() - started:.0f} s")
        for workers in arguments.workers:
            # Each configuration starts from the same freshly seeded data (the previous one uploaded and rated).
            data_dir = Path(temporary) / f"data-{workers}"
            shutil.copytree(seeded, data_dir)
            result = measure({**env, "CAIRN_DATA_DIR": str(data_dir)}, workers, arguments, Path(temporary))
            met &= report(result, arguments)
            results.append(result)
    if arguments.json:
        print(json.dumps(results, indent=2))
    return 0 if met else 1


def measure(env: dict, workers: int, arguments: argparse.Namespace, folder: Path) -> dict:
    portal = Portal(env, workers, arguments.threads, folder / f"gunicorn-{workers}.log")
    try:
        portal.wait_until_serving()
        load_before = [round(v, 2) for v in os.getloadavg()]
        print(
            f"\nportal ready: {workers} worker(s) x {arguments.threads} threads on port {portal.port}; "
            f"load average {' '.join(map(str, load_before))}",
            flush=True,
        )
        result = run(portal, arguments)
        result["rss_mb"] = {
            "master": round(portal.master_rss_mb(), 1),
            "workers": [round(v, 1) for v in portal.worker_rss_mb()],
        }
    finally:
        portal.stop()
    result["server_log_problems"] = [
        line for line in portal.log_path.read_text().splitlines() if _SERVER_PROBLEM.search(line)
    ]
    result["load_average_before"] = load_before
    result["load_average_after"] = [round(v, 2) for v in os.getloadavg()]
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    result["workers"], result["threads"] = workers, arguments.threads
    return result


def report(result: dict, arguments: argparse.Namespace) -> bool:
    """Print one configuration's results; True when it met every target."""
    print(f"\n=== {result['workers']} worker(s) x {result['threads']} threads, {result['date']}")
    print_phase("phase 1, pages", arguments.page_connections, result["pages"])
    print_phase("phase 2, chat", arguments.chat_connections, result["chat"])
    print(
        f"\nresident memory: gunicorn master {result['rss_mb']['master']} MB, workers "
        f"{', '.join(f'{v} MB' for v in result['rss_mb']['workers'])}"
    )
    print(
        f"load average before {' '.join(map(str, result['load_average_before']))}, "
        f"after {' '.join(map(str, result['load_average_after']))}"
    )
    problems = result["server_log_problems"]
    print(f"server log: {len(problems)} line(s) telling of a problem")
    for line in problems[:20]:
        print(f"  {line[:300]}")
    met = not problems
    for text, ok in verdicts(result["pages"], result["chat"]):
        print(f"  {'met' if ok else 'NOT MET'}: {text}")
        met &= ok
    return met


def run(portal: Portal, arguments: argparse.Namespace) -> dict:
    port = portal.port
    plan = question_plan()
    staff_accounts, _ = demo_users()
    # Every page connection's member has asked once, so it has a conversation, an answer and sources to read.
    page_members = signed_in_members(port, arguments.page_connections, plan, arguments.members)
    warm_up = Recorder()
    run_threads([lambda m=m: m.ask(warm_up) for m in page_members])
    staff = []
    for number in range(arguments.page_connections):
        email = sorted(staff_accounts)[number % len(staff_accounts)]
        browser = Browser(port)
        browser.sign_in(email, staff_accounts[email])
        staff.append((browser, email.startswith("admin@")))
    chat_members = signed_in_members(port, arguments.chat_connections, plan, arguments.members)

    def phase(clients) -> dict:
        recorder = Recorder()
        cpu_before, client_before, started = portal.cpu_seconds(), _own_cpu_seconds(), time.monotonic()
        stolen_before = _stolen_cpu_seconds()
        until = started + arguments.seconds
        run_threads([lambda client=client: client(recorder, until) for client in clients])
        result = summary(recorder, time.monotonic() - started)
        cpu = portal.cpu_seconds() - cpu_before
        result["server_cpu_seconds"] = round(cpu, 1)
        result["server_cpu_ms_per_request"] = round(1000 * cpu / max(1, result["requests"]), 1)
        result["client_cpu_seconds"] = round(_own_cpu_seconds() - client_before, 1)
        result["stolen_cpu_seconds"] = round(_stolen_cpu_seconds() - stolen_before, 1)
        return result

    pages = phase(
        [
            lambda recorder, until, n=n: page_client(page_members[n], *staff[n], recorder, until, n)
            for n in range(arguments.page_connections)
        ]
    )
    chat = phase([lambda recorder, until, m=m: chat_client(m, recorder, until) for m in chat_members])
    pages["failures"] = summary(warm_up, 1.0)["failures"] + pages["failures"]
    return {"pages": pages, "chat": chat}


if __name__ == "__main__":
    sys.exit(main())
