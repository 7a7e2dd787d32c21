"""The API's request and response shapes (pydantic): they validate what comes in, shape what goes out,
and are the schemas of the OpenAPI document (``portal.api.spec``), so the three cannot drift apart.

Limits come from where they are defined (``portal.ingest.limits``, ``portal.search.service``); a
request's refusals by the upload, classification or question rules keep their own reason codes
(``Refused``), so only the shape of a request is checked here.
"""

from __future__ import annotations

import datetime as dt
from types import UnionType
from typing import Annotated, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationInfo, WithJsonSchema, field_validator

from portal.ingest.limits import (
    ACCEPTED_EXTENSIONS,
    MAX_FILE_BYTES,
    MAX_QUESTION_CHARS,
    MAX_SEARCH_CHARS,
    MAX_TEXT_CHARS,
    megabytes,
)
from portal.models import DOCUMENT_ID_RE, MAX_ID_CHARS, ROLES, RUN_STATUSES, VISIBILITIES
from portal.numbers import MAX_NUMBER, parse_number
from portal.request_text import sent_value
from portal.search.service import DEFAULT_LIMIT, MAX_LIMIT

Visibility = Literal[VISIBILITIES]  # type: ignore[valid-type]
Role = Literal[ROLES]  # type: ignore[valid-type]
MAX_PER_PAGE = 200
GROUNDING_HELP = (
    "`document:<id>@<version>#<sha256>:L<start>-L<end>`: the SHA-256 of the revision's full text "
    "(UTF-8) and the passage's line range in it (1-based, inclusive)."
)


# A whole number is an integer and nothing else: pydantic's lax mode read ``true`` as 1, ``false`` as 0,
# and ``"1"`` or ``1.0`` as 1 (``TextRequest`` reads the text of a query string or a form first).
WholeNumber = Annotated[int, Strict()]
# A version or page number is at most the widest database integer (``portal.numbers``): a larger one
# reached a query and ended in a 500 instead of a 400 naming it. A field's own smaller ``le`` would lose to
# this one (pydantic applies the type's last): such a field is a ``WholeNumber`` (``per_page``, ``limit``).
Number = Annotated[WholeNumber, Field(le=MAX_NUMBER)]


