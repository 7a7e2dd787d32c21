"""The Library: the list of readable documents, their search, and each one read-only with its figures."""

from __future__ import annotations

from flask import Blueprint, request, url_for
from flask_login import current_user, login_required

from portal import access
from portal.documents import viewer
from portal.documents.downloads import send_figure, send_original
from portal.errors import NotFound
from portal.library import services
from portal.numbers import parse_number, query_number, query_page
from portal.rendering import render, shown_args, wants_fragment
from portal.request_text import query_search

bp = Blueprint("library", __name__, url_prefix="/library")


@bp.route("/")
@login_required
def index():
    if not access.can(current_user, "library.read"):
        raise NotFound("library")
    query = query_search()
    listing = services.library_page(current_user, query_page())
    # A pager link names its page: htmx then swaps the list alone, and the search results stay as shown.
    paging = "page" in request.args and wants_fragment()
    results = services.search_library(current_user, query) if query.strip() and not paging else None
    return render(
        "library/index.html",
        "library/_documents.html" if paging else "library/_search.html",
        listing=listing,
        shelves=services.shelves(listing.items),
        query=query,
        results=results,
        shown_page=parse_number(shown_args().get("page") or "1"),
    )


@bp.route("/<slug>/<doc_id>")
@login_required
def document(slug: str, doc_id: str):
    document = access.library_document_for(current_user, slug, doc_id)
    revision = document.current_revision()
    passages = viewer.passages_of(revision)
    passage_id = query_number("passage")
    highlighted = next((p for p in passages if p.id == passage_id), None)
    view = viewer.chosen_view(request.args.get("view"))
    body = viewer.document_body(
        revision,
        document.kind,
        passages,
        view,
        highlighted,
        lambda number: url_for("library.figure", slug=slug, doc_id=doc_id, version=revision.version, number=number),
    )
    return render(
        "library/document.html",
        document=document,
        revision=revision,
        body=body,
        view=view,
        cited=highlighted,
        can_download=access.may_download_from_library(current_user, document, revision),
    )


@bp.route("/<slug>/<doc_id>/v<int:version>/figures/<int:number>.webp")
@login_required
def figure(slug: str, doc_id: str, version: int, number: int):
    """A figure of the document's current revision; the same permission check as its page."""
    document = access.library_document_for(current_user, slug, doc_id)
    found = viewer.figure_of(document.current_revision(), number) if version == document.current_version else None
    if found is None:
        raise NotFound(number)
    return send_figure(found.path)


@bp.route("/<slug>/<doc_id>/original")
@login_required
def original(slug: str, doc_id: str):
    document = access.library_document_for(current_user, slug, doc_id)
    revision = document.current_revision()
    if not access.may_download_from_library(current_user, document, revision):
        raise NotFound(doc_id)
    return send_original(revision)
