"""The app served by gunicorn, as production serves it, for the tests that talk to it over HTTP.

The server is a child process of its own (one worker, threads, with the arguments
``cairn serve`` gives gunicorn) on a loopback port, reading the same data folder and database as the
test's own app; the test waits until it answers, not a fixed time.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import gunicorn.config
import requests

from helpers import PASSWORD, POSTGRES_URL
from portal.cli.server import gunicorn_arguments

ROOT = Path(__file__).resolve().parents[1]
START_DEADLINE_S = 180  # a busy machine starting Python, gunicorn and the app
# Newer gunicorn opens a control socket at one fixed path per user; two servers at once must not share it.
_NO_CONTROL_SOCKET = (
    ("--no-control-socket",) if any(s.name == "control_socket_disable" for s in gunicorn.config.KNOWN_SETTINGS) else ()
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def gunicorn_server(data_dir: Path, **settings: str) -> Iterator[str]:
    """Serve the app on ``data_dir`` (and the test database) with ``settings``; yield its base URL."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_") and k != "DATABASE_URL"}
    env.update(CAIRN_DATA_DIR=str(data_dir), SECRET_KEY="test-secret", PYTHONPATH=str(ROOT), **settings)
    if POSTGRES_URL:
        env["DATABASE_URL"] = POSTGRES_URL
    log_path = data_dir.parent / f"gunicorn-{port}.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                *gunicorn_arguments("127.0.0.1", port, workers=1, threads=4),
                # later options win: a busy machine gets more time, and a stop does not wait long
                "--timeout",
                "300",
                "--graceful-timeout",
                "10",
                *_NO_CONTROL_SOCKET,
            ],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_until_serving(url, server, log_path)
            yield url
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(60)


def _wait_until_serving(url: str, server: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + START_DEADLINE_S
    while True:
        try:
            # A busy machine may accept the connection long before the app answers: a slow answer is
            # not a failure, only the deadline is.
            if requests.get(f"{url}/healthz", timeout=60).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):
            pass
        if server.poll() is not None:
            raise AssertionError(f"gunicorn exited with {server.returncode}:\n{log_path.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(
                f"gunicorn did not answer within {START_DEADLINE_S} s:\n{log_path.read_text()[-3000:]}"
            )
        time.sleep(0.2)  # polling until it answers, not waiting a fixed time


def signed_in_browser(url: str, email: str) -> requests.Session:
    """A session signed in through the login form, CSRF token and all, as a browser does it."""
    session = requests.Session()
    form = session.get(f"{url}/login", timeout=60).text
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', form).group(1)
    response = session.post(
        f"{url}/login",
        data={"email": email, "password": PASSWORD, "csrf_token": csrf},
        allow_redirects=False,
        timeout=60,
    )
    assert response.status_code == 302, response.text
    return session
