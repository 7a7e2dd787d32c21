"""The demo seed's catalog: packs and titles derived from the corpus, the rest read from catalog.toml.

A pack's Markdown documents are the files ``corpus/<pack-slug>/*.md`` (file stem = document
id, first heading = title), so a title is written once, in its document. Everything that is
not in a document (what each pack is, the two binary documents made by ``build_binaries``,
the agents, one user per role, the invented company) is data in ``catalog.toml``.

Documents are dicts: Markdown ones carry a ``source`` path relative to this package's folder
(``DEMO_DIR``); generated ones name a ``generator`` (``build_docx`` or ``build_pdf``) and the
``filename`` to ingest them under.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEMO_DIR = Path(__file__).resolve().parent
CORPUS_DIR = DEMO_DIR / "corpus"
SOURCES_DIR = DEMO_DIR / "sources"
CATALOG_PATH = DEMO_DIR / "catalog.toml"
EVAL_QUESTIONS_PATH = DEMO_DIR / "eval" / "questions.json"
VALUE_QUESTIONS_PATH = DEMO_DIR / "eval" / "value_questions.json"  # tuning questions that ask for values


def first_heading(path: Path) -> str:
    """The title of a Markdown file: its first line, a level-one heading (the corpus tests hold every file to it)."""
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    if not first.startswith("# "):
        raise ValueError(f"{path} does not start with a '# ' heading")
    return first[2:].strip()


def _corpus_documents(pack_slug: str) -> list[dict[str, str]]:
    return [
        {"id": path.stem, "title": first_heading(path), "source": f"corpus/{pack_slug}/{path.name}"}
        for path in sorted((CORPUS_DIR / pack_slug).glob("*.md"))
    ]


def _generated_document(entry: dict[str, str]) -> dict[str, str]:
    return {
        "id": entry["id"],
        "title": first_heading(SOURCES_DIR / f"{entry['id']}.md"),
        "generator": entry["generator"],
        "filename": entry["filename"],
    }


def _vocabulary(name: str | None) -> str:
    """The text of ``vocabulary/<name>.txt``, or "" for a pack without one."""
    return (DEMO_DIR / "vocabulary" / f"{name}.txt").read_text(encoding="utf-8") if name else ""


def _load(path: Path = CATALOG_PATH) -> tuple[dict, list, list, list, dict]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    company = data["company"]

    def company_of(entry: dict) -> str | None:  # `company = true`: the demo's invented company
        return company["name"] if entry.get("company") else None

    packs = [
        {
            "slug": entry["slug"],
            "title": entry["title"],
            "description": entry["description"],
            "kind": entry["kind"],
            "company": company_of(entry),
            "visibility": entry["visibility"],
            "vocabulary": _vocabulary(entry.get("vocabulary")),
            "documents": _corpus_documents(entry["slug"])
            + [_generated_document(generated) for generated in entry.get("generated", [])],
        }
        for entry in data["packs"]
    ]
    agents = [
        {
            "slug": entry["slug"],
            "name": entry["name"],
            "company": company_of(entry),
            "mode": entry["mode"],
            "description": entry.get("description", ""),
            "instructions": entry["instructions"] + (data["agent_rules"][entry["rules"]] if "rules" in entry else ""),
            "packs": entry["packs"],
        }
        for entry in data["agents"]
    ]
    users = [
        {
            "email": entry["email"],
            "display_name": entry["display_name"],
            "roles": entry["roles"],
            "company": company_of(entry),
            "password": entry["password"],
        }
        for entry in data["users"]
    ]
    return company, packs, agents, users, data["landscape"]


COMPANY, PACKS, AGENTS, DEMO_USERS, _LANDSCAPE = _load()

# The company's landscape as its documents name it. Generic packs name none of these.
COMPANY_SYSTEM_IDS: tuple[str, ...] = tuple(_LANDSCAPE["system_ids"])
COMPANY_PLANTS: tuple[str, ...] = tuple(_LANDSCAPE["plants"])
COMPANY_HOST_PREFIX: str = _LANDSCAPE["host_prefix"]
COMPANY_RECORD_PREFIXES: tuple[str, ...] = tuple(_LANDSCAPE["record_prefixes"])


def pack_by_slug(slug: str) -> dict[str, Any]:
    """The catalog entry of one pack; ``KeyError`` when the slug is unknown."""
    for pack in PACKS:
        if pack["slug"] == slug:
            return pack
    raise KeyError(slug)


def iter_documents() -> Iterator[tuple[dict[str, Any], dict[str, str]]]:
    """Every (pack, document) pair of the seed, in catalog order."""
    for pack in PACKS:
        for document in pack["documents"]:
            yield pack, document


def markdown_path(document: dict[str, str]) -> Path:
    """Absolute path of a Markdown document's source file."""
    return DEMO_DIR / document["source"]


def build_document(document: dict[str, str], directory: Path) -> Path:
    """Materialise a document as the file to ingest: the Markdown source, or a freshly generated binary."""
    if "source" in document:
        return markdown_path(document)
    from portal.demo import build_binaries

    builder = getattr(build_binaries, document["generator"])
    return builder(Path(directory) / document["filename"])
