"""Upload, view, edit and delete documents; their originals and figures."""

from __future__ import annotations

from flask import Blueprint, flash, redirect, request, url_for
from flask_login import current_user, login_required
from werkzeug.exceptions import RequestEntityTooLarge

from portal import access
from portal.documents import batch, editing, viewer
from portal.documents.downloads import send_figure, send_original
from portal.documents.readers import ReaderAccess, change_reader_access
from portal.errors import NotFound, Refused, VersionConflict
from portal.errors_web import too_large_problem
from portal.numbers import form_number, query_number
from portal.rendering import render
from portal.runs.services import citation_for_viewer

bp = Blueprint("documents", __name__, url_prefix="/packs/<slug>/documents")


@bp.route("", methods=["POST"])
@login_required
def upload(slug: str):
    pack = access.pack_for(current_user, slug, "documents.write")
    outcomes = batch.upload_batch(pack, current_user, reader_access_from_form())
    return _uploaded(pack, outcomes, batch.batch_status(outcomes))


@bp.errorhandler(RequestEntityTooLarge)
def too_large(_error):
    """An upload whose files together are over the limit for one request: each file named with its outcome."""
    if not batch.is_batch_too_large() or not current_user.is_authenticated:
        return too_large_problem()
    try:
        pack = access.pack_for(current_user, request.view_args["slug"], "documents.write")
    except NotFound:
        return too_large_problem()
    return _uploaded(pack, batch.refused_batch(), 413)


def _uploaded(pack, outcomes, status: int):
    # With htmx the outcomes are added to the list on the page, and the documents section (its
    # heading counts them) is swapped out of band; without, the whole pack page again.
    return render(
        "packs/show.html",
        "documents/_uploaded.html",
        status=status,
        pack=pack,
        outcomes=outcomes,
        documents=access.readable_documents(current_user, pack),
        query="",
        results=None,
    )


@bp.route("/<doc_id>")
@login_required
def show(slug: str, doc_id: str):
    pack = access.pack_for(current_user, slug)
    document = access.document_for(current_user, pack, doc_id)
    revision = document.current_revision()
    passages = viewer.passages_of(revision)
    passage_id = query_number("passage")
    cited = next((p for p in passages if p.id == passage_id), None)
    from_run = citation_for_viewer(current_user, query_number("run"), query_number("ref"), document, passages)
    if from_run is not None and cited is None:
        cited = from_run.current_passage
    view = viewer.chosen_view(request.args.get("view"))
    body = viewer.document_body(
        revision,
        passages,
        view,
        cited,
        lambda number: url_for("documents.figure", slug=slug, doc_id=doc_id, version=revision.version, number=number),
    )
    return render(
        "documents/show.html",
        pack=pack,
        document=document,
        revision=revision,
        body=body,
        view=view,
        cited=cited,
        passages=passages,
        history=viewer.revision_history(document),
        from_run=from_run,
    )


@bp.route("/<doc_id>/edit", methods=["GET", "POST"])
@login_required
def edit(slug: str, doc_id: str):
    pack = access.pack_for(current_user, slug, "documents.write")
    document = access.document_for(current_user, pack, doc_id)
    revision = document.current_revision()
    if request.method == "GET":
        return render(
            "documents/edit.html",
            pack=pack,
            document=document,
            text=revision.text,
            expected_version=document.current_version,
            error=None,
        )
    text = request.form.get("text", "")
    expected = form_number("expected_version")
    try:
        saved = editing.edit_text(document, text, expected, current_user, reader_access_from_form())
    except (Refused, VersionConflict) as error:
        status = 409 if isinstance(error, VersionConflict) else 422
        return render(
            "documents/edit.html",
            status=status,
            pack=pack,
            document=document,
            text=text,
            expected_version=expected,
            error=str(error) if isinstance(error, VersionConflict) else error.message,
        )
    flash(f"Saved as version {saved.version}.")
    return redirect(url_for("documents.show", slug=slug, doc_id=doc_id), code=303)


@bp.route("/<doc_id>/access", methods=["POST"])
@login_required
def reader_access(slug: str, doc_id: str):
    """Change who may read the document (a new revision, in the audit log)."""
    pack = access.pack_for(current_user, slug, "documents.write")
    document = access.document_for(current_user, pack, doc_id)
    try:
        changed = change_reader_access(
            document, reader_access_from_form(keep=False), form_number("expected_version"), current_user
        )
    except (Refused, VersionConflict) as error:
        flash(str(error) if isinstance(error, VersionConflict) else error.message, "error")
    else:
        flash(f"Who may read it changed; saved as version {changed.current_version}.")
    return redirect(url_for("documents.show", slug=slug, doc_id=doc_id), code=303)


def reader_access_from_form(keep: bool = True) -> ReaderAccess | None:
    """The form's "Who may read" fields; None when it keeps each document's own (``keep``: an empty choice).

    Raises ``Refused`` for a visibility or role that does not exist.
    """
    visibility = request.form.get("visibility", "")
    roles = tuple(request.form.getlist("reader_roles"))
    if not visibility and keep:
        if roles:  # never drop a choice silently
            raise Refused("bad_reader_roles", "Reader roles narrow a visibility: choose the visibility too.")
        return None
    return ReaderAccess(visibility, roles)


@bp.route("/<doc_id>/delete", methods=["POST"])
@login_required
def delete(slug: str, doc_id: str):
    pack = access.pack_for(current_user, slug, "documents.write")
    document = access.document_for(current_user, pack, doc_id)
    expected = form_number("expected_version")
    try:
        editing.delete_document(document, expected)
    except VersionConflict as conflict:
        flash(str(conflict), "error")
        return redirect(url_for("documents.show", slug=slug, doc_id=doc_id), code=303)
    flash(f"Deleted {document.title}.")
    return redirect(url_for("packs.show", slug=slug), code=303)


@bp.route("/<doc_id>/original")
@login_required
def original(slug: str, doc_id: str):
    pack = access.pack_for(current_user, slug)
    document = access.document_for(current_user, pack, doc_id)
    revision = document.current_revision()
    if not access.can(current_user, "documents.write") or revision is None or not revision.original_path:
        raise NotFound(doc_id)
    return send_original(revision)


@bp.route("/<doc_id>/v<int:version>/figures/<int:number>.webp")
@login_required
def figure(slug: str, doc_id: str, version: int, number: int):
    pack = access.pack_for(current_user, slug)
    document = access.document_for(current_user, pack, doc_id)
    found = viewer.figure_of(document, version, number)
    if found is None:
        raise NotFound(number)
    return send_figure(found.path)
