"""In Chromium, from the keyboard alone, at a phone's 390 px and a desk's 1280 px: the menu, buttons, where the
focus goes after a swap or a refused form, and the order the Tab key follows."""

from __future__ import annotations

import re

from browser_helpers import arrived_at, sign_in
from playwright.sync_api import expect

from helpers import PASSWORD

PHONE = {"width": 390, "height": 844}
DESK = {"width": 1280, "height": 900}


def test_escape_closes_the_phone_menu_and_gives_the_focus_back_to_menu(page, users):
    page.set_viewport_size(PHONE)
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    menu = page.locator("details.menu > summary")
    packs = page.get_by_role("navigation", name="Main").get_by_role("link", name="Packs")
    expect(packs).to_be_hidden()
    menu.focus()
    page.keyboard.press("Enter")
    expect(packs).to_be_visible()
    page.keyboard.press("Tab")
    expect(packs).to_be_focused()
    page.keyboard.press("Escape")
    expect(packs).to_be_hidden()
    expect(menu).to_be_focused()
    # Open again and Escape at once, the focus on "Menu" itself.
    page.keyboard.press("Enter")
    expect(packs).to_be_visible()
    page.keyboard.press("Escape")
    expect(packs).to_be_hidden()
    expect(menu).to_be_focused()

    # On a desk the items sit in the bar: Escape hides nothing.
    page.set_viewport_size(DESK)
    expect(packs).to_be_visible()
    packs.focus()
    page.keyboard.press("Escape")
    expect(packs).to_be_visible()
    expect(packs).to_be_focused()
    packs.press("Enter")
    arrived_at(page, re.compile(r"/packs/$"))
