"""The OpenAPI document as the API page shows it: each operation with its parameters, body fields and answers."""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup, escape

_CODE_SPAN = re.compile(r"`([^`]+)`")


def with_code(text: str) -> Markup:
    """Our own descriptions as HTML: escaped, each `span` in backticks as <code>."""
    return Markup(_CODE_SPAN.sub(lambda m: f"<code>{m.group(1)}</code>", str(escape(text))))


def _resolve(document: dict, schema: dict) -> dict:
    ref = schema.get("$ref")
    return document["components"]["schemas"][ref.rsplit("/", 1)[1]] if ref else schema


def type_label(document: dict, schema: dict) -> str:
    """A short, readable type: ``string``, ``integer ≥ 0``, ``list of string``, ``staff | shared | company``."""
    schema = _resolve(document, schema)
    if "anyOf" in schema:
        return " or ".join(type_label(document, s) for s in schema["anyOf"] if s.get("type") != "null")
    if "enum" in schema:
        return " | ".join(str(v) for v in schema["enum"])
    if schema.get("type") == "array":
        return f"list of {type_label(document, schema.get('items', {}))}"
    label = schema.get("type", schema.get("title", "object"))
    if "minimum" in schema:
        label += f" ≥ {schema['minimum']}"
    if "maximum" in schema:
        label += f", ≤ {schema['maximum']}"
    if "maxLength" in schema:
        label += f", at most {schema['maxLength']:,} characters"
    if "contentMediaType" in schema:
        label = f"file ({schema['contentMediaType']})"
    return label


def _fields(document: dict, schema: dict) -> list[dict[str, Any]]:
    schema = _resolve(document, schema)
    required = set(schema.get("required", ()))
    return [
        {
            "name": name,
            "type": type_label(document, prop),
            "required": name in required,
            "description": with_code(prop.get("description", "")),
        }
        for name, prop in schema.get("properties", {}).items()
    ]


def readable_reference(document: dict) -> list[dict[str, Any]]:
    """Every operation, in the document's order, ready for a template."""
    operations = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            body = operation.get("requestBody", {}).get("content", {})
            operations.append(
                {
                    "method": method.upper(),
                    "path": document["servers"][0]["url"] + path,
                    "summary": operation.get("summary", ""),
                    "description": with_code(operation.get("description", "")),
                    "public": operation.get("security") == [],
                    "parameters": [
                        {
                            "name": p["name"],
                            "in": p["in"],
                            "required": p.get("required", False),
                            "type": type_label(document, p.get("schema", {})),
                            "description": with_code(p.get("description", "")),
                        }
                        for p in operation.get("parameters", ())
                    ],
                    "bodies": [
                        {"media": media, "fields": _fields(document, content["schema"])}
                        for media, content in body.items()
                    ],
                    "responses": [
                        {"status": status, "description": with_code(response["description"])}
                        for status, response in operation["responses"].items()
                    ],
                }
            )
    return operations
