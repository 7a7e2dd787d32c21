"""Make the README's screenshots from the demo seed: a chat answer and the document it cites.

    .venv/bin/python scripts/readme_screenshots.py            # writes docs/screenshots/*.png

Method: a temporary data folder, migrated and seeded like ``scripts/run`` (``cairn seed-demo``), served on a
loopback port from a thread; Debian's Chromium (``/usr/bin/chromium``, or ``CAIRN_CHROMIUM``) through
Playwright signs in as the demo Member, asks the on-call agent a question from the demo's evaluation set,
waits for the cited answer, opens its first citation's document and photographs both, 1280 px wide (the
document from its top to just past the start of the cited passage). Nothing is drawn by hand: run it again
after a change to the pages and commit the new PNGs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import expect, sync_playwright  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

from portal import create_app  # noqa: E402
from portal.demo.seed import seed_demo  # noqa: E402
from portal.migrate import migrate  # noqa: E402

MEMBER = ("member@demo.cairn.test", "cairn-demo-member")  # the demo sign-in the README publishes
AGENT = "basis-on-call-assistant"
QUESTION = "Is it safe to remove an enqueue entry whose owner session has disappeared, and what should I confirm first?"
VIEWPORT = {"width": 1280, "height": 800}


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots", help="folder for the PNGs")
    return parser.parse_args()


def serve(data_dir: Path):
    app = create_app(
        {
            "CAIRN_DATA_DIR": str(data_dir),
            "DATABASE_URL": None,
            "SECRET_KEY": "screenshots",
            "CAIRN_REPAIR_INDEX_ON_START": False,
        }
    )
    with app.app_context():
        migrate(app.config["DATABASE"])
        seed_demo()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


def photograph(base: str, out: Path) -> list[Path]:
    chromium = os.environ.get("CAIRN_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(base_url=base, viewport=VIEWPORT).new_page()
        page.set_default_timeout(60_000)
        expect.set_options(timeout=60_000)
        page.goto("/login")
        page.fill("#email", MEMBER[0])
        page.fill("#password", MEMBER[1])
        page.click("button[type=submit]")
        expect(page).to_have_url(f"{base}/chat/")
        page.wait_for_load_state("load")
        page.check(f"input[name=agent][value={AGENT}]")
        page.fill("#question", QUESTION)
        page.press("#question", "Enter")
        expect(page.locator(".turn .answer a.cite").first).to_be_visible()
        page.locator("#question").blur()  # no focus ring in the picture
        chat = out / "chat-answer.png"
        page.screenshot(path=str(chat))
        page.locator(".turn .answer a.cite").first.click()
        page.click("#source-1 >> text=Open the document")
        cited = page.locator(".doc-body .cited")
        expect(cited.first).to_be_in_viewport()
        # From the top of the page (title, the cited-passage notice) down to a little past the passage's start.
        top = page.evaluate("window.scrollY") + cited.first.bounding_box()["y"]
        document = out / "cited-document.png"
        page.screenshot(path=str(document), full_page=True, clip={"x": 0, "y": 0, "width": 1280, "height": top + 320})
        browser.close()
    return [chat, document]


def main() -> None:
    arguments = parse_arguments()
    with tempfile.TemporaryDirectory(prefix="cairn-screenshots-") as folder:
        server, base = serve(Path(folder) / "data")
        try:
            for path in photograph(base, arguments.out):
                print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
        finally:
            server.shutdown()


if __name__ == "__main__":
    main()
