"""A pack's vocabulary: the words readers type for what its documents name otherwise.

Real parts throughout: the Lucene analyzer, a migrated database, real indexes, the ask path and the pack form.
"""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from helpers import cli_runner
from portal.agents.services import create_agent
from portal.answers.extractive import NO_EVIDENCE_ANSWER, extractive_sentences
from portal.answers.references import Reference
from portal.documents import services as documents
from portal.errors import Refused
from portal.models import AuditLog, Pack
from portal.packs.services import create_pack, edit_pack
from portal.runs.ask import ask
from portal.search import vocabulary
from portal.search.analysis import TermCache
from portal.search.service import search_packs

LABELS = (
    b"# Label printing\n\n## Label printer jams\n\n"
    b"When a label printer stops, clear the output device in SPAD and reprint the delivery labels.\n"
)
STUCK = "What do I do about a stuck sticker machine?"  # no word of it is in the documents
OTHER = b"# Spool\n\nDelete old spool requests with RSPO0041 every night.\n"
STICKERS = "sticker => label\nsticker printer => label printer, output device\n"


@pytest.fixture
def labels(app, pack):
    documents.upload_file(pack, "label-printing.md", LABELS, None)
    documents.upload_file(pack, "spool.md", OTHER, None)
    return pack


def _agent(slug="ops-agent"):
    return create_agent(None, slug, "Ops agent", "preferred", None, "You help the operations team.", ["ops"])


# --- what a vocabulary is ------------------------------------------------------------------


def test_entries_comments_and_blank_lines_are_read():
    entries = vocabulary.parsed("# printing\n\nsticker => label\n  Sticker Printer =>  label printer , SPAD \n")
    assert entries == [
        vocabulary.Entry(("sticker",), ("label",)),
        vocabulary.Entry(("sticker", "printer"), ("label printer", "SPAD")),
    ]


@pytest.mark.parametrize(
    "text, problem",
    [
        ("sticker => label\nsticker label", "line 2 has no '=>'"),
        (" => label", "line 1 names no user words"),
        ("sticker =>  ,", "line 1 names no document words"),
        ("a very long user phrase => label", "line 1 has more than 4 user words"),
        ("sticker => a, b, c, d, e, f", "line 1 has more than 5 document words"),
        ("sticker => label => printer", "line 1 has more than one '=>'"),
    ],
)
def test_a_line_that_is_no_entry_is_refused_by_its_number(text, problem):
    with pytest.raises(Refused) as refused:
        vocabulary.parsed(text)
    assert refused.value.reason == "bad_vocabulary" and problem in refused.value.message


def test_a_vocabulary_over_its_length_is_refused():
    with pytest.raises(Refused, match="at most 50,000 characters"):
        vocabulary.parsed("a => b\n" * 8_000)


def test_the_user_s_words_stand_for_the_document_words_in_the_singular_or_plural_and_in_phrases(app):
    words = vocabulary.Vocabulary([STICKERS + "invoice => billing\ninvoice run => billing run\n"])
    # a word on both sides ("printer") stands for itself
    assert words.synonyms("Why do the sticker printers jam?") == {"sticker": frozenset({"label", "output", "devic"})}
    # both the phrase and the word it starts with; "run" is typed, so it is no expansion
    assert words.synonyms("When is the invoice run?") == {"invoic": frozenset({"bill"})}
    assert words.synonyms("Invoices missing") == {"invoic": frozenset({"bill"})}
    # a document word typed as well expands nothing, and neither does a word inside another
    assert words.synonyms("invoice billing") == {}
    assert words.synonyms("stickerbooks and invoiced") == {}


def test_the_longest_entry_reads_its_words_once(app):
    words = vocabulary.Vocabulary(["data warehouse => BW\nwarehouse => distribution centre\n"])
    assert words.synonyms("Why did the data warehouse show no figures?") == {
        "data": frozenset({"bw"}),
        "warehous": frozenset({"bw"}),
    }
    assert words.synonyms("Which warehouse ships it?") == {"warehous": frozenset({"distribut", "centr"})}


