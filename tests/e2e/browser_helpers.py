"""Steps the browser tests share."""

import re

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
