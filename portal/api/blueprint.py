"""The API's blueprint and its declarations: every endpoint is declared once (``endpoint``), which
routes it, authenticates its token, validates its query and body, and describes it in the OpenAPI
document; ``json_response`` checks each answer against its response schema.

The endpoints: packs and documents in ``portal.api.packs``, search and asking in ``portal.api.views``.
"""

from __future__ import annotations

import functools

from flask import Blueprint, current_app, request

from portal.api.auth import rate_limit_key, token_user
from portal.api.errors import MalformedBody, UnsupportedBody, init_blueprint
from portal.api.spec import JSON, Endpoint, Registry
from portal.auth import csrf, limiter

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
NOT_FOUND = (
    404,
    "Missing, or not yours to see: both look the same (`not_found`); a pack deleted by someone else while this "
    "request was writing to it is `pack_deleted`, and nothing of the request was stored.",
)
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
    # every field sent, so that one the shape does not know is refused by its name, as in a JSON body ("visiblity"
    # was dropped unread and the document stored with the pack's default visibility)
    form: dict = {name: request.form.get(name) for name in request.form}
    if "reader_roles" in request.form:
        form["reader_roles"] = [role for role in request.form.getlist("reader_roles") if role]
    if "file" in request.form:  # `curl -F 'file=<x.md'` sends the text, without a file name
        raise MalformedBody("file: send the file as a file part (with a file name, as `-F file=@x.md` does).")
    for name in request.files:
        form[name] = request.files[name].read() if name == "file" else "(a file)"
    return spec.body[media].model_validate(form)


@bp.after_request
def never_cached(response):
    response.headers["Cache-Control"] = "no-store"
    return response


def json_response(model, data: dict, status: int = 200):
    """``data`` checked against its response schema, as JSON: what is sent is what the document says."""
    response = current_app.response_class(model.model_validate(data).model_dump_json(), mimetype=JSON)
    response.status_code = status
    return response