# --- search, the evidence check and the answer --------------------------------------------


def test_without_a_vocabulary_the_user_s_word_finds_nothing(labels):
    assert search_packs([labels], STUCK).hits == []
    assert ask(_agent(), None, STUCK).answer == NO_EVIDENCE_ANSWER


def test_the_pack_s_vocabulary_finds_answers_and_cites_the_document_words(labels):
    edit_pack(None, labels, labels.title, labels.description, STICKERS)

    hits = search_packs([Pack.get_by_id(labels.id)], STUCK).hits
    assert [hit.document_id for hit in hits] == ["label-printing"]

    run = ask(_agent(), None, STUCK)
    assert "clear the output device in SPAD and reprint the delivery labels" in run.answer
    assert [r.document_id for r in run.references() if r.n in run.cited] == ["label-printing"]
    # the note naming the words no document mentions leaves out the one the vocabulary read
    assert run.absent_words == ["stuck", "machine"]


def test_a_pack_s_vocabulary_serves_only_searches_of_that_pack(labels, other_pack):
    documents.upload_file(other_pack, "labels-too.md", LABELS.replace(b"Label printing", b"Labels"), None)
    edit_pack(None, labels, labels.title, labels.description, STICKERS)
    assert search_packs([Pack.get_by_id(other_pack.id)], STUCK).hits == []
    assert search_packs([Pack.get_by_id(other_pack.id), Pack.get_by_id(labels.id)], STUCK).hits  # together: theirs


# --- keeping one --------------------------------------------------------------------------


def test_the_pack_page_tells_its_editors_how_many_entries_its_vocabulary_has(labels, client_as):
    def said(role):
        page = BeautifulSoup(client_as(role).get("/packs/ops").get_data(as_text=True), "html.parser")
        return [p.get_text(" ", strip=True) for p in page.select("p.muted") if "ocabulary" in p.get_text()]

    assert said("PlatformAdmin") == ["No vocabulary: questions are searched by their own words only."]
    edit_pack(None, labels, labels.title, labels.description, STICKERS + "# a comment\n")
    assert said("PlatformAdmin") == ["Vocabulary: 2 entries naming the words readers type for the documents' words."]
    assert said("Auditor") == []  # readers who cannot edit the pack are not told


def test_the_pack_form_saves_a_vocabulary_and_audits_its_count_of_entries(labels, client_as):
    admin = client_as("PlatformAdmin")
    page = BeautifulSoup(admin.get("/packs/ops/edit").get_data(as_text=True), "html.parser")
    form = {field["name"]: field.get("value", "") for field in page.select("form input[type=hidden]")}
    response = admin.post(
        "/packs/ops/edit", data={**form, "title": "Operations", "description": "", "vocabulary": STICKERS}
    )
    assert response.status_code == 303
    assert Pack.get_by_id(labels.id).vocabulary == STICKERS.strip()
    entry = AuditLog.select().where(AuditLog.action == "pack.update").get()
    assert entry.detail["changed"]["vocabulary"] == ["0 entries", "2 entries"]


def test_a_bad_vocabulary_line_is_named_and_nothing_is_saved(labels, client_as):
    admin = client_as("PlatformAdmin")
    response = admin.post(
        "/packs/ops/edit",
        data={"title": "Renamed", "description": "", "vocabulary": "sticker => label\nsticker label printer"},
    )
    text = BeautifulSoup(response.get_data(as_text=True), "html.parser")
    assert response.status_code == 422
    # under the field, which takes the focus and is described by it (as on the new-pack form)
    assert "Vocabulary line 2 has no '=>'" in text.select_one("#vocabulary-error").get_text()
    assert text.select_one("textarea#vocabulary").has_attr("autofocus")
    assert "sticker label printer" in text.select_one("textarea#vocabulary").get_text()  # what was typed stays
    pack = Pack.get_by_id(labels.id)
    assert (pack.title, pack.vocabulary) == ("Operations", "")


