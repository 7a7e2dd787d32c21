"""Describe images: a vision model describes each figure of a document into a new revision.

The model is a fake OpenAI-compatible server over real HTTP (tests/fake_openai.py); the
document is a real Word file with two inline pictures from ../shared/fixtures/uploads.
"""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from fake_openai import FakeOpenAI

from helpers import SHARED_DIR, require_shared_fixtures
from portal import storage
from portal.describing import service
from portal.documents import editing
from portal.documents.services import upload_file
from portal.ingest.markers import figure_markers
from portal.models import DescribeJob, Document, Figure, Revision, Run
from portal.search.service import search_packs

require_shared_fixtures(allow_module_level=True)

FIXTURE = "pandoc_inline_images.docx"
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"


@pytest.fixture
def vision(app):
    with FakeOpenAI() as fake:
        app.config.update(
            CAIRN_VISION_BASE_URL=fake.base_url,
            CAIRN_VISION_API_KEY="vision-key",
            CAIRN_VISION_MODEL="fake-vision",
            CAIRN_VISION_TIMEOUT=5.0,
        )
        yield fake
        app.config["CAIRN_VISION_BASE_URL"] = None


@pytest.fixture
def word(pack, users):
    data = (SHARED_DIR / "fixtures" / "uploads" / FIXTURE).read_bytes()
    outcome = upload_file(pack, FIXTURE, data, users["PlatformAdmin"])
    assert outcome.refused is None and len(outcome.revision.figures) == 2
    return outcome.document


def _describe(client, word, htmx: bool = False):
    headers = {"HX-Request": "true"} if htmx else {}
    return client.post(f"/packs/ops/documents/{word.doc_id}/describe", headers=headers)


def _current(word) -> Revision:
    return Document.get_by_id(word.id).current_revision()


def _first_figure_described(admin, word) -> tuple[DescribeJob, str]:
    """A job started from the page (htmx) and its first step taken: figure 1 described, figure 2 still to come."""
    _describe(admin, word, htmx=True)
    job = DescribeJob.select().order_by(DescribeJob.id.desc()).get()
    step_url = f"/packs/ops/documents/{word.doc_id}/describe/jobs/{job.id}"
    admin.post(step_url, headers={"HX-Request": "true"})
    return job, step_url


def test_descriptions_go_after_their_figures_in_a_new_revision_that_search_finds(client_as, word, vision):
    vision.reply("A red valve labelled ZX-4471 on a blue pipe.", prompt_tokens=1200, completion_tokens=30)
    response = _describe(client_as("PlatformAdmin"), word)
    assert response.status_code == 303
    revision = _current(word)
    assert revision.version == 2
    lines = revision.text.split("\n")
    for number, _label in figure_markers(revision.text):
        marker_line = next(i for i, line in enumerate(lines) if f"[Figure {number}:" in line)
        assert lines[marker_line + 1] == ""
        assert lines[marker_line + 2] == f"Figure {number} description: A red valve labelled ZX-4471 on a blue pipe."
    # The original and both figures are carried over, readable from the new revision's own folder.
    figures = list(Figure.select().where(Figure.revision == revision).order_by(Figure.number))
    assert [f.number for f in figures] == [1, 2] and all("/v2/" in f.path for f in figures)
    assert all(storage.read(f.path) for f in figures)
    assert revision.original_path and "/v2/" in revision.original_path
    hits = search_packs([word.pack], "ZX-4471 valve", limit=5).hits
    assert hits and hits[0].document_id == word.doc_id and "ZX-4471" in hits[0].text
    # Each figure was one call with the image, owned by the requester, with its cost.
    assert len(vision.requests) == 2
    parts = vision.requests[0].body["messages"][0]["content"]
    assert parts[1]["image_url"]["url"].startswith("data:image/webp;base64,")
    runs = list(Run.select().where(Run.mode == "describe").order_by(Run.id))
    assert [r.user.email for r in runs] == ["platformadmin@example.test"] * 2
    # 1,200 input tokens at $0.15 and 30 output tokens at $0.60 per million: $0.000198.
    assert [r.cost_microusd for r in runs] == [198, 198] and runs[0].model == "fake-vision"
    admin = client_as("PlatformAdmin")
    record = admin.get(f"/runs/{runs[0].id}")
    assert record.status_code == 200 and "Describe figure 1 of" in record.get_data(as_text=True)
    assert "cost $0.000198" in record.get_data(as_text=True)
    assert "Describe images" in admin.get("/runs/").get_data(as_text=True)