class Request(BaseModel):
    """A request shape: unknown fields are an error, not silently ignored; text loses the control characters
    (the bidirectional reordering controls among them), as every text sent to the portal does
    (``portal.request_text``)."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def as_sent(cls, value):
        return sent_value(value)


def _is_whole_number(annotation) -> bool:
    """Whether a field holds an ``int`` (``Number``, ``WholeNumber``), or else nothing (``| None``)."""
    kinds = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    return any(getattr(kind, "__origin__", kind) is int for kind in kinds)  # Annotated[int, …] or int


class TextRequest(Request):
    """A request whose values arrive as text (a query string, a multipart form): a whole number in it is
    written in ASCII digits, ``portal.numbers``'s one rule; pydantic alone read ``" 1"``, ``"+1"`` and ``"1.0"``
    as 1 and ``"1_0"`` as 10."""

    @field_validator("*", mode="before")
    @classmethod
    def whole_number_in_digits(cls, value, info: ValidationInfo):
        field = cls.model_fields[info.field_name]
        if not isinstance(value, str) or not _is_whole_number(field.annotation):
            return value
        # one message for every number out of place: "page=-1" and "page=0" said two different things
        lowest = next((bound.ge for bound in field.metadata if getattr(bound, "ge", None) is not None), 0)
        highest = next((bound.le for bound in field.metadata if getattr(bound, "le", None) is not None), MAX_NUMBER)
        number = parse_number(value)
        if number is None or not lowest <= number <= highest:
            raise ValueError(f"must be a whole number from {lowest} to {highest:,} written in ASCII digits")
        return number


# --- Path and query parameters ---------------------------------------------------------------


class PackPath(Request):
    slug: str = Field(description="The pack's slug.")


class DocumentPath(PackPath):
    doc_id: str = Field(
        max_length=MAX_ID_CHARS,
        pattern=DOCUMENT_ID_RE.pattern,
        description=f"The document id: 1–{MAX_ID_CHARS} letters, digits, `.`, `_`, `-`, "
        "starting with a letter or digit; a new document's in lower case, as the ids made from file names are.",
    )


class FigurePath(DocumentPath):
    version: int = Field(ge=1, description="The revision.")
    number: int = Field(ge=1, description="The figure's number, as in its `[Figure N: label]` marker.")


class AgentPath(Request):
    slug: str = Field(description="The agent's slug.")


class DocumentListQuery(TextRequest):
    page: Number = Field(1, ge=1, description="Page number, from 1.")
    per_page: WholeNumber = Field(50, ge=1, le=MAX_PER_PAGE, description="Documents per page.")


class DocumentQuery(TextRequest):
    version: Number | None = Field(None, ge=1, description="A retained revision; unset: the current one.")


class SearchQuery(TextRequest):
    q: str = Field(min_length=1, max_length=MAX_SEARCH_CHARS, description="The query, as words (no syntax).")
    pack: list[str] = Field(
        default_factory=list, description="A pack slug to search; repeat for several. None: every pack you read."
    )
    limit: WholeNumber = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description="At most this many passages.")


# --- Request bodies ---------------------------------------------------------------------------

ExpectedVersion = Annotated[
    Number,
    Field(
        ge=0,
        description="The version this change is based on; 0: the document "
        "must not exist yet. Another one: 409 with the current.",
    ),
]


class DocumentWrite(Request):
    """A document's text in JSON (Markdown or plain text), with who may read it."""

    expected_version: ExpectedVersion
    text: str = Field(description=f"The full text; at most {MAX_TEXT_CHARS:,} characters (refused, never cut).")
    format: Literal["markdown", "text"] = Field("markdown", description="How the text is read.")
    visibility: Visibility | None = Field(
        None, description="Who may read it directly; unset: unchanged (`staff` for a new document)."
    )
    reader_roles: list[Role] | None = Field(
        None, description="Narrows reading to these exact roles; unset: unchanged (none for a new document)."
    )


class DocumentUpload(TextRequest):
    """A document as a file (multipart/form-data), read like a browser upload."""

    expected_version: ExpectedVersion
    file: Annotated[
        bytes,
        WithJsonSchema(
            {
                "type": "string",
                "contentMediaType": "application/octet-stream",
                "description": f"The file ({', '.join(ACCEPTED_EXTENSIONS)}), at most {megabytes(MAX_FILE_BYTES)}; "
                "its extension decides the format.",
            }
        ),
    ]
    visibility: Visibility | None = None
    reader_roles: list[Role] | None = Field(
        None, description="Repeat the field for several roles; one empty value: none."
    )


class DocumentDelete(Request):
    expected_version: ExpectedVersion


class AskRequest(Request):
    question: str = Field(description=f"The question; at most {MAX_QUESTION_CHARS:,} characters.")


# --- Responses --------------------------------------------------------------------------------


class ErrorDetail(BaseModel):
    code: str = Field(
        description="A machine code: `not_found`, `pack_deleted`, `unauthorized`, `version_conflict`, "
        "`invalid_request`, `rate_limited`, `busy` (503 with `Retry-After`: the database was held by another "
        "change too long; nothing of this request was written), `search_unavailable` (503 with `Retry-After`: a "
        "search index cannot be read; nothing was changed), or an upload refusal's reason."
    )
    message: str = Field(description="The sentence shown to people, naming the limit or reason.")
    current_version: int | None = Field(
        None, description="On a version conflict: the document's version now (0: it does not exist)."
    )


class ErrorResponse(BaseModel):
    error: ErrorDetail


class PackOut(BaseModel):
    slug: str
    title: str
    kind: Literal["generic", "company"]
    company: str | None
    documents: int = Field(description="Live documents in the pack.")


class PackList(BaseModel):
    packs: list[PackOut]


class DocumentSummary(BaseModel):
    id: str
    title: str
    kind: str
    version: int = Field(description="The current version.")
    visibility: Visibility
    reader_roles: list[Role]
    redacted: bool
    updated_at: dt.datetime


