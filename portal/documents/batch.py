"""The files of one upload request, each with its outcome.

cairn.js sends one file per request; a browser without JavaScript sends every chosen file
in one. So the upload's body may hold ``MAX_BATCH_BYTES`` of files (every other request one
file's worth, ``MAX_CONTENT_LENGTH``), and each file is read only when it is within the
per-file limit. A batch over that is not read either, but it is still named file by file:
the body is parsed once more, keeping nothing but each file's name and size, so the page
can say which file is over the per-file limit and which was only sent with too many others.
"""

from __future__ import annotations

import os

from flask import current_app, request
from peewee import OperationalError
from werkzeug.datastructures import FileStorage
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.formparser import parse_form_data

from portal import db
from portal.documents.filenames import shown_name
from portal.documents.outcomes import UploadOutcome
from portal.documents.readers import ReaderAccess
from portal.documents.services import upload_file
from portal.errors import Refused
from portal.ingest import limits
from portal.models import Document, Pack, User

UPLOAD_ENDPOINT = "documents.upload"


def init_app(app) -> None:
    """Raise the upload's body limit before anything reads the form: call this before CSRF protection
    is set up, whose check (a ``before_request`` function too) reads it."""

    @app.before_request
    def allow_a_batch_of_files():
        if request.endpoint == UPLOAD_ENDPOINT:
            request.max_content_length = limits.MAX_BATCH_BYTES + limits.REQUEST_OVERHEAD_BYTES


def upload_batch(pack: Pack, user: User, reader_access: ReaderAccess | None = None) -> list[UploadOutcome]:
    """Store each file of the request in ``pack`` (or refuse it), in the order sent, each with ``reader_access``
    (None: each document keeps its own)."""
    files = [f for f in request.files.getlist("files") if f and f.filename]
    if not files:
        return [UploadOutcome(filename="(none)", refused=Refused("no_file", "Choose at least one file to upload."))]
    return [_upload_one(pack, f, user, reader_access) for f in files]


def upload_new_version(
    pack: Pack, document: Document, file: FileStorage | None, expected_version: int, user: User
) -> UploadOutcome:
    """One file as ``document``'s next version, whatever its name; a document moved past
    ``expected_version`` meanwhile raises ``VersionConflict`` and nothing is stored."""
    if file is None or not file.filename:
        return UploadOutcome(filename="(none)", refused=Refused("no_file", "Choose a file to upload."))
    size = _size(file)
    if size > limits.MAX_FILE_BYTES:
        return UploadOutcome(filename=shown_name(file.filename), refused=limits.refuse_too_large(size))
    return upload_file(
        pack,
        file.filename,
        file.read(),
        user,
        content_type=file.mimetype or None,
        expected_version=expected_version,
        doc_id=document.doc_id,
    )


def batch_status(outcomes: list[UploadOutcome]) -> int:
    """200 when every file was stored, else 422."""
    return 200 if all(o.accepted for o in outcomes) else 422


def _upload_one(pack: Pack, file: FileStorage, user: User, reader_access: ReaderAccess | None) -> UploadOutcome:
    size = _size(file)
    if size > limits.MAX_FILE_BYTES:  # refused before it is read (SPEC 3)
        return UploadOutcome(filename=shown_name(file.filename), refused=limits.refuse_too_large(size))
    try:
        return upload_file(
            pack, file.filename, file.read(), user, content_type=file.mimetype or None, reader_access=reader_access
        )
    except OperationalError as error:
        # The files before this one are stored: say so file by file rather than answer the batch with a 503.
        if not db.is_busy(error):
            raise
        return UploadOutcome(filename=shown_name(file.filename), refused=Refused("busy", db.BUSY_MESSAGE))


def _size(file: FileStorage) -> int:
    stream = file.stream
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(0)
    return size


def is_batch_too_large() -> bool:
    """Whether this request's 413 was an upload's body over its limit (Werkzeug raises the same error
    for a form of too many parts)."""
    length, limit = request.content_length, request.max_content_length
    return request.endpoint == UPLOAD_ENDPOINT and (length is None or limit is None or length > limit)


class _Measure:
    """Where a file part of a refused batch goes: nothing is kept but its size."""

    def __init__(self):
        self.size = 0

    def write(self, data: bytes) -> int:
        self.size += len(data)
        return len(data)

    def seek(self, *_args) -> int:
        return 0


def refused_batch() -> list[UploadOutcome]:
    """Every file of a batch over ``MAX_BATCH_BYTES``, refused by name: for its own size when it is over
    the per-file limit, else for being sent with the others. A body too long even to list (over
    ``MAX_LISTED_BATCH_BYTES``, or of unknown length) or not a form of files gets one refusal for all."""
    total = request.content_length
    together = limits.refuse_batch_too_large(total)
    listed = []
    if total is not None and total <= limits.MAX_LISTED_BATCH_BYTES:
        try:
            _stream, _form, files = parse_form_data(
                request.environ,
                stream_factory=lambda **_part: _Measure(),
                max_form_memory_size=current_app.config["MAX_FORM_MEMORY_SIZE"],
                max_content_length=limits.MAX_LISTED_BATCH_BYTES,
                max_form_parts=limits.MAX_FORM_PARTS,
            )
            listed = [f for f in files.getlist("files") if f.filename]
        except RequestEntityTooLarge:  # a field, or the number of parts, over its limit
            listed = []
    if not listed:
        return [UploadOutcome(filename="(the files sent)", refused=together)]
    return [
        UploadOutcome(
            filename=shown_name(f.filename),
            refused=limits.refuse_too_large(f.stream.size) if f.stream.size > limits.MAX_FILE_BYTES else together,
        )
        for f in listed
    ]
