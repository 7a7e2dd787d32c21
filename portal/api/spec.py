"""The API's endpoints as data, and the OpenAPI 3.1 document built from them.

Each view is declared once with ``Registry.endpoint``: its method, path, the
pydantic models of its path, query and body, and its responses. The same
declaration registers the Flask route, hands the view its validated
parameters (``portal.api.blueprint``) and becomes the view's operation in the
document, whose schemas pydantic generates from those models
(``openapi-pydantic`` assembles them; nothing is written as JSON by hand).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openapi_pydantic.util import PydanticSchema, construct_open_api_with_schema_class
from openapi_pydantic.v3.v3_1 import (
    Components,
    Info,
    MediaType,
    OpenAPI,
    Operation,
    Parameter,
    PathItem,
    RequestBody,
    Response,
    Schema,
    SecurityScheme,
    Server,
    Tag,
)
from pydantic import BaseModel

from portal.api.schemas import ErrorResponse

PREFIX = "/api/v1"
JSON = "application/json"
# The errors an endpoint may answer, besides those it declares: what every one of them shares.
AUTH_ERRORS = (
    (401, "No token, or one that is unknown, revoked or of an inactive user."),
    (429, "Too many requests with this token; `Retry-After` says when to try again."),
)
INVALID = (400, "The request does not have the documented shape (`invalid_request`).")

Content = type[BaseModel] | dict[str, type[BaseModel] | dict[str, Any]] | None


@dataclass(frozen=True)
class Endpoint:
    """One operation: what it takes, what it answers, and how the document describes it."""

    method: str
    path: str  # as OpenAPI writes it, below PREFIX: /packs/{slug}
    name: str
    summary: str
    description: str
    tag: str
    path_params: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    body: dict[str, type[BaseModel]] = field(default_factory=dict)  # media type → model
    responses: tuple[tuple[int, str, Content], ...] = ()
    errors: tuple[tuple[int, str], ...] = ()
    public: bool = False  # answers without a token (the OpenAPI document itself)

    def flask_rule(self) -> str:
        """``/packs/{slug}/…/{version}`` as Flask routes it: ``<slug>``, ``<int:version>`` for integers."""
        fields = self.path_params.model_fields if self.path_params else {}

        def converter(match: re.Match) -> str:
            name = match.group(1)
            return f"<int:{name}>" if fields.get(name) and fields[name].annotation is int else f"<{name}>"

        return re.sub(r"\{(\w+)\}", converter, self.path)


class Registry:
    """The endpoints of one blueprint, in the order they were declared."""

    def __init__(self, blueprint, title: str, version: str, description: str):
        self.blueprint = blueprint
        self.info = Info(title=title, version=version, description=description)
        self.endpoints: list[Endpoint] = []
        self.tags: list[Tag] = []

    def tag(self, name: str, description: str) -> str:
        self.tags.append(Tag(name=name, description=description))
        return name

    def endpoint(
        self,
        method: str,
        path: str,
        *,
        summary: str,
        tag: str,
        description: str = "",
        wrap: Callable[[Endpoint, Callable], Callable],
        **declared,
    ) -> Callable:
        """Register the decorated view for ``method`` ``path``; ``wrap`` builds the Flask view from it."""

        def register(view: Callable) -> Callable:
            spec = Endpoint(
                method=method,
                path=path,
                name=view.__name__,
                summary=summary,
                description=description or (view.__doc__ or "").strip(),
                tag=tag,
                **declared,
            )
            self.endpoints.append(spec)
            self.blueprint.add_url_rule(
                spec.flask_rule(), endpoint=spec.name, view_func=wrap(spec, view), methods=[method]
            )
            return view

        return register

    def document(self) -> dict:
        """The OpenAPI 3.1 document of every endpoint, as JSON-ready data."""
        paths: dict[str, PathItem] = {}
        for spec in self.endpoints:
            item = paths.setdefault(spec.path, PathItem())
            setattr(item, spec.method.lower(), _operation(spec))
        api = OpenAPI(
            openapi="3.1.0",
            info=self.info,
            servers=[Server(url=PREFIX)],
            paths=paths,
            tags=self.tags,
            components=Components(
                securitySchemes={
                    "token": SecurityScheme(
                        type="http",
                        scheme="bearer",
                        description="An API token, made on your account page or with `cairn tokens create`.",
                    )
                }
            ),
            security=[{"token": []}],
        )
        built = construct_open_api_with_schema_class(api)
        # Only what was set: the library's defaults include fields OpenAPI 3.1 forbids on path parameters.
        return built.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)


def _operation(spec: Endpoint) -> Operation:
    parameters = _parameters(spec.path_params, "path") + _parameters(spec.query, "query")
    errors = list(spec.errors)
    if parameters or spec.body:
        errors.append(INVALID)
    if not spec.public:
        errors.extend(AUTH_ERRORS)
    responses = {
        str(status): Response(description=text, content=_content(content)) for status, text, content in spec.responses
    }
    for status, text in sorted(errors):
        responses[str(status)] = Response(description=text, content=_content(ErrorResponse))
    return Operation(
        operationId=spec.name,
        summary=spec.summary,
        description=spec.description or None,
        tags=[spec.tag],
        parameters=parameters or None,
        responses=responses,
        security=[] if spec.public else None,
        requestBody=RequestBody(required=True, content=_content(spec.body)) if spec.body else None,
    )


def _content(content: Content) -> dict[str, MediaType] | None:
    if content is None:
        return None
    if isinstance(content, type):
        content = {JSON: content}
    return {
        media: MediaType(
            schema=PydanticSchema(schema_class=shape) if isinstance(shape, type) else Schema.model_validate(shape)
        )
        for media, shape in content.items()
    }


def _parameters(model: type[BaseModel] | None, where: str) -> list[Parameter]:
    """One parameter per field of ``model``, with the field's own JSON schema."""
    if model is None:
        return []
    schema = model.model_json_schema()
    required = set(schema.get("required", ())) | ({*schema["properties"]} if where == "path" else set())
    return [
        Parameter(
            name=name,
            param_in=where,
            required=name in required,
            description=prop.pop("description", None),
            param_schema=Schema.model_validate({k: v for k, v in prop.items() if k != "title"}),
        )
        for name, prop in schema["properties"].items()
    ]
