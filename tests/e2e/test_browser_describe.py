"""In Chromium: a PlatformAdmin describes a Word file's figures and watches the progress per figure."""

from __future__ import annotations

import re

from browser_helpers import arrived_at, sign_in
from fake_openai import FakeOpenAI
from playwright.sync_api import expect
from test_uploads import word_with_pictures

from helpers import PASSWORD
from portal.documents.services import upload_file


def test_admin_describes_the_figures_and_sees_them_in_the_text(app, page, pack, users):
    upload_file(pack, "interface-monitoring.docx", word_with_pictures(), users["PlatformAdmin"])
    with FakeOpenAI() as vision:
        app.config.update(CAIRN_VISION_BASE_URL=vision.base_url, CAIRN_VISION_API_KEY="k")
        vision.reply("A red lamp lit above the label <b>IF-17</b>.")
        sign_in(page, users["PlatformAdmin"].email, PASSWORD)
        page.goto("/packs/ops/documents/interface-monitoring")
        arrived_at(page, re.compile(r"/packs/ops/documents/interface-monitoring$"))
        page.click("text=Describe images")
        job = page.locator("#describe-job")
        expect(job.locator(".describe-notes li")).to_have_text(
            [
                "Figure 1: described, 44 characters.",
                "Figure 2: described, 44 characters.",
            ]
        )
        expect(job).to_contain_text("Version 2 holds 2 of 2 figure descriptions.")
        expect(job.locator("progress")).to_have_attribute("value", "2")
        page.click("text=Show the new version")
        body = page.locator(".doc-body")
        expect(body).to_contain_text("Figure 1 description: A red lamp lit above the label <b>IF-17</b>.")
        expect(body.locator("b")).to_have_count(0)  # the model's markup stays text
        expect(page.locator(".doc-body .figure img")).to_have_count(2)
        app.config["CAIRN_VISION_BASE_URL"] = None
