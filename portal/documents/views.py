"""Upload, view, edit and delete documents; their originals and figures."""

from __future__ import annotations

import io

from flask import Blueprint, flash, redirect, request, send_file, url_for
from flask_login import current_user, login_required

from portal import access, storage
from portal.documents import services
from portal.documents.filenames import download_name
from portal.documents.render import PassageLines, numbered_lines, render_markdown
from portal.errors import NotFound, Refused, VersionConflict
from portal.models import Figure, Passage, Revision
from portal.numbers import form_number, query_number
from portal.rendering import render, wants_fragment
from portal.runs.services import citation_for_viewer

bp = Blueprint("documents", __name__, url_prefix="/packs/<slug>/documents")


@bp.route("", methods=["POST"])
@login_required
def upload(slug: str):
    pack = access.pack_for_managing(current_user, slug)
    files = [f for f in request.files.getlist("files") if f and f.filename]
    if not files:
        outcomes = [services.UploadOutcome(filename="(none)", refused=Refused(
            "no_file", "Choose at least one file to upload."))]
    else:
        outcomes = [services.upload_file(pack, f.filename, f.read(), current_user,
                                         content_type=f.mimetype or None) for f in files]
    status = 200 if all(o.accepted for o in outcomes) else 422
    if wants_fragment():
        return render("packs/show.html", "documents/_upload_outcomes.html", status=status, pack=pack,
                      outcomes=outcomes, documents=access.readable_documents(current_user, pack))
    return render("packs/show.html", status=status, pack=pack, documents=access.readable_documents(current_user, pack),
                  query="", results=None, outcomes=outcomes)


@bp.route("/<doc_id>")
@login_required
def show(slug: str, doc_id: str):
    pack = access.pack_for_reading(current_user, slug)
    document = access.document_for_reading(current_user, pack, doc_id)
    revision = document.current_revision()
    passages = list(Passage.select().where(Passage.revision == revision).order_by(Passage.ordinal))
    passage_id = query_number("passage")
    cited = next((p for p in passages if p.id == passage_id), None)
    from_run = citation_for_viewer(current_user, query_number("run"), query_number("ref"), document, passages)
    if from_run is not None and cited is None:
        cited = from_run.current_passage
    highlight = (cited.line_start, cited.line_end) if cited else None
    view = "lines" if request.args.get("view") == "lines" else "formatted"
    figure_numbers = {f.number for f in Figure.select(Figure.number).where(Figure.revision == revision)}

    def figure_url(number: int) -> str:
        if number not in figure_numbers:
            return ""
        return url_for("documents.figure", slug=slug, doc_id=doc_id, version=revision.version, number=number)

    body = (numbered_lines(revision.text, highlight) if view == "lines" else
            render_markdown(revision.text, [PassageLines(p.ordinal, p.line_start, p.line_end) for p in passages],
                            highlight, figure_url))
    history = list(Revision.select(Revision.version, Revision.sha256, Revision.created_at, Revision.created_by)
                   .where(Revision.document == document).order_by(Revision.version.desc()))
    return render("documents/show.html", pack=pack, document=document, revision=revision, body=body,
                  view=view, cited=cited, passages=passages, history=history, from_run=from_run)


@bp.route("/<doc_id>/edit", methods=["GET", "POST"])
@login_required
def edit(slug: str, doc_id: str):
    pack = access.pack_for_managing(current_user, slug)
    document = access.document_for_reading(current_user, pack, doc_id)
    revision = document.current_revision()
    if request.method == "GET":
        return render("documents/edit.html", pack=pack, document=document, text=revision.text,
                      expected_version=document.current_version, error=None)
    text = request.form.get("text", "")
    expected = form_number("expected_version")
    try:
        saved = services.edit_text(document, text, expected, current_user)
    except (Refused, VersionConflict) as error:
        status = 409 if isinstance(error, VersionConflict) else 422
        return render("documents/edit.html", status=status, pack=pack, document=document, text=text,
                      expected_version=expected, error=str(error) if isinstance(error, VersionConflict)
                      else error.message)
    flash(f"Saved as version {saved.version}.")
    return redirect(url_for("documents.show", slug=slug, doc_id=doc_id), code=303)


@bp.route("/<doc_id>/delete", methods=["POST"])
@login_required
def delete(slug: str, doc_id: str):
    pack = access.pack_for_managing(current_user, slug)
    document = access.document_for_reading(current_user, pack, doc_id)
    expected = form_number("expected_version")
    try:
        services.delete_document(document, expected)
    except VersionConflict as conflict:
        flash(str(conflict), "error")
        return redirect(url_for("documents.show", slug=slug, doc_id=doc_id), code=303)
    flash(f"Deleted {document.title}.")
    return redirect(url_for("packs.show", slug=slug), code=303)


@bp.route("/<doc_id>/original")
@login_required
def original(slug: str, doc_id: str):
    pack = access.pack_for_reading(current_user, slug)
    document = access.document_for_reading(current_user, pack, doc_id)
    revision = document.current_revision()
    if not access.can_manage_documents(current_user) or revision is None or not revision.original_path:
        raise NotFound(doc_id)
    return send_file(io.BytesIO(storage.read(revision.original_path)), as_attachment=True,
                     download_name=download_name(revision.original_name), mimetype="application/octet-stream",
                     max_age=0)


@bp.route("/<doc_id>/v<int:version>/figures/<int:number>.webp")
@login_required
def figure(slug: str, doc_id: str, version: int, number: int):
    pack = access.pack_for_reading(current_user, slug)
    document = access.document_for_reading(current_user, pack, doc_id)
    found = (Figure.select().join(Revision)
             .where((Revision.document == document) & (Revision.version == version) & (Figure.number == number))
             .first())
    if found is None:
        raise NotFound(number)
    response = send_file(io.BytesIO(storage.read(found.path)), mimetype="image/webp", max_age=3600)
    response.headers["Cache-Control"] = "private, max-age=3600"
    return response
