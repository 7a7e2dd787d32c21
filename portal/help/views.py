"""The help pages: /help/ lists the topics, /help/<topic> shows one.

Every signed-in person may read them, whatever their roles: a Member meets "no evidence" and the
rating controls, staff the agent and upload forms. Someone not signed in is sent to sign in, as
everywhere else in the portal: the pages describe this deployment (its classification policy and
limits), and nobody without an account meets the questions they answer.
"""

from __future__ import annotations

from flask import Blueprint
from flask_login import login_required

from portal.errors import NotFound
from portal.help.topics import TOPICS, facts_for
from portal.rendering import render

bp = Blueprint("help", __name__, url_prefix="/help")


@bp.route("/")
@login_required
def index():
    return render("help/index.html", topics=TOPICS)


@bp.route("/<topic>")
@login_required
def topic(topic: str):
    if topic not in TOPICS:
        raise NotFound(topic)
    return render(f"help/{topic}.html", topics=TOPICS, topic=topic, **facts_for(topic))