def test_the_command_line_creates_a_pack_with_a_vocabulary_file(app, tmp_path):
    path = tmp_path / "words.txt"
    path.write_text(STICKERS, encoding="utf-8")
    run = cli_runner(app)
    run("packs", "create", "printing", "--title", "Printing", "--vocabulary", str(path))
    assert Pack.get(Pack.slug == "printing").vocabulary == STICKERS.strip()

    path.write_bytes(b"sticker => \xff\n")
    result = run("packs", "create", "printing-2", "--title", "P", "--vocabulary", str(path), ok=False)
    assert "not UTF-8 text" in result.stderr
    assert not Pack.select().where(Pack.slug == "printing-2").exists()


def test_a_pack_made_with_a_bad_vocabulary_is_not_made(app):
    with pytest.raises(Refused, match="line 1"):
        create_pack("printing", "Printing", "generic", vocabulary="sticker label")
    assert not Pack.select().where(Pack.slug == "printing").exists()


def test_a_hyphen_parts_words_on_both_sides_and_plurals_are_read_as_people_write_them(app):
    words = vocabulary.Vocabulary(["sign-off => approve\ngo live => go-live\nprocess => job\n"])
    assert words.synonyms("who gives the sign off?") == {"sign": frozenset({"approv"})}
    assert words.synonyms("who gives the sign-off?") == {"sign": frozenset({"approv"})}
    assert words.synonyms("when did it go-live") == {}  # "go-live" is its own document word
    assert words.synonyms("which processes hang") == {"process": frozenset({"job"})}


def test_an_entry_whose_document_words_no_searched_pack_holds_stands_for_nothing(labels):
    """The note naming the words no document mentions still names the user's word where nothing stands for it."""
    edit_pack(None, labels, labels.title, labels.description, "sticker => barcode")
    run = ask(_agent(), None, STUCK)
    assert run.answer == NO_EVIDENCE_ANSWER
    assert run.absent_words == ["stuck", "sticker", "machine"]


def test_a_stored_vocabulary_a_stricter_rule_would_refuse_still_serves_its_good_lines(labels):
    Pack.update(vocabulary="sticker => label\nthis line is no entry").where(Pack.id == labels.id).execute()
    assert [hit.document_id for hit in search_packs([Pack.get_by_id(labels.id)], STUCK).hits] == ["label-printing"]
    # and the form saves a corrected text (the audit counts the old one's good lines)
    edit_pack(None, Pack.get_by_id(labels.id), labels.title, labels.description, "sticker => label")
    entry = AuditLog.select().where(AuditLog.action == "pack.update").get()
    assert entry.detail["changed"]["vocabulary"] == ["1 entry", "1 entry"]


def test_a_vocabulary_file_loses_its_byte_order_mark_and_control_characters(app, tmp_path):
    path = tmp_path / "words.txt"
    path.write_bytes("\ufeff# printing\r\nsticker\u202e => label\x07\r\n".encode())
    cli_runner(app)("packs", "create", "printing", "--title", "Printing", "--vocabulary", str(path))
    assert Pack.get(Pack.slug == "printing").vocabulary == "# printing\nsticker => label"


def test_the_answerer_reads_a_unit_holding_a_document_word_as_holding_the_user_s_word(app):
    text = (
        "## Labels\n\nClear the output device in SPAD when labels stop.\n\n"
        "## Service\n\nMachines are serviced on Mondays.\n"
    )
    reference = Reference(1, 101, 11, "Printing", "ops", "Ops", 1, None, "", 1, 3, text)
    question = "What do I do about a stuck sticker machine?"
    without = extractive_sentences(question, [reference], TermCache(), max_sentences=1)
    with_it = extractive_sentences(
        question, [reference], TermCache(), max_sentences=1, synonyms={"sticker": frozenset({"label"})}
    )
    assert without == [("Machines are serviced on Mondays.", 1)]
    assert with_it == [("Clear the output device in SPAD when labels stop.", 1)]
