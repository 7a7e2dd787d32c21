"""Upload, view, edit and delete documents; their originals and figures."""

from __future__ import annotations

from flask import Blueprint, flash, redirect, request, url_for
from flask_login import current_user, login_required
from werkzeug.exceptions import RequestEntityTooLarge

from portal import access
from portal.documents import batch, editing, sections, viewer
from portal.documents.downloads import send_figure, send_original
from portal.documents.readers import ReaderAccess, change_reader_access
from portal.errors import DeleteConflict, NotFound, Refused, TitleConflict, VersionConflict
from portal.errors_web import too_large_problem
from portal.models import REVISIONS_KEPT
from portal.numbers import form_number, query_number, query_version
from portal.packs.views import pack_page
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
    return pack_page(pack, fragment="documents/_uploaded.html", outcomes=outcomes, status=status)


@bp.route("/<doc_id>")
@login_required
def show(slug: str, doc_id: str):
    """The current text, or a kept older revision (``?version=N``) read-only, with its diff to the current one."""
    pack = access.pack_for(current_user, slug)
    document = access.document_for(current_user, pack, doc_id)
    return _document_page(pack, document, query_version())


def _document_page(pack, document, version: int | None, status: int = 200, new_version_error: str | None = None):
    revision = access.revision_for(current_user, document, version)
    older = revision.version != document.current_version
    passages = viewer.passages_of(revision)
    passage_id = query_number("passage")
    cited = next((p for p in passages if p.id == passage_id), None)
    from_run = None
    if not older:  # a run's citation is shown against the current text
        from_run = citation_for_viewer(current_user, query_number("run"), query_number("ref"), document, passages)
    if from_run is not None and cited is None:
        cited = from_run.current_passage
    view = viewer.chosen_view(request.args.get("view"), older)
    outline = viewer.outline_of(revision, document.kind)

    def figure_url(number):
        return url_for(
            "documents.figure", slug=pack.slug, doc_id=document.doc_id, version=revision.version, number=number
        )

    lookup = None
    if view == viewer.DIFF_VIEW:
        body = viewer.text_diff(revision, document.current_revision())
    elif "section" in request.args:
        lookup = sections.find_section(revision.text, document.kind, request.args["section"], outline)
        status = SECTION_STATUS[lookup.problem] if status == 200 else status
        body = viewer.section_body(revision, lookup.found, view, figure_url) if lookup.found else None
    else:
        body = viewer.document_body(revision, document.kind, passages, view, cited, figure_url, outline)
    history = access.readable_revisions(current_user, document)
    return render(
        "documents/show.html",
        status=status,
        pack=pack,
        document=document,
        revision=revision,
        older=older,
        shown_version=revision.version if older else None,
        body=body,
        view=view,
        cited=cited,
        passages=passages,
        history=history,
        revisions_kept=REVISIONS_KEPT,
        editable_kinds=editing.EDITABLE_KINDS,
        from_run=from_run,
        run_revision=_run_revision(from_run, history),
        new_version_error=new_version_error,
        outline=outline,
        lookup=lookup,
        max_section_chars=sections.MAX_SECTION_CHARS,
    )


# A section name that names none is a missing thing; one that names several asks to choose.
SECTION_STATUS = {None: 200, "unknown": 404, "ambiguous": 409}


def _run_revision(from_run, history) -> int | None:
    """The version a run was given, when it is kept and readable and not the current one (the viewer links it)."""
    if from_run is None or not from_run.changed:
        return None
    version = from_run.reference.version
    return version if any(r.version == version for r in history) else None


@bp.route("/<doc_id>/edit", methods=["GET", "POST"])
@login_required
def edit(slug: str, doc_id: str):
    """The title of any document and the text of a Markdown or text one."""
    pack = access.pack_for(current_user, slug, "documents.write")
    document = access.document_for(current_user, pack, doc_id)
    text_editable = document.kind in editing.EDITABLE_KINDS
    if request.method == "GET":
        revision = document.current_revision()
        return _edit_page(pack, document, document.title, revision.text if text_editable else None)
    title = request.form.get("title", document.title)  # a form without the field keeps the title
    text = request.form.get("text", "") if text_editable else None
    expected = form_number("expected_version")
    try:
        saved = editing.edit_document(
            document,
            expected,
            current_user,
            title,
            text,
            reader_access_from_form(),
            title_based_on=request.form.get("title_based_on"),
        )
    except Refused as refusal:
        return _edit_page(pack, document, title, text, expected, refusal.message, 422)
    except VersionConflict as conflict:
        return _conflict_page(pack, document, title, text, conflict)
    flash(f"Saved as version {saved.version}." if saved else "Saved the new title.")
    return redirect(url_for("documents.show", slug=slug, doc_id=doc_id), code=303)