class DocumentPage(BaseModel):
    pack: str
    documents: list[DocumentSummary]
    page: int
    per_page: int
    total: int
    next: str | None = Field(description="The next page's address, or null on the last page.")


class FigureOut(BaseModel):
    number: int
    label: str
    url: str = Field(description="The WebP image, under the same permission check as the document.")


class DocumentOut(BaseModel):
    pack: str
    id: str
    title: str
    kind: str
    version: int = Field(description="The revision returned.")
    current_version: int
    sha256: str = Field(description="SHA-256 of `text` encoded as UTF-8.")
    created_at: dt.datetime = Field(description="When this revision was made.")
    visibility: Visibility
    reader_roles: list[Role]
    redacted: bool
    text: str
    figures: list[FigureOut]


class ReplacedBrowserEdit(BaseModel):
    version: int = Field(description="The revision whose text was written in the browser; it stays in the history.")
    edited_by: str | None = Field(description="Its editor's e-mail (null once that user is deleted).")
    edited_at: dt.datetime
    message: str


class WriteResult(BaseModel):
    pack: str
    id: str
    version: int
    sha256: str
    created: bool
    unchanged: bool = Field(description="The text was the same as the current version's: no new revision.")
    visibility: Visibility
    reader_roles: list[Role]
    redacted: bool
    images_kept: int
    images_not_kept: dict[str, int]
    replaced_browser_edit: ReplacedBrowserEdit | None = Field(
        None, description="The current text had been edited in the browser and this write replaced it."
    )


class DeleteResult(BaseModel):
    pack: str
    id: str
    deleted: bool


class SearchHitOut(BaseModel):
    pack: str
    document_id: str
    document_title: str
    version: int
    sha256: str
    page: int | None
    heading_path: str
    line_start: int
    line_end: int
    score: float
    text: str
    grounding: str = Field(description=GROUNDING_HELP)


class SearchOut(BaseModel):
    query: str
    no_evidence: bool
    hits: list[SearchHitOut]


class PackRef(BaseModel):
    slug: str
    title: str


class ReferenceOut(BaseModel):
    n: int
    passage_id: int
    pack: str
    document_id: str
    document_title: str
    version: int
    sha256: str | None
    page: int | None
    heading_path: str
    line_start: int
    line_end: int
    text: str | None = Field(description="The passage exactly as issued; null once the document was deleted.")
    grounding: str | None = Field(description=GROUNDING_HELP)


class CitationOut(BaseModel):
    n: int
    pack: str
    document_id: str
    version: int
    sha256: str | None
    line_start: int
    line_end: int
    grounding: str | None = Field(description=GROUNDING_HELP)


class RunOut(BaseModel):
    run_id: int
    agent: str
    mode: str
    status: Literal[RUN_STATUSES]  # type: ignore[valid-type]
    warnings: list[str]
    answer: str
    answer_format: Literal["markdown", "text"] = Field(
        description="How to show `answer`: a model's answer is Markdown; the built-in extractive answer is the "
        "documents' own text, where a `*` or `_` is a character, never emphasis."
    )
    answer_basis: str
    searched_packs: list[PackRef]
    absent_words: list[str] = Field(
        description="Words of the question that no passage of the searched packs contains, as the user wrote them."
    )
    evidence_gap: dict[str, str | list[str]] = Field(
        description=(
            "Why no evidence was found, besides the absent words; empty when there was evidence. `kind` is "
            "`not_named` (with `names`: identifiers or days no passage found names), `sibling` (with `asked` and "
            "`found`: the closest passages are about `found`, not `asked`), `no_value` (with `value`: the value "
            "asked for that no passage gives, a noun of the question or a kind of value: `name`, `phone number`, "
            "`e-mail address`, `IP address`, `amount of money`, `duration`; and `of`: what the question names it "
            "for), `no_time` (asked when; no passage gives a time, `of`: for what the question names) or "
            "`unreported` (asked "
            "how something went; the passages only say what was to happen)."
        )
    )
    references: list[ReferenceOut] = Field(description="Every passage issued to the agent, numbered `[n]`.")
    cited: list[int]
    document_citations: list[CitationOut] = Field(description="The references the answer cites.")
