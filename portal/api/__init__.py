"""The JSON API under ``/api/v1``: bearer tokens, schemas, the OpenAPI document and the endpoints.

``portal.models`` is imported first: it imports ``portal.api.tokens`` (the token
model) at its end, so importing that module on its own must load the models first.
"""

import portal.models  # noqa: F401


def init_app(app) -> None:
    from portal.api.views import init_app as init_views

    init_views(app)
