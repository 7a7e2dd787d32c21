"""In Chromium, on the demo seed: every page each role can reach by following links, and the states htmx swaps
in (an answer, an upload's result, a rating, a triage change), at 1280 px and 390 px, checked with axe-core
(no serious or critical violations) and for exactly one ``<h1>``, and saved as screenshots in the browser-test
artefacts (ARTEFACTS).

The pages are found by crawling: from the role's home, every same-site link of a GET page is followed, each
page kind (Flask endpoint) once, so a page added later is checked without naming it here; the expected kinds
are asserted so that a link that disappears is noticed too.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from urllib.parse import urlsplit

import pytest
from browser_helpers import (
    ARTEFACTS,
    AXE_MISSING,
    axe_required,
    axe_source,
    describe,
    screenshot,
    serious_violations,
    sign_in,
)
from conftest import BROWSER_WAIT_MS
from playwright.sync_api import expect
from werkzeug.exceptions import HTTPException
from werkzeug.routing import RequestRedirect

from helpers import migrated_app, serve_in_thread
from portal.chat.services import start_conversation
from portal.demo.seed import seed_demo
from portal.feedback.services import rate_answer
from portal.models import Agent, Document, User

WIDTHS = {"desk": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
DEMO = {
    "admin": ("admin@demo.cairn.test", "cairn-demo-admin"),
    "builder": ("builder@demo.cairn.test", "cairn-demo-builder"),
    "auditor": ("auditor@demo.cairn.test", "cairn-demo-auditor"),
    "member": ("member@demo.cairn.test", "cairn-demo-member"),
}
AGENT = "basis-on-call-assistant"
QUESTION = "Is it safe to remove an enqueue entry whose owner session has disappeared, and what should I confirm first?"
# Downloads, images and exports are not pages; signing out would end the walk.
NOT_PAGES = re.compile(r"(^static$|^api\.|\.figure$|\.original$|^feedback\.export$|^home\.healthz$)")
# Page kinds a member visits more than once: each help topic (documents of each kind are added as extras).
MEMBER_VISITS = {"help.topic": 10}
# What each role must reach by links (besides extras and states); the crawl may find more.
EXPECTED = {
    "member": {
        "chat.index",
        "chat.conversation",
        "chat.sources",
        "chat.document",
        "account.index",
        "help.index",
        "help.topic",
    },
    "auditor": {"packs.index", "packs.show", "documents.show", "runs.index", "runs.show", "feedback.index"},
    "builder": {
        "packs.index",
        "packs.show",
        "documents.show",
        "agents.index",
        "agents.show",
        "agents.try_agent",
        "runs.index",
        "runs.show",
        "feedback.index",
        "feedback.show",
        "account.index",
    },
    "admin": {
        "packs.index",
        "packs.show",
        "documents.show",
        "documents.edit",
        "agents.index",
        "agents.new",
        "agents.show",
        "agents.try_agent",
        "runs.index",
        "runs.show",
        "feedback.index",
        "feedback.show",
        "account.index",
        "account.all_tokens",
        "help.index",
    },
}


@pytest.fixture(scope="module")
def axe():
    source = axe_source()
    if source is None:
        if axe_required():
            pytest.fail(AXE_MISSING, pytrace=False)
        pytest.skip(AXE_MISSING)
    return source


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory):
    """The demo seed served on a loopback port, with one Not-helpful answer for the reviewers to open."""
    with migrated_app(tmp_path_factory.mktemp("a11y") / "data", WTF_CSRF_ENABLED=True) as app:
        seed_demo()
        member = User.get(User.email == DEMO["member"][0])
        _, run = start_conversation(member, Agent.get(Agent.slug == AGENT), QUESTION)
        feedback = rate_answer(member, run, "not_helpful", ["incorrect", "incomplete"], "It should name SM12 first.")
        extras = {
            f"document-{kind}": f"/packs/{d.pack.slug}/documents/{d.doc_id}"
            for kind in ("pdf", "docx")
            for d in [Document.get((Document.kind == kind) & Document.deleted_at.is_null())]
        }
        extras["pack-search-results"] = "/packs/sap-operations-runbooks/search?q=SM12+lock+entries"
        for url in serve_in_thread(app):
            yield app, url, extras, f"/feedback/{feedback.id}"


class Walk:
    """One role at one width: visits pages, checks each with axe, saves its screenshot, collects failures."""

    def __init__(self, browser, site, axe, role, width):
        self.app, base, self.extras, self.feedback = site
        self.role, self.width = role, width
        self.context = browser.new_context(base_url=base, viewport=WIDTHS[width])
        self.context.add_init_script(axe)
        self.page = self.context.new_page()
        self.page.set_default_timeout(BROWSER_WAIT_MS)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.failures: dict[str, list[dict]] = {}
        self.checked: list[str] = []
        self.host = urlsplit(base).netloc
        self.visits = MEMBER_VISITS if role == "member" else {}

    def check(self, name: str) -> None:
        self.page.wait_for_load_state("load")
        shot = f"{self.width}/{self.role}-{len(self.checked):02d}-{name}"
        self.checked.append(name)
        violations = serious_violations(self.page)
        titles = self.page.locator("h1").all_inner_texts()
        if len(titles) != 1:  # axe asks for at least one; the outline needs exactly one, the page's title
            violations.append({"impact": "serious", "id": "one-h1", "help": "exactly one h1", "nodes": titles})
        if violations:
            self.failures[f"{name} ({self.page.url})"] = violations
        screenshot(self.page, shot)

    def endpoint(self, path: str) -> str | None:
        try:
            endpoint, _ = self.app.url_map.bind("localhost").match(path, method="GET")
        except (RequestRedirect, HTTPException):
            return None
        return endpoint

    def crawl(self, start: str, extras=()) -> set[str]:
        """Visit every page kind reachable by links from ``start`` (breadth first), then ``extras``."""
        visits: Counter[str] = Counter()
        queue, seen = deque([start]), {start}
        while queue:
            path = queue.popleft()
            endpoint = self.endpoint(urlsplit(path).path)
            if endpoint is None or NOT_PAGES.search(endpoint) or visits[endpoint] >= self.visits.get(endpoint, 1):
                continue
            visits[endpoint] += 1
            response = self.page.goto(path)
            assert response.status < 500, (path, response.status)
            self.check(endpoint.replace(".", "-"))
            for href in self.page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)"):
                url = urlsplit(href)
                link = url.path + (f"?{url.query}" if url.query else "")
                if url.netloc == self.host and link not in seen:
                    seen.add(link)
                    queue.append(link)
        for name, path in extras:
            self.page.goto(path)
            self.check(name)
        return set(visits)

    def finish(self) -> None:
        self.context.close()
        assert not self.errors, f"browser errors: {self.errors}"


def _walk(browser, demo_site, axe, role, steps):
    failures = {}
    for width in WIDTHS:
        walk = Walk(browser, demo_site, axe, role, width)
        try:
            steps(walk)
        finally:
            walk.finish()
        failures.update({f"{width}: {page}": v for page, v in walk.failures.items()})
    assert not failures, f"axe found serious or critical violations (screenshots in {ARTEFACTS}):\n" + "\n".join(
        f"{page}\n{describe(v)}" for page, v in failures.items()
    )


def test_signed_out_pages_and_errors(browser, demo_site, axe):
    def steps(walk):
        page = walk.page
        page.goto("/login")
        walk.check("sign-in")
        page.fill("#email", DEMO["member"][0])
        page.fill("#password", "not the password")
        page.click("button[type=submit]")
        expect(page.locator(".error, .flash-error").first).to_be_visible()
        walk.check("sign-in-refused")
        sign_in(page, *DEMO["member"])
        assert page.goto("/packs/no-such-pack").status == 404
        walk.check("error-404")
        assert page.goto("/feedback/").status in (403, 404)  # staff's page, refused to a member
        walk.check("error-refused")

    _walk(browser, demo_site, axe, "signed-out", steps)


def test_member_pages_and_chat_states(browser, demo_site, axe):
    def steps(walk):
        page = walk.page
        sign_in(page, *DEMO["member"])
        # Asking: the answer is swapped in and announced.
        page.goto("/chat/")
        page.check(f"input[name=agent][value={AGENT}]")
        page.fill("#question", "How do I replace an expired own certificate in STRUST?")
        page.press("#question", "Enter")
        expect(page.locator(".turn .answer a.cite").first).to_be_visible()
        expect(page.locator("#chat-announce")).to_contain_text("answered")
        walk.check("chat-answered")
        # Not helpful: the reasons form, its refusal, then the saved rating, each swapped in place.
        rating = page.locator(".turn").first.locator(".rating")
        rating.locator("text=Not helpful").click()
        form = rating.locator("form.not-helpful-form")
        expect(form).to_be_visible()
        expect(form.locator("input[name=reasons]").first).to_be_focused()  # the button it replaced had the focus
        walk.check("chat-not-helpful-form")
        form.locator("text=Send feedback").click()
        expect(form.locator(".error")).to_be_visible()
        walk.check("chat-not-helpful-refused")
        form.locator("label", has_text="Incomplete").click()
        form.locator("text=Send feedback").click()
        expect(rating.locator(".rated")).to_be_visible()
        expect(page.locator("#announce")).to_contain_text("You rated this answer Not helpful")
        walk.check("chat-rated")
        extras = [("chat-all-conversations", "/chat/conversations"), ("chat-new-with-agent", f"/chat/agents/{AGENT}")]
        visited = walk.crawl("/", extras)
        assert EXPECTED["member"] <= visited, EXPECTED["member"] - visited

    _walk(browser, demo_site, axe, "member", steps)


def _upload_and_try(walk, pack: str, agent: str) -> None:
    page = walk.page
    page.goto(f"/packs/{pack}")
    page.set_input_files(
        "input[type=file]",
        files=[{"name": f"a11y-{walk.width}.md", "mimeType": "text/markdown", "buffer": b"# A11y note\n\nStep one.\n"}],
    )
    page.locator("form:has(input[type=file]) button[type=submit]").click()
    outcomes = page.locator("#upload-outcomes")
    expect(outcomes).to_contain_text(f"a11y-{walk.width}")
    expect(outcomes).to_have_attribute("aria-live", "polite")  # each result is read out as it arrives
    walk.check("pack-upload-result")
    page.goto(f"/agents/{agent}/try")
    page.fill("textarea[name=question]", QUESTION)
    page.locator("form:has(textarea[name=question]) button[type=submit]").click()
    expect(page.locator(".run, .try-result").first).to_be_visible()
    walk.check("agent-try-result")


def _triage(walk) -> None:
    page = walk.page
    page.goto(walk.feedback)
    status = page.locator("select[name=status]")
    # A different status each time the walks come here, so each save is a change.
    status.select_option(
        {"admin": ["in_review", "resolved"], "builder": ["wont_fix", "new"]}[walk.role][walk.width == "phone"]
    )
    page.locator("form:has(select[name=status]) button[type=submit]").click()
    expect(page.locator("#triage")).to_contain_text("Triage saved.")
    expect(page.locator("#announce")).to_have_text("Triage saved.")
    expect(page.locator("#triage [role=status]")).to_be_focused()  # not lost with the replaced button
    walk.check("feedback-triaged")


@pytest.mark.parametrize("role", ["admin", "builder"])
def test_staff_pages_and_states(browser, demo_site, axe, role):
    def steps(walk):
        sign_in(walk.page, *DEMO[role])
        if role == "admin":
            _upload_and_try(walk, "sap-operations-runbooks", AGENT)
        else:
            walk.page.goto(f"/agents/{AGENT}/try")
            walk.check("agent-try")
        _triage(walk)
        visited = walk.crawl("/", list(walk.extras.items()))
        assert EXPECTED[role] <= visited, EXPECTED[role] - visited

    _walk(browser, demo_site, axe, role, steps)


def test_auditor_pages(browser, demo_site, axe):
    def steps(walk):
        sign_in(walk.page, *DEMO["auditor"])
        visited = walk.crawl("/", list(walk.extras.items()))
        assert EXPECTED["auditor"] <= visited, EXPECTED["auditor"] - visited

    _walk(browser, demo_site, axe, "auditor", steps)


def test_the_check_finds_what_it_should(browser, demo_site, axe):
    """axe really runs on the served pages: a control without a label and grey-on-white text are reported."""
    walk = Walk(browser, demo_site, axe, "check", "desk")
    try:
        walk.page.goto("/login")
        walk.page.evaluate(
            """() => {
                const main = document.querySelector('main');
                main.insertAdjacentHTML('beforeend', '<input type="text" name="unlabelled"><p>faint words</p>');
                main.lastElementChild.style.color = '#bbb';  // set through the CSSOM: the CSP refuses style=""
                main.lastElementChild.style.background = '#fff';
            }"""
        )
        assert {v["id"] for v in serious_violations(walk.page)} >= {"label", "color-contrast"}
    finally:
        walk.finish()


def test_focus_is_visible_on_links_fields_and_buttons(browser, demo_site, axe):
    walk = Walk(browser, demo_site, axe, "focus", "desk")
    try:
        page = walk.page
        page.goto("/login")
        seen = set()
        for _ in range(8):  # round the page: the skip link, the fields, the button, back to the body
            page.keyboard.press("Tab")
            ring = page.evaluate(
                """() => { const e = document.activeElement, s = getComputedStyle(e);
                           return [e.tagName, s.outlineStyle, parseFloat(s.outlineWidth), s.boxShadow]; }"""
            )
            tag, style, width, shadow = ring
            if tag == "BODY":
                continue
            assert style == "solid" and width >= 2 and shadow != "none", ring
            seen.add(tag)
        assert {"A", "INPUT", "BUTTON"} <= seen, seen
    finally:
        walk.finish()
