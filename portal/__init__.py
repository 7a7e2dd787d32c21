"""Cairn: a knowledge-pack portal. ``create_app`` builds the Flask application."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask

from portal.config import load_settings

log = logging.getLogger(__name__)


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Build the app; ``config`` overrides settings (tests pass a temporary data folder)."""
    app = Flask(__name__, template_folder="../templates", static_folder="../static")
    settings = load_settings(config)
    app.config.update(settings)
    app.config.update(
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings["CAIRN_SECURE_COOKIES"],
        REMEMBER_COOKIE_HTTPONLY=True,
        REMEMBER_COOKIE_SECURE=settings["CAIRN_SECURE_COOKIES"],
        # The request body may carry one file at the limit plus the form around it (the upload view
        # allows a batch of files); one field (an edited text) may be as long as the body, so only
        # these two limits refuse a form.
        MAX_CONTENT_LENGTH=_max_request_bytes(),
        MAX_FORM_MEMORY_SIZE=_max_request_bytes(),
        MAX_FORM_PARTS=_max_form_parts(),
        WTF_CSRF_TIME_LIMIT=None,
    )

    from werkzeug.middleware.proxy_fix import ProxyFix

    from portal import api, auth, db, errors_web, web
    from portal.documents import batch

    if settings["CAIRN_PROXIES"]:  # the real client address, for the sign-in limits and the logs
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings["CAIRN_PROXIES"], x_proto=settings["CAIRN_PROXIES"])
    from portal.search import service as search_service

    db.init_app(app)
    search_service.init_app(app)
    batch.init_app(app)  # before auth: the upload's body limit must be set before the CSRF check reads the form
    auth.init_app(app)
    errors_web.init_app(app)
    web.init_app(app)
    api.init_app(app)  # after web: its <int:…> routes need the bounded converter that web installs
    if app.config["CAIRN_REPAIR_INDEX_ON_START"]:
        repair_indexes_at_start(app)
    return app


def _max_request_bytes() -> int:
    from portal.ingest.limits import MAX_FILE_BYTES, REQUEST_OVERHEAD_BYTES

    return MAX_FILE_BYTES + REQUEST_OVERHEAD_BYTES


def _max_form_parts() -> int:
    from portal.ingest.limits import MAX_FORM_PARTS

    return MAX_FORM_PARTS


def repair_indexes_at_start(app: Flask, *, check_every_index: bool = True) -> None:
    """Catch up with what a killed process committed, before serving or running a command.

    Indexes every change still listed as pending index work and sweeps files that no
    row names. ``check_every_index`` also rebuilds an index that is missing, unreadable
    or at a generation its pending work cannot explain; that starts the JVM, so
    commands that never search skip it (the pending work alone needs it only when there is some).
    """
    from portal.documents.revisions import sweep_orphan_files
    from portal.migrate import pending
    from portal.search.service import index_pending_work, repair_indexes

    with app.app_context():
        if pending(app.config["DATABASE"]):
            log.warning("the database is not migrated yet: run `cairn init`; index repair skipped")
            return
        repaired = repair_indexes() if check_every_index else index_pending_work()
        swept = sweep_orphan_files()
    if repaired:
        log.warning("search indexes caught up with the database: %s", ", ".join(repaired))
    if swept:
        log.warning("removed %d file(s) that no document names (left by an interrupted upload or deletion)", len(swept))
    elif swept is None:
        log.warning("another process is storing files: the sweep of leftover files waits for the next start")
