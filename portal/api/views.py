"""The JSON API under ``/api/v1``: packs, documents (read, write, delete), search, asking an agent.

Every endpoint is declared once (``api.endpoint``): the declaration routes it,
validates its query and body with the schemas of ``portal.api.schemas``, and
describes it in ``/api/v1/openapi.json``. The rules are the portal's own:
``portal.access`` decides who sees what (hidden and missing are the same 404),
``portal.documents.services`` stores uploads with the browser upload's limits,
refusals and classification, and ``portal.runs.ask`` asks.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
from pathlib import PurePath

from flask import Blueprint, current_app, jsonify, request, send_file, url_for

from portal import access
from portal.answers.references import grounding_reference
from portal.api import schemas as s
from portal.api.auth import rate_limit_key, token_user
from portal.api.errors import RevisionPurged, UnsupportedBody, init_blueprint
from portal.api.spec import JSON, Endpoint, Registry
from portal.auth import csrf, limiter
from portal.documents import services
from portal.errors import NotFound
from portal.models import Document, Figure, Revision, User
from portal.packs.services import packs_as_json
from portal.runs.ask import ask
from portal.runs.services import run_as_json
from portal.storage import read as read_file

bp = Blueprint("api", __name__, url_prefix="/api/v1")
api = Registry(
    bp,
    "Cairn API",
    "1",
    "Packs, documents, search and agents for programs: JSON in and out, a bearer "
    'token with its user\'s rights, errors as `{"error": {"code", "message"}}`.',
)
MULTIPART = "multipart/form-data"
TEXT = "text/plain"
NOT_FOUND = (404, "Missing, or not yours to see: both look the same.")
PACKS = api.tag("packs", "Packs and their documents, with the rights of the token's user.")
ASKING = api.tag("asking", "Search and agents: every passage carries its grounding reference.")
csrf.exempt(bp)  # only a bearer token authenticates here, never a cookie: nothing to forge
limiter.limit(lambda: current_app.config["CAIRN_API_RATE_LIMIT"], key_func=rate_limit_key)(bp)
init_blueprint(bp, limiter)


def _endpoint(spec: Endpoint, view):
    """The Flask view: who is asking (the token), then the validated query and body, then ``view``."""

    @functools.wraps(view)
    def handle(**path):
        arguments = dict(path)
        if not spec.public:
            arguments["user"] = token_user()
        if spec.query is not None:
            arguments["query"] = spec.query.model_validate(_query_values(spec.query))
        if spec.body:
            arguments["body"] = _body(spec)
        return view(**arguments)

    return handle


def endpoint(method: str, path: str, **declared):
    return api.endpoint(method, path, wrap=_endpoint, **declared)


def _query_values(model) -> dict:
    """The query string's values of the model's fields (a list field takes every repeat); others are ignored."""
    values = {}
    for name, field in model.model_fields.items():
        if name in request.args:
            is_list = getattr(field.annotation, "__origin__", None) is list
            values[name] = request.args.getlist(name) if is_list else request.args[name]
    return values


def _body(spec: Endpoint):
    media = (request.mimetype or "").lower()
    if media not in spec.body:
        raise UnsupportedBody(list(spec.body))
    if media == JSON:
        return spec.body[JSON].model_validate_json(request.get_data() or b"{}")
    form = {name: request.form.get(name) for name in ("expected_version", "visibility") if name in request.form}
    if "reader_roles" in request.form:
        form["reader_roles"] = [role for role in request.form.getlist("reader_roles") if role]
    if "file" in request.files:
        form["file"] = request.files["file"].read()
    return spec.body[media].model_validate(form)


@bp.after_request
def never_cached(response):
    response.headers["Cache-Control"] = "no-store"
    return response


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


# --- Packs and documents ------------------------------------------------------------------------


@endpoint(
    "GET", "/packs", summary="The packs you may read", tag=PACKS, responses=((200, "The packs, by title.", s.PackList),)
)
def list_packs(user: User):
    return _json(s.PackList, {"packs": packs_as_json(access.readable_packs(user))})


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
    documents = sorted(access.readable_documents(user, pack), key=lambda d: (d.title, d.doc_id))
    start = (query.page - 1) * query.per_page
    shown = documents[start : start + query.per_page]
    more = start + query.per_page < len(documents)
    return _json(
        s.DocumentPage,
        {
            "pack": pack.slug,
            "page": query.page,
            "per_page": query.per_page,
            "total": len(documents),
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
    revision = _revision(document, query.version)
    if request.accept_mimetypes.best_match([JSON, TEXT]) == TEXT:
        response = current_app.response_class(revision.text.encode("utf-8"), mimetype=TEXT)
        response.set_etag(revision.sha256)
        return response
    figures = Figure.select().where(Figure.revision == revision).order_by(Figure.number)
    return _json(
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
    figure = Figure.get_or_none((Figure.revision == _revision(document, version)) & (Figure.number == number))
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
    return _json(
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
    services.delete_document(document, body.expected_version)
    return _json(s.DeleteResult, {"pack": pack.slug, "id": document.doc_id, "deleted": True})


# --- Search and asking --------------------------------------------------------------------------


@endpoint(
    "GET",
    "/search",
    summary="Search the packs you may read",
    tag=ASKING,
    query=s.SearchQuery,
    responses=((200, "Passages, best first; `no_evidence` when no term matched.", s.SearchOut),),
    errors=(NOT_FOUND,),
)
def search(user: User, query: s.SearchQuery):
    packs = (
        [access.pack_for(user, slug) for slug in dict.fromkeys(query.pack)]
        if query.pack
        else list(access.readable_packs(user))
    )
    results = access.search_for_reader(user, packs, query.q, query.limit)
    return _json(
        s.SearchOut,
        {
            "query": query.q,
            "no_evidence": results.no_evidence,
            "hits": [
                {
                    **hit.as_json(),
                    "sha256": hit.sha256,
                    "grounding": grounding_reference(
                        hit.document_id, hit.version, hit.sha256, hit.line_start, hit.line_end
                    ),
                }
                for hit in results.hits
            ],
        },
    )


@endpoint(
    "POST",
    "/agents/{slug}/ask",
    summary="Ask an agent",
    tag=ASKING,
    description="Staff ask any agent; a Member asks the agents offered to them in the support chat. The run "
    "is stored like one from the try page. A refused question (`empty_question`, "
    "`question_too_long`) is 422.",
    path_params=s.AgentPath,
    body={JSON: s.AskRequest},
    responses=((200, "The run: answer, warnings, references and the answer's citations.", s.RunOut),),
    errors=(NOT_FOUND, (415, "The body is not JSON."), (422, "The question was refused.")),
)
def ask_agent(user: User, slug: str, body: s.AskRequest):
    agent = access.agent_for_asking(user, slug)
    return _json(s.RunOut, run_as_json(ask(agent, user, body.question)))


# --- Helpers ------------------------------------------------------------------------------------


def _json(model, data: dict, status: int = 200):
    """``data`` checked against its response schema, as JSON: what is sent is what the document says."""
    response = current_app.response_class(model.model_validate(data).model_dump_json(), mimetype=JSON)
    response.status_code = status
    return response


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


def _utc(moment: dt.datetime) -> dt.datetime:
    """The database keeps UTC without a zone; the API says it (``…+00:00``)."""
    return moment.replace(tzinfo=dt.UTC)


def _revision(document: Document, version: int | None) -> Revision:
    """The current revision, or retained revision ``version``; a purged one says so (``RevisionPurged``)."""
    version = document.current_version if version is None else version
    revision = Revision.get_or_none((Revision.document == document) & (Revision.version == version))
    if revision is None:
        raise RevisionPurged(version) if 1 <= version <= document.current_version else NotFound(version)
    return revision


def _reader_access(body, existing: Document | None) -> services.ReaderAccess | None:
    """The document's reader access after this write: what the body sets, the rest as it is (or the default)."""
    if body.visibility is None and body.reader_roles is None:
        return None
    current = existing if existing is not None and not existing.is_deleted else Document()
    return services.ReaderAccess(
        body.visibility or current.visibility,
        tuple(current.reader_role_names if body.reader_roles is None else body.reader_roles),
    )


def init_app(app) -> None:
    app.register_blueprint(bp)