def test_describing_again_replaces_the_descriptions(client_as, word, vision):
    admin = client_as("PlatformAdmin")
    vision.reply("First description.")
    _describe(admin, word)
    vision.reply("Second description.")
    _describe(admin, word)
    text = _current(word).text
    assert _current(word).version == 3
    assert "First description." not in text
    assert text.count("Figure 1 description: Second description.") == 1
    assert text.count("Figure 2 description: Second description.") == 1


def test_with_htmx_each_step_describes_one_figure_and_shows_progress(client_as, word, vision):
    admin = client_as("PlatformAdmin")
    vision.reply("A chart.")
    first = _describe(admin, word, htmx=True)
    assert first.status_code == 200
    page = first.get_data(as_text=True)
    assert "Describing figure 1 of 2" in page and len(vision.requests) == 0
    job = DescribeJob.get()
    step_url = f"/packs/ops/documents/{word.doc_id}/describe/jobs/{job.id}"
    assert f'hx-post="{step_url}"' in page and 'hx-trigger="load"' in page
    second = admin.post(step_url, headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "Describing figure 2 of 2" in second and "Figure 1: described, 8 characters." in second
    assert _current(word).version == 1  # nothing written until the last figure
    last = admin.post(step_url, headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "Described 2 of 2 figures." in last and "Version 2 holds 2 of 2 figure descriptions." in last
    assert "hx-trigger" not in last
    # A step asked again (a second tab, a retry) calls nothing more.
    again = admin.post(step_url, headers={"HX-Request": "true"})
    assert again.status_code == 200 and len(vision.requests) == 2 and _current(word).version == 2


def test_a_timeout_a_refusal_and_a_too_long_answer(app, client_as, word, vision):
    admin = client_as("PlatformAdmin")
    app.config["CAIRN_VISION_TIMEOUT"] = 0.5
    vision.reply_after(30, "too late")
    _describe(admin, word)
    job = DescribeJob.select().order_by(DescribeJob.id.desc()).get()
    assert job.status == "nothing_written" and _current(word).version == 1
    assert job.notes[0] == "Figure 1: not described: timeout after 0.5 s."
    assert "No description was written" in job.message
    assert Run.select().where((Run.mode == "describe") & (Run.status == "stopped")).count() == 2

    vision.reset()
    app.config["CAIRN_VISION_TIMEOUT"] = 5.0
    vision.reply_refusal("I can't help with describing this image.")
    _describe(admin, word)
    job = DescribeJob.select().order_by(DescribeJob.id.desc()).get()
    assert job.notes[0] == "Figure 1: not described: the model refused: I can't help with describing this image.."
    assert job.status == "nothing_written" and _current(word).version == 1

    vision.reply("word " * 600)  # 3,000 characters
    _describe(admin, word)
    revision = _current(word)
    description = next(line for line in revision.text.split("\n") if line.startswith("Figure 1 description: "))
    kept = description.removeprefix("Figure 1 description: ")
    assert len(kept) <= 1000 and kept.endswith("…")
    run = Run.select().where(Run.mode == "describe").order_by(Run.id.desc()).get()
    assert run.status == "completed_with_warning" and "cut to 1,000 characters" in run.warnings[0]


def test_a_reply_whose_numbers_python_cannot_use_is_a_failed_call_or_a_bounded_cost_never_a_500(
    app, client_as, word, vision
):
    """A vision reply is input from outside: a number of more than 4,300 digits made the reply unreadable
    (ValueError), and usage counts past any real call made the cost overflow a float (OverflowError); each step
    answered 500. The first is a failed call, the second counts as the most a count can be."""
    app.config["PROPAGATE_EXCEPTIONS"] = False  # a 500 the way a served portal answers one
    admin = client_as("PlatformAdmin")
    digits = b"9" * 5000
    vision.reply_raw(
        b'{"choices": [{"message": {"content": "A valve."}}], "usage": {"prompt_tokens": ' + digits + b"}}"
    )
    assert _describe(admin, word).status_code == 303
    job = DescribeJob.get()
    assert job.notes[0] == "Figure 1: not described: malformed response: not JSON."
    assert job.status == "nothing_written" and _current(word).version == 1

    vision.reply("A valve.", prompt_tokens=10**400, completion_tokens=10**30)
    assert _describe(admin, word).status_code == 303
    # Counted as 2,147,483,647 tokens each way at $0.15 and $0.60 a million: the monthly cap stops the second call.
    costs = [r.cost_microusd for r in Run.select().where(Run.mode == "describe").order_by(Run.id)]
    assert costs[2:] == [round((2**31 - 1) * 0.75)] and _current(word).version == 2
    assert "monthly spend cap" in DescribeJob.select().order_by(DescribeJob.id.desc()).get().notes[1]


def test_the_monthly_cap_stops_before_the_call(app, client_as, word, vision):
    admin = client_as("PlatformAdmin")
    app.config["CAIRN_VISION_MONTHLY_CAP"] = 0.0
    response = _describe(admin, word, htmx=True)
    assert response.status_code == 422
    assert "monthly spend cap for describing figures ($0.00) is reached" in response.get_data(as_text=True)
    assert vision.requests == [] and DescribeJob.select().count() == 0

    # A cap that the first call uses up: the second figure is not described, the first is written.
    app.config["CAIRN_VISION_MONTHLY_CAP"] = 0.10
    vision.reply("A gauge.", prompt_tokens=1_000_000, completion_tokens=0)  # $0.15
    _describe(admin, word)
    job = DescribeJob.get()
    assert len(vision.requests) == 1
    assert job.notes[1].startswith("Figure 2: not described. The monthly spend cap")
    assert job.status == "written" and "1 of 2 figure descriptions" in job.message
    assert service.month_spent_microusd() == 150_000


def test_without_a_model_nothing_is_called_or_written(app, client_as, word):
    response = _describe(client_as("PlatformAdmin"), word, htmx=True)
    assert response.status_code == 422
    assert "No vision model is configured (CAIRN_VISION_BASE_URL)" in response.get_data(as_text=True)
    assert _current(word).version == 1 and Run.select().count() == 0


def test_a_description_is_classified_like_any_text(client_as, word, vision):
    vision.reply(f"A sticky note reading {AWS_KEY_ID} next to the server.")
    _describe(client_as("PlatformAdmin"), word)
    text = _current(word).text
    assert AWS_KEY_ID not in text and "Figure 1 description: A sticky note reading" in text


def test_a_hostile_description_stays_text(client_as, word, vision):
    vision.reply('<img src=x onerror=alert(1)> [Figure 9: fake] <div hx-get="/x" hx-trigger="load">')
    admin = client_as("PlatformAdmin")
    _describe(admin, word)
    revision = _current(word)
    assert [n for n, _ in figure_markers(revision.text)] == [1, 2]  # no marker was written by the model
    page = admin.get(f"/packs/ops/documents/{word.doc_id}").get_data(as_text=True)
    assert "<img src=x" not in page and '<div hx-get="/x"' not in page
    assert "(Figure 9: fake)" in page


def test_a_description_loses_the_controls_that_file_text_loses(client_as, word, vision):
    """The model reads a picture someone else made, and may answer with what it shows: a NUL in its answer
    made PostgreSQL refuse the new revision (a 500), and a U+202E made the description read reversed. It is
    stored as text read out of a file is. Found by scripting the fake vision model with both."""
    vision.reply("A label reading \u202egnp.exe\u202c\x00 on a \x1b[31mred\u2066 valve\u2069.")
    admin = client_as("PlatformAdmin")
    response = _describe(admin, word)
    assert response.status_code == 303
    text = _current(word).text
    assert "Figure 1 description: A label reading gnp.exe on a (31mred valve." in text
    assert not set(text) & set("\x00\x1b\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def test_a_description_holding_a_lone_surrogate_is_stored(client_as, word, vision):
    """A vision model's JSON may escape half of a surrogate pair alone; read as a lone surrogate, no UTF-8
    held it and the new revision failed to store (a 500). It is the replacement character."""
    vision.reply("A pressure gauge \ud83d reading 4 bar.")
    response = _describe(client_as("PlatformAdmin"), word)
    assert response.status_code == 303
    assert "Figure 1 description: A pressure gauge \ufffd reading 4 bar." in _current(word).text


def test_the_document_changed_meanwhile_nothing_is_written(client_as, word, vision, users):
    admin = client_as("PlatformAdmin")
    vision.reply("A chart.")
    job, step_url = _first_figure_described(admin, word)
    other = (SHARED_DIR / "fixtures" / "uploads" / "synthetic-svg-image.docx").read_bytes()
    upload_file(word.pack, FIXTURE, other, users["PlatformAdmin"], doc_id=word.doc_id)
    last = admin.post(step_url, headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "The document changed while its figures were described (it is now version 2); nothing was written" in last
    assert _current(word).version == 2 and "description:" not in _current(word).text


def test_a_document_deleted_as_a_step_reads_its_figure_ends_the_job_never_a_500(client_as, word, vision, monkeypatch):
    """The step found the figure's row, then another administrator's deletion committed and removed the file
    before the step read it: FileNotFoundError, a 500, and a step claimed but never recorded. The deletion is
    made at that moment (the figure's file about to be read); the step says the version is gone and stops."""
    admin = client_as("PlatformAdmin")
    vision.reply("A chart.")
    _describe(admin, word, htmx=True)
    job = DescribeJob.get()
    read = storage.read

    def deleted_first(relative: str) -> bytes:
        monkeypatch.setattr(storage, "read", read)
        editing.delete_document(Document.get_by_id(word.id), 1)
        return read(relative)

    monkeypatch.setattr(storage, "read", deleted_first)
    step = admin.post(f"/packs/ops/documents/{word.doc_id}/describe/jobs/{job.id}", headers={"HX-Request": "true"})

    assert step.status_code == 200, step.get_data(as_text=True)[:500]
    assert "Figure 1: not described: version 1 is no longer kept." in step.get_data(as_text=True)
    job = DescribeJob.get_by_id(job.id)
    assert (job.status, vision.requests) == ("nothing_written", [])
    assert Document.get_by_id(word.id).is_deleted


@pytest.mark.parametrize("role", ["AgentBuilder", "Auditor", "Member"])
def test_only_administrators_describe(client_as, word, vision, role):
    client = client_as(role)
    assert _describe(client, word).status_code == 404
    assert vision.requests == []
    page = client_as("PlatformAdmin").get(f"/packs/ops/documents/{word.doc_id}").get_data(as_text=True)
    assert "Describe images" in page
    if role != "Member":
        staff_page = client.get(f"/packs/ops/documents/{word.doc_id}").get_data(as_text=True)
        assert "Describe images" not in staff_page


def test_without_a_model_the_page_says_so_instead_of_offering_the_button(client_as, word, app):
    """The button was offered with no model set, and every press was refused: the page now says so first."""
    page = client_as("PlatformAdmin").get(f"/packs/ops/documents/{word.doc_id}").get_data(as_text=True)
    panel = BeautifulSoup(page, "html.parser").select_one(".describe-images")
    assert panel.select_one("form") is None and panel.select_one("button") is None
    assert panel.select_one(".no-vision-model").text.startswith(
        "No vision model is configured (CAIRN_VISION_BASE_URL), so figures cannot be described here yet."
    )


def test_with_a_model_the_button_is_offered(client_as, word, vision):
    page = client_as("PlatformAdmin").get(f"/packs/ops/documents/{word.doc_id}").get_data(as_text=True)
    panel = BeautifulSoup(page, "html.parser").select_one(".describe-images")
    assert panel.select_one("form button").text == "Describe images"
    assert panel.select_one(".no-vision-model") is None


@pytest.mark.parametrize("deleted", ["document", "pack"])
def test_a_job_whose_document_is_deleted_midway_ends_and_writes_nothing(client_as, word, vision, deleted):
    """Its step URL answers 404 once the document is gone, so no step would ever end the job."""
    from portal.packs.deletion import delete_pack

    admin = client_as("PlatformAdmin")
    vision.reply("A chart.")
    job, step_url = _first_figure_described(admin, word)
    assert DescribeJob.get_by_id(job.id).status == "running"
    if deleted == "document":
        editing.delete_document(word, expected_version=1)
    else:
        pack = word.pack
        delete_pack(None, pack, confirmed_generation=pack.index_generation)
    ended = DescribeJob.get_by_id(job.id)
    assert (ended.status, ended.message) == ("nothing_written", "The document was deleted; nothing was written.")
    assert ended.finished_at is not None
    assert admin.post(step_url, headers={"HX-Request": "true"}).status_code == 404
    assert len(vision.requests) == 1


def test_describing_again_while_a_job_runs_carries_that_job_on_and_never_buys_a_figure_twice(
    app, client_as, word, vision
):
    """A reloaded or second page pressing Describe images again gets the running job, and steps it on (its steps
    claim figures one by one): a second job would describe, and pay for, every figure again. A figure claimed by a
    request that was killed is described once the job has not moved for longer than a model call may take."""
    import datetime as dt

    admin = client_as("PlatformAdmin")
    vision.reply("A chart.")
    first, _step_url = _first_figure_described(admin, word)
    again = _describe(admin, word, htmx=True)
    assert again.status_code == 200 and "Describing figure 2 of 2" in again.get_data(as_text=True)
    assert DescribeJob.select().count() == 1 and len(vision.requests) == 1
    # the request of figure 2 claimed it and died: the job waits as long as a model call may take
    DescribeJob.update(done=2).where(DescribeJob.id == first.id).execute()
    assert service.step(DescribeJob.get_by_id(first.id)).status == "running"
    assert "Waiting for the last 1 of 2 figures" in _describe(admin, word, htmx=True).get_data(as_text=True)
    waited = float(app.config["CAIRN_VISION_TIMEOUT"]) + service.MOVE_MARGIN_SECONDS + 1
    DescribeJob.update(updated_at=DescribeJob.get_by_id(first.id).last_moved - dt.timedelta(seconds=waited)).execute()
    resumed = _describe(admin, word)  # without JavaScript: the whole job in this request
    assert resumed.status_code == 303 and DescribeJob.select().count() == 1
    ended = DescribeJob.get_by_id(first.id)
    assert (ended.status, ended.message) == ("written", "Version 2 holds 2 of 2 figure descriptions.")
    assert len(vision.requests) == 2  # figure 2 described once, figure 1 not again
    assert _current(word).text.count("description: A chart.") == 2


def test_describing_a_changed_document_ends_the_job_of_its_older_version_and_starts_anew(client_as, word, vision):
    """A job of an older version would write a revision that conflicts: carried on, it described (and paid for) its
    figures only to write nothing. It ends, and a job of the current version starts."""
    admin = client_as("PlatformAdmin")
    vision.reply("A chart.")
    first, _step_url = _first_figure_described(admin, word)
    # the document changes meanwhile: a new file under its name (another Word file with a figure), version 2
    new_data = (SHARED_DIR / "fixtures" / "uploads" / "synthetic-svg-image.docx").read_bytes()
    assert upload_file(word.pack, FIXTURE, new_data, None, expected_version=1).refused is None
    started = _describe(admin, word, htmx=True)
    assert started.status_code == 200
    ended = DescribeJob.get_by_id(first.id)
    assert ended.status == "nothing_written" and "nothing was written" in ended.message
    newest = DescribeJob.select().order_by(DescribeJob.id.desc()).get()
    assert newest.id != first.id and newest.base_version == 2 and newest.status == "running"
