"""The API's packs and documents: list, read (text and figures), write and delete, with the
rights of the token's user; writes go through ``portal.documents`` like a browser upload."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import PurePath

from flask import current_app, jsonify, request, send_file, url_for

from portal import access
from portal.api import schemas as s
from portal.api.blueprint import MULTIPART, NOT_FOUND, PACKS, TEXT, api, endpoint, json_response
from portal.api.errors import RevisionPurged
from portal.api.spec import JSON
from portal.documents import editing, services
from portal.documents.readers import ReaderAccess
from portal.errors import NotFound
from portal.models import Document, Figure, Revision, User
from portal.packs.services import packs_as_json
from portal.storage import read as read_file


@endpoint(
    "GET",
    "/openapi.json",
    summary="This API as an OpenAPI 3.1 document",
    tag=PACKS,
    public=True,
    responses=((200, "The OpenAPI document.", {JSON: {"type": "object"}}),),
)
def openapi():
    return jsonify(api.document())


@endpoint(
    "GET", "/packs", summary="The packs you may read", tag=PACKS, responses=((200, "The packs, by title.", s.PackList),)
)
def list_packs(user: User):
    return json_response(s.PackList, {"packs": packs_as_json(access.readable_packs(user))})


@endpoint(
    "GET",
    "/packs/{slug}/documents",
    summary="A pack's documents, a page at a time",
    tag=PACKS,
    path_params=s.PackPath,
    query=s.DocumentListQuery,
    responses=((200, "One page of the documents you may read, by title.", s.DocumentPage),),
    errors=(NOT_FOUND,),
)
def list_documents(user: User, slug: str, query: s.DocumentListQuery):
    pack = access.pack_for(user, slug)
    documents = access.readable_documents(user, pack)
    total = documents.count()
    shown = list(documents.paginate(query.page, query.per_page))
    more = query.page * query.per_page < total
    return json_response(
        s.DocumentPage,
        {
            "pack": pack.slug,
            "page": query.page,
            "per_page": query.per_page,
            "total": total,
            "documents": [_summary(d) for d in shown],
            "next": url_for("api.list_documents", slug=pack.slug, page=query.page + 1, per_page=query.per_page)
            if more
            else None,
        },
    )


@endpoint(
    "GET",
    "/packs/{slug}/documents/{doc_id}",
    summary="A document's text: current or a retained revision",
    description="The full text of the revision with its SHA-256, so a grounding reference can be checked. "
    "With `Accept: text/plain` the body is the text alone, byte for byte (`ETag`: its SHA-256).",
    tag=PACKS,
    path_params=s.DocumentPath,
    query=s.DocumentQuery,
    responses=((200, "The revision.", {JSON: s.DocumentOut, TEXT: {"type": "string"}}),),
    errors=((404, "Missing, not yours to see, or a revision no longer kept (`revision_purged`)."),),
)
def read_document(user: User, slug: str, doc_id: str, query: s.DocumentQuery):
    pack = access.pack_for(user, slug)
    document = access.document_for(user, pack, doc_id)
    revision = _revision(user, document, query.version)
    if request.accept_mimetypes.best_match([JSON, TEXT]) == TEXT:
        response = current_app.response_class(revision.text.encode("utf-8"), mimetype=TEXT)
        response.set_etag(revision.sha256)
        return response
    figures = Figure.select().where(Figure.revision == revision).order_by(Figure.number)
    return json_response(
        s.DocumentOut,
        {
            **_summary(document),
            "pack": pack.slug,
            "version": revision.version,
            "current_version": document.current_version,
            "sha256": revision.sha256,
            "created_at": _utc(revision.created_at),
            "text": revision.text,
            "figures": [
                {
                    "number": f.number,
                    "label": f.label,
                    "url": url_for(
                        "api.read_figure",
                        slug=pack.slug,
                        doc_id=document.doc_id,
                        version=revision.version,
                        number=f.number,
                    ),
                }
                for f in figures
            ],
        },
    )


@endpoint(
    "GET",
    "/packs/{slug}/documents/{doc_id}/versions/{version}/figures/{number}",
    summary="A figure of a revision, as WebP",
    tag=PACKS,
    path_params=s.FigurePath,
    responses=((200, "The image.", {"image/webp": {"type": "string", "contentMediaType": "image/webp"}}),),
    errors=(NOT_FOUND,),
)
def read_figure(user: User, slug: str, doc_id: str, version: int, number: int):
    document = access.document_for(user, access.pack_for(user, slug), doc_id)
    figure = Figure.get_or_none((Figure.revision == _revision(user, document, version)) & (Figure.number == number))
    if figure is None:
        raise NotFound(number)
    return send_file(io.BytesIO(read_file(figure.path)), mimetype="image/webp", max_age=0)


@endpoint(
    "PUT",
    "/packs/{slug}/documents/{doc_id}",
    summary="Create or replace a document",
    tag=PACKS,
    description="Text in JSON, or a file as multipart/form-data, read, limited, classified and refused "
    "exactly like a browser upload (a refusal is 422 with the same reason code). "
    "`expected_version` must be the current version (0: the document must not exist).",
    path_params=s.DocumentPath,
    body={JSON: s.DocumentWrite, MULTIPART: s.DocumentUpload},
    responses=(
        (201, "Created as version 1.", s.WriteResult),
        (200, "Replaced (a new version), or `unchanged`.", s.WriteResult),
    ),
    errors=(
        NOT_FOUND,
        (409, "`expected_version` is not the current version (`current_version` says which)."),
        (413, "The body is larger than the upload limit."),
        (415, "The body is neither JSON nor multipart/form-data."),
        (422, "Refused, with the reason code of a browser upload; nothing was stored."),
    ),
)
def write_document(user: User, slug: str, doc_id: str, body: s.DocumentWrite | s.DocumentUpload):
    pack = access.pack_for(user, slug, "documents.write")
    existing = Document.get_or_none((Document.pack == pack) & (Document.doc_id == doc_id))
    if existing is not None and not existing.is_deleted:
        access.document_for(user, pack, doc_id)
    if isinstance(body, s.DocumentWrite):
        filename, data, content_type = (
            f"{doc_id}.{'md' if body.format == 'markdown' else 'txt'}",
            body.text.encode("utf-8"),
            None,
        )
    else:
        sent = request.files["file"]
        filename, data, content_type = (
            f"{doc_id}{PurePath(sent.filename or '').suffix.lower()}",
            body.file,
            sent.mimetype or None,
        )
    outcome = services.upload_file(
        pack,
        filename,
        data,
        user,
        content_type,
        body.expected_version,
        doc_id=doc_id,
        reader_access=_reader_access(body, existing),
    )
    if outcome.refused is not None:
        raise outcome.refused
    document, revision = outcome.document, outcome.revision
    return json_response(
        s.WriteResult,
        {
            "pack": pack.slug,
            "id": document.doc_id,
            "version": revision.version,
            "sha256": revision.sha256,
            "created": outcome.created,
            "unchanged": outcome.unchanged,
            "visibility": document.visibility,
            "reader_roles": document.reader_role_names,
            "redacted": document.redacted,
            "images_kept": outcome.images_kept,
            "images_not_kept": outcome.images_not_kept,
            "replaced_browser_edit": _replaced(outcome.replaced_edit),
        },
        status=201 if outcome.created else 200,
    )


@endpoint(
    "DELETE",
    "/packs/{slug}/documents/{doc_id}",
    summary="Delete a document",
    tag=PACKS,
    description="Removes its text, revisions, files and index entries; a tombstone keeps the id from reuse.",
    path_params=s.DocumentPath,
    body={JSON: s.DocumentDelete},
    responses=((200, "Deleted.", s.DeleteResult),),
    errors=(NOT_FOUND, (409, "`expected_version` is not the current version."), (415, "The body is not JSON.")),
)
def delete_document(user: User, slug: str, doc_id: str, body: s.DocumentDelete):
    pack = access.pack_for(user, slug, "documents.write")
    document = access.document_for(user, pack, doc_id)
    editing.delete_document(document, body.expected_version)
    return json_response(s.DeleteResult, {"pack": pack.slug, "id": document.doc_id, "deleted": True})


def _summary(document: Document) -> dict:
    return {
        "id": document.doc_id,
        "title": document.title,
        "kind": document.kind,
        "version": document.current_version,
        "visibility": document.visibility,
        "reader_roles": document.reader_role_names,
        "redacted": document.redacted,
        "updated_at": _utc(document.updated_at),
    }


def _replaced(edit) -> dict | None:
    if edit is None:
        return None
    return {
        "version": edit.version,
        "edited_by": edit.edited_by,
        "edited_at": _utc(edit.edited_at),
        "message": edit.replaced_summary(),
    }


def _utc(moment: dt.datetime) -> dt.datetime:
    """The database keeps UTC without a zone; the API says it (``…+00:00``)."""
    return moment.replace(tzinfo=dt.UTC)


def _revision(user: User, document: Document, version: int | None) -> Revision:
    """The current revision, or retained revision ``version``; a purged one says so (``RevisionPurged``).

    A kept revision whose own reader roles leave ``user`` out is the plain 404 (SPEC 2: an older
    revision needs both its own and the current permission; ``document_for`` checked the current).
    """
    version = document.current_version if version is None else version
    revision = Revision.get_or_none((Revision.document == document) & (Revision.version == version))
    if revision is None:
        raise RevisionPurged(version) if 1 <= version <= document.current_version else NotFound(version)
    if not access.revision_readable(user, revision):
        raise NotFound(version)
    return revision


def _reader_access(body, existing: Document | None) -> ReaderAccess | None:
    """The document's reader access after this write: what the body sets, the rest as it is (or the default)."""
    if body.visibility is None and body.reader_roles is None:
        return None
    current = existing if existing is not None and not existing.is_deleted else Document()
    return ReaderAccess(
        body.visibility or current.visibility,
        tuple(current.reader_role_names if body.reader_roles is None else body.reader_roles),
    )
