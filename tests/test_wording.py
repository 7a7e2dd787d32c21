"""How pages write counts and moments: one filter each (portal/wording.py), never a format written in a template."""

from __future__ import annotations

import datetime as dt
import re

from flask import render_template_string

from helpers import template_lines_matching
from portal.wording import counted, when, when_to_the_second

# A date with its time written out in a template instead of through ``|when`` / ``|when_to_the_second``.
DATE_FORMAT_IN_TEMPLATE = re.compile(r"strftime\(['\"]%Y")


def test_a_moment_is_written_to_the_minute_or_to_the_second():
    moment = dt.datetime(2026, 12, 1, 9, 30, 5, 123456)
    assert when(moment) == "2026-12-01 09:30"
    assert when_to_the_second(moment) == "2026-12-01 09:30:05"
    assert counted(1, "file") == "1 file" and counted(1200, "file") == "1,200 files"


def test_templates_write_a_moment_through_the_filters(app):
    with app.test_request_context():
        moment = dt.datetime(2026, 12, 1, 9, 30, 5)
        assert render_template_string("{{ m|when }} · {{ m|when_to_the_second }}", m=moment) == (
            "2026-12-01 09:30 · 2026-12-01 09:30:05"
        )
    assert DATE_FORMAT_IN_TEMPLATE.search("{{ run.created_at.strftime('%Y-%m-%d %H:%M') }}")
    found = template_lines_matching(DATE_FORMAT_IN_TEMPLATE)
    assert not found, "write these with |when or |when_to_the_second (portal/wording.py):\n" + "\n".join(found)
