"""Blueprints, template helpers and the home page."""

from __future__ import annotations

from flask import Blueprint, redirect, request, url_for
from flask_login import current_user
from werkzeug.http import parse_range_header

from portal import access, numbers, request_text, wording
from portal.answers.asked import VALUE_KINDS
from portal.answers.grounding import ANSWER_BASES
from portal.ingest import limits
from portal.rendering import htmx, render

HTMX_VERSION = "2.0.8"

home = Blueprint("home", __name__)


@home.route("/")
def index():
    if not current_user.is_authenticated:
        # Someone arriving signs in first; that is no refused page, so no "Please sign in to open that page."
        return redirect(url_for("auth.login"))
    # Each person starts where their work is: an administrator at the packs, a builder at the agents, a
    # reviewer at the answers rated Not helpful, a member in the support chat.
    for action, page in _WHERE_WORK_IS:
        if access.can(current_user, action):
            return redirect(url_for(page))
    return render("home/member.html")


_WHERE_WORK_IS = (
    ("documents.write", "packs.index"),
    ("agents.configure", "agents.index"),
    ("feedback.review", "feedback.index"),
    ("packs.read", "packs.index"),
    ("chat.use", "chat.index"),
)


@home.route("/healthz")
def healthz():
    return {"status": "ok"}


def ignore_unusable_range() -> None:
    """Serve the whole file when the Range header is not one range of bytes.

    RFC 9110 has a server ignore a range unit it does not know ("chars=0-1") and lets it ignore an invalid
    ("bytes=5-2") or a multiple one; Werkzeug's ``send_file`` answered each with 416 Range Not Satisfiable
    (attack probe). One range past the end of the file is still a 416: it is a range of bytes, not satisfiable.
    """
    header = request.environ.get("HTTP_RANGE")
    if header is not None:
        parsed = parse_range_header(header)
        if parsed is None or parsed.units != "bytes" or len(parsed.ranges) != 1:
            del request.environ["HTTP_RANGE"]


def init_app(app) -> None:
    from portal.account.views import bp as account_bp
    from portal.agents.services import MAX_INSTRUCTIONS_CHARS, MAX_NAME_CHARS
    from portal.agents.views import bp as agents_bp
    from portal.chat.views import bp as chat_bp
    from portal.describing import service as describing
    from portal.describing.views import bp as describing_bp
    from portal.documents.excerpts import passage_excerpt
    from portal.documents.readers import VISIBILITY_LABELS
    from portal.documents.views import bp as documents_bp
    from portal.feedback.views import bp as feedback_bp
    from portal.help.views import bp as help_bp
    from portal.library.views import bp as library_bp
    from portal.models import MAX_ID_CHARS, MAX_TITLE_CHARS, ROLES
    from portal.models.tokens import MAX_NAME_CHARS as MAX_TOKEN_NAME_CHARS
    from portal.packs.services import MAX_DESCRIPTION_CHARS as MAX_PACK_DESCRIPTION_CHARS
    from portal.packs.services import SLUG_PATTERN
    from portal.packs.views import bp as packs_bp
    from portal.runs.views import bp as runs_bp
    from portal.search.results import PER_DOCUMENT_CAP
    from portal.search.vocabulary import MAX_VOCABULARY_CHARS

    numbers.init_app(app)
    wording.init_app(app)
    request_text.init_app(app)  # after the CSRF check (auth.init_app), which reads the form first
    htmx.init_app(app)
    app.before_request(ignore_unusable_range)
    app.register_blueprint(home)
    app.register_blueprint(packs_bp)
    app.register_blueprint(documents_bp)
    app.register_blueprint(describing_bp)
    app.register_blueprint(agents_bp)
    app.register_blueprint(runs_bp)
    app.register_blueprint(chat_bp)
    app.register_blueprint(feedback_bp)
    app.register_blueprint(account_bp)
    app.register_blueprint(help_bp)
    app.register_blueprint(library_bp)

    app.add_template_global(passage_excerpt)  # templates/_excerpt.html: every passage shown outside the viewer

    @app.context_processor
    def template_helpers():
        return {
            "access": access,
            "answer_bases": ANSWER_BASES,
            "value_kinds": VALUE_KINDS,  # runs/_answer.html: a "no evidence" note's value named by its kind
            "limits": limits.limits(),  # every limit a page writes, with its label ("4 MB")
            "upload_not_sent": limits.not_sent_too_large_message(),  # cairn.js shows it for a file it keeps back
            "accepted_extensions": limits.ACCEPTED_EXTENSIONS,
            "reader_visibilities": VISIBILITY_LABELS,  # the "Who may read" fields of documents/_reader_access_fields
            "reader_role_choices": ROLES,
            # A form field's length and pattern, as the service that refuses a longer one reads them.
            "field_chars": {
                "id": MAX_ID_CHARS,
                "title": MAX_TITLE_CHARS,
                "pack_description": MAX_PACK_DESCRIPTION_CHARS,
                "vocabulary": MAX_VOCABULARY_CHARS,
                "agent_name": MAX_NAME_CHARS,
                "instructions": MAX_INSTRUCTIONS_CHARS,
                "token_name": MAX_TOKEN_NAME_CHARS,
            },
            "slug_pattern": SLUG_PATTERN,
            "per_document_cap": PER_DOCUMENT_CAP,  # _search_summary.html: why fewer passages show than match
            # The document page's "Describe images" panel: whether a vision model is set (asked only where shown).
            "vision_configured": describing.model_configured,
            "no_vision_model": describing.NO_MODEL,
            "htmx_src": url_for("static", filename=f"vendor/htmx-{HTMX_VERSION}.min.js"),
        }

    @app.after_request
    def security_headers(response):
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
            "frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
        )
        return response
