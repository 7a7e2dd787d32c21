"""The JSON API under ``/api/v1``: bearer tokens, schemas, the OpenAPI document and the endpoints."""


def init_app(app) -> None:
    from portal.api.views import init_app as init_views

    init_views(app)