def _conflict_page(pack, document, title, text, conflict: VersionConflict):
    """Someone saved a version meanwhile: what this person typed is kept and now based on that version,
    with that version's text beside it to compare, so saving again replaces it knowingly (rather than
    failing again on the same stale version, or losing the typing to a reload)."""
    current = access.document_for(current_user, pack, document.doc_id)  # a 404 if it was deleted meanwhile
    retitled = isinstance(conflict, TitleConflict)  # the text is as it was: only the title changed meanwhile
    theirs = current.current_revision().text if text is not None and not retitled else None
    message = (
        f"{conflict.what_happened}. Your title is kept below: save again to replace it, or cancel."
        if retitled
        else f"{conflict.what_happened}. Your text is kept below, now based on version {current.current_version}: "
        "compare it with that version's text, then save again to replace it, or cancel."
    )
    return _edit_page(pack, current, title, text, current.current_version, message, 409, theirs)


def _edit_page(pack, document, title, text, expected=None, error=None, status=200, theirs=None):
    return render(
        "documents/edit.html",
        status=status,
        pack=pack,
        document=document,
        title=title,
        text=text,
        expected_version=document.current_version if expected is None else expected,
        error=error,
        theirs=theirs,
    )


@bp.route("/<doc_id>/new-version", methods=["POST"])
@login_required
def replace(slug: str, doc_id: str):
    """Upload a file as the document's next version, if it is still at the version the page showed."""
    pack = access.pack_for(current_user, slug, "documents.write")
    document = access.document_for(current_user, pack, doc_id)
    expected = form_number("expected_version")
    kind, title = document.kind, document.title
    try:
        outcome = batch.upload_new_version(pack, document, request.files.get("file"), expected, current_user)
    except VersionConflict as conflict:
        return _document_page(pack, document, None, status=409, new_version_error=str(conflict))
    if outcome.refused is not None:
        return _document_page(pack, document, None, status=422, new_version_error=outcome.refused.message)
    if outcome.unchanged:
        flash(f"Unchanged: the file is identical to version {outcome.revision.version}, so no new revision was made.")
    else:
        replaced = f" {outcome.replaced_edit.replaced_summary()}" if outcome.replaced_edit else ""
        # a version of another kind or title is allowed, and said: the page changes more than its text
        changes = ([f"it is now {outcome.document.kind}, not {kind}"] if outcome.document.kind != kind else []) + (
            [f"its title is now “{outcome.document.title}”"] if outcome.document.title != title else []
        )
        changed = f" Note: {' and '.join(changes)}." if changes else ""
        flash(f"Saved as version {outcome.revision.version}.{replaced}{changed}")
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
        flash(f"Who may read it changed; saved as version {changed.version}.")
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
    expected = form_number("expected_version")
    try:
        document = access.document_for(current_user, pack, doc_id)
        editing.delete_document(document, expected)
    except NotFound:
        if not editing.deleted_already(pack, doc_id):
            raise
        flash(DeleteConflict.DELETED_FIRST, "error")  # asked again, or lost to another deletion
        return redirect(url_for("packs.show", slug=slug), code=303)
    except DeleteConflict as conflict:
        flash(str(conflict), "error")
        where = (
            url_for("documents.show", slug=slug, doc_id=doc_id)
            if conflict.current
            else url_for("packs.show", slug=slug)
        )
        return redirect(where, code=303)
    flash(f"Deleted {document.title}.")
    return redirect(url_for("packs.show", slug=slug), code=303)


@bp.route("/<doc_id>/original")
@login_required
def original(slug: str, doc_id: str):
    pack = access.pack_for(current_user, slug)
    document = access.document_for(current_user, pack, doc_id)
    revision = access.revision_for(current_user, document, query_version())
    if not access.staff_may_download(current_user, revision):
        raise NotFound(doc_id)
    return send_original(revision)


@bp.route("/<doc_id>/v<int:version>/figures/<int:number>.webp")
@login_required
def figure(slug: str, doc_id: str, version: int, number: int):
    pack = access.pack_for(current_user, slug)
    document = access.document_for(current_user, pack, doc_id)
    found = viewer.figure_of(access.revision_for(current_user, document, version), number)
    if found is None:
        raise NotFound(number)
    return send_figure(found.path)
