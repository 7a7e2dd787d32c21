"""The JSON API under ``/api/v1``: packs, documents (read, write, delete), search, asking an agent.

Every endpoint is declared once (``blueprint.endpoint``): the declaration routes it,
validates its query and body with the schemas of ``portal.api.schemas``, and
describes it in ``/api/v1/openapi.json``. The rules are the portal's own:
``portal.access`` decides who sees what (hidden and missing are the same 404),
``portal.documents`` stores uploads with the browser upload's limits,
refusals and classification, and ``portal.runs.ask`` asks. Bearer tokens are
in ``auth`` and ``tokens``, the OpenAPI document in ``spec``.
"""


def init_app(app) -> None:
    # Importing the endpoint modules declares their endpoints, in this order in the OpenAPI document.
    from portal.api import packs, views  # noqa: F401
    from portal.api.blueprint import bp

    app.register_blueprint(bp)
