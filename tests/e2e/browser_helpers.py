"""Steps the browser tests share."""

import os
import re
from pathlib import Path

from playwright.sync_api import expect


def sign_in(page, email: str, password: str) -> None:
    """Sign in through the form and wait until the browser has left the login page (a ``goto`` right
    after the click would otherwise cancel the sign-in on a busy machine)."""
    page.goto("/login")
    page.fill("#email", email)
    page.fill("#password", password)
    page.click("button[type=submit]")
    expect(page).not_to_have_url(re.compile(r"/login(\?|$)"))
    page.wait_for_load_state("load")


def arrived_at(page, url) -> None:
    """The address shows ``url`` and the page has loaded, so htmx and cairn.js are wired up: on a busy
    machine a click before that follows the plain link instead of the htmx request."""
    expect(page).to_have_url(url)
    page.wait_for_load_state("load")


def htmx_settled(page) -> None:
    """No htmx request, swap or settle is under way: new content is wired up. A key pressed on a control an
    htmx swap has just brought in, before htmx has processed it, does what the control does without
    JavaScript (a form's plain submit) instead of its htmx request."""
    expect(page.locator(".htmx-request, .htmx-swapping, .htmx-settling")).to_have_count(0)


# --- Accessibility (axe-core) and screenshots ---------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
# axe-core comes from the npm registry, pinned in package-lock.json and installed by scripts/setup
# (`npm ci`); the tests read the file from disk and inject it, nothing is fetched while they run.
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# Screenshots of the pages the browser tests walk: look at them after a run (CI keeps the folder).
ARTEFACTS = Path(os.environ.get("CAIRN_TEST_ARTEFACTS") or ROOT / "test-artefacts")
# Impacts that fail a test; "moderate" and "minor" findings (e.g. best-practice landmarks) do not.
FAILING_IMPACTS = ("serious", "critical")

# Runs axe on the whole document and returns the failing violations, each with up to five nodes.
AXE_RUN = """async (impacts) => {
  const results = await axe.run(document, {resultTypes: ['violations']});
  return results.violations.filter(v => impacts.includes(v.impact)).map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ' :: ' + n.html.slice(0, 200)
                                       + ' :: ' + (n.failureSummary || '').replace(/\\s+/g, ' ')),
  }));
}"""


# Appended to axe in the init script of every browser test's page (conftest.py): axe runs after each page load
# and each htmx swap, one run at a time, and reports failing violations to the test through a binding.
AXE_WATCH = """
(() => {
  // Only the portal's own pages: an image opened on its own (a figure at full size) is shown by the
  // browser's image viewer, whose page is Chromium's, not ours.
  if (window !== window.top || !window.axe || !document.contentType.startsWith('text/html')) { return; }
  let chain = Promise.resolve();
  const report = (data) => { try { window.cairnAxeReport(data); } catch (e) { /* the page is going away */ } };
  const check = (when) => {
    chain = chain.then(() => axe.run(document, {resultTypes: ['violations']})).then((results) => {
      const failing = results.violations.filter(v => v.impact === 'serious' || v.impact === 'critical');
      if (failing.length) {
        report({url: location.href, when, violations: failing.map(v => ({
          id: v.id, impact: v.impact, help: v.help,
          nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ' :: ' + n.html.slice(0, 200)),
        }))});
      }
    }).catch(() => { /* a run cut short by leaving the page */ });
  };
  window.cairnAxeIdle = () => chain;
  window.addEventListener('load', () => check('load'));
  document.addEventListener('htmx:afterSettle', () => check('htmx swap'));
})();
"""


def axe_required() -> bool:
    """In CI a missing axe fails the accessibility checks; on a developer's machine they skip and say why."""
    return bool(os.environ.get("CI") or os.environ.get("CAIRN_REQUIRE_AXE"))


def axe_source() -> str | None:
    return AXE_JS.read_text(encoding="utf-8") if AXE_JS.is_file() else None


AXE_MISSING = f"axe-core not found at {AXE_JS}: run scripts/setup with npm on PATH (it runs `npm ci`)"


def serious_violations(page) -> list[dict]:
    """axe's serious and critical violations on the page as it is now (axe injected by an init script)."""
    return page.evaluate(AXE_RUN, list(FAILING_IMPACTS))


def describe(violations: list[dict]) -> str:
    return "\n".join(
        f"  {v['impact']} {v['id']}: {v['help']}\n" + "\n".join(f"    - {node}" for node in v["nodes"])
        for v in violations
    )


def screenshot(page, name: str) -> Path:
    """Save the whole page as ARTEFACTS/<name>.png."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTEFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
