"""In Chromium: the outline of a long document jumps to a section, and a section opens on its own."""

from __future__ import annotations

import re

from browser_helpers import arrived_at, sign_in
from playwright.sync_api import expect

from helpers import PASSWORD
from portal.documents import services as documents

FILLER = "\n\n".join(f"Paragraph {n} of the setup notes, long enough to push the next heading down." for n in range(80))
GUIDE = f"""# Install guide

## Setup

{FILLER}

## Network

Open port 8443 on the firewall.

## Storage

Mount the data volume.
"""


def test_the_outline_jumps_to_a_section_and_opens_it_alone(page, pack, users):
    documents.upload_file(pack, "install-guide.md", GUIDE.encode(), None)
    sign_in(page, users["Auditor"].email, PASSWORD)
    page.goto("/packs/ops/documents/install-guide")
    network = page.locator(".doc-body h3", has_text="Network")  # "##" below the page title's h1
    expect(network).not_to_be_in_viewport()
    page.locator(".outline a.jump", has_text="Network").click()
    expect(page).to_have_url(re.compile(r"#section-3$"))
    expect(network).to_be_in_viewport()

    page.locator(".outline li", has_text="Storage").locator("a.read-alone").click()
    arrived_at(page, re.compile(r"section=Install\+guide\+%3E\+Storage"))
    expect(page.locator(".section-shown")).to_contain_text("Install guide > Storage")
    expect(page.locator(".doc-body")).to_have_text(re.compile(r"^\s*Storage\s+Mount the data volume.\s*$"))
    page.get_by_role("link", name="Whole document").click()
    expect(page).to_have_url(re.compile(r"/install-guide#section-4$"))
    expect(page.locator(".doc-body h3", has_text="Storage")).to_be_in_viewport()
