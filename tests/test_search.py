"""portal.search against a real JVM and real Lucene indexes built in a temporary folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from portal.search import jvm
from portal.search.analysis import (
    STOPWORDS,
    TermCache,
    content_terms,
    question_terms,
    with_apostrophes,
    without_question_words,
    written_out,
)
from portal.search.errors import IndexBusy
from portal.search.index import IndexStore
from portal.search.schema import IndexedPassage
from portal.search.searcher import Hit, Searcher, SearchResult, analyze
from portal.search.writer import BULK_RAM_BUFFER_MB, WriterSettings

pytestmark = pytest.mark.usefixtures("java")  # every test here drives Lucene in this process

PROJECT_ROOT = Path(__file__).resolve().parents[1]

OPS_CORPUS = [
    IndexedPassage(
        101,
        "network-setup",
        "ops",
        "Set the proxy host and the proxy port before the first sync.",
        "Network setup",
        "Setup > Network > Proxy",
    ),
    IndexedPassage(
        102,
        "network-setup",
        "ops",
        "A firewall rule must allow outbound HTTPS on port 443.",
        "Network setup",
        "Setup > Network > Firewall",
    ),
    IndexedPassage(
        103,
        "backup-runbook",
        "ops",
        "Nightly backups run at 02:00 and keep 14 days of retention.",
        "Backup runbook",
        "Schedule",
    ),
    IndexedPassage(
        104,
        "backup-runbook",
        "ops",
        "Restore a backup with the restore command; verify checksums after.",
        "Backup runbook",
        "Restore",
    ),
    IndexedPassage(
        105,
        "kerberos-notes",
        "ops",
        "Kerberos tickets expire after ten hours; renew them with kinit.",
        "Kerberos notes",
    ),
    IndexedPassage(
        106,
        "release-notes",
        "ops",
        "Version 4.2 fixes a proxy timeout when the port is closed.",
        "Release notes",
        "4.2",
    ),
]


@pytest.fixture
def store(root) -> IndexStore:
    store = IndexStore(root)
    yield store
    store.close()


@pytest.fixture
def searcher(root) -> Searcher:
    searcher = Searcher(root)
    yield searcher
    searcher.close()


@pytest.fixture
def ops(store) -> IndexStore:
    store.write("ops", add=OPS_CORPUS, generation=1)
    return store


def passage(passage_id: int, document_id: str, pack: str, text: str, title: str = "") -> IndexedPassage:
    return IndexedPassage(passage_id, document_id, pack, text, title)


def ids(result: SearchResult) -> list[int]:
    return [hit.passage_id for hit in result.hits]


# --- analysis and laziness ---------------------------------------------------


def test_analyze_uses_the_english_analyzer():
    assert analyze("Running dogs and cats") == ["run", "dog", "cat"]
    assert analyze("the and of, to!") == []


def test_negations_and_contractions_are_question_words_however_typed():
    """ "couldn't" was a term no passage holds, the rarest there is: it outweighed the subject of the question."""
    assert question_terms("why couldnt anybody log on? it didn't run, won’t start, can't post. what's up") == [
        "log",
        "run",
        "start",
        "post",
    ]
    assert question_terms("the partner's IDocs and O'Brien's ZTW_DON'T") == ["partner", "idoc", "o'brien", "ztw_don't"]


def test_a_text_holds_the_words_its_identifiers_are_built_of_and_a_question_searches_as_typed():
    """Users ask for Z_FI_BANK_STMT_IMPORT as "the bank statement import job"; codes (FI, TW10) and the
    namespace that opens a customer object (Z, ZTW) are no words."""
    assert content_terms("Job Z_FI_BANK_STMT_IMPORT and ZTW_LE_LABEL_PRINT, see rdisp/rfc_max_wprun_time.") == [
        "job",
        "z_fi_bank_stmt_import",
        "ztw_le_label_print",
        "see",
        "rdisp",
        "rfc_max_wprun_tim",
        "bank",
        "stmt",
        "import",
        "label",
        "print",
        "rfc",
        "maximum",
        "wprun",
        "time",
    ]
    assert content_terms("Z_MM_MRP_LIVE_TW10 ran.") == ["z_mm_mrp_live_tw10", "ran", "mrp", "live"]
    assert content_terms("YEAR_END_CLOSE") == ["year_end_clos", "year", "end", "close"]  # YEAR is a word
    assert question_terms("when does Z_FI_BANK_STMT_IMPORT run") == ["z_fi_bank_stmt_import", "run"]


def test_mean_is_searched_a_meaning_column_is_what_a_question_what_something_means_asks():
    """ "What does IDoc status 51 mean?": the runbook's table row "51 | Application document not posted" is in
    a "Meaning" column, while many passages name status 51 more often; the evidence check reads "mean" as the
    question's form (``evidence._form_spans``)."""
    assert question_terms("What does IDoc status 51 mean?") == ["idoc", "statu", "51", "mean"]


def test_contractions_typed_without_an_apostrophe_get_theirs_and_words_stay():
    assert (
        with_apostrophes("whats the limit, it DOESNT post and isnt it")
        == "what's the limit, it DOESN'T post and isn't it"
    )
    # words of their own stay as typed: a possessive, a slant, a habit, an id
    assert with_apostrophes("its variant, the cant, wont, ID and well") == "its variant, the cant, wont, ID and well"
    assert with_apostrophes("dont-care flag_whats") == "dont-care flag_whats"  # part of a longer name
    assert with_apostrophes("Who handles IM tickets? im") == "Who handles IM tickets? im"  # inventory management


def test_short_forms_people_type_are_written_out_as_documents_write_them():
    """ "docs" is in no passage: it weighed as the rarest term there is and outweighed the question's subject."""
    assert question_terms("max number of billing docs per run in prod? thx") == [
        "maximum",
        "number",
        "bill",
        "document",
        "per",
        "run",
        "product",
    ]
    assert question_terms("when does the k4p client cert expire") == ["k4p", "client", "certif", "expir"]
    # a month and a quarter as people shorten them, as documents write them ("DEC 15,2" is an ABAP type)
    assert question_terms("billing in Feb and sept, end of Q1") == [
        "bill",
        "februari",
        "septemb",
        "end",
        "first",
        "quarter",
    ]
    assert question_terms("a DEC field") == ["dec", "field"]
    # question words mistyped are question words (browser walkthrough: "No document searched mentions "wich""); a
    # misspelling that is a word of its own stays
    assert question_terms("wich job overran and whay, waht does teh log say") == ["job", "overran", "log"]
    assert question_terms("what dose of wat") == ["dose", "wat"]
    assert question_terms("Which WHT code applies?") == ["wht", "code", "appli"]  # in capitals: a name (review)
    # "now" says only that the present is asked, like "still" or "already" (a held-out question's "run now" matched
    # "the template now asks")
    assert question_terms("how often does the cleanup job run now") == ["often", "cleanup", "job", "run"]
    assert question_terms("the APR rate on SEP") == ["apr", "rate", "sep"]  # in capitals: the names of things
    # a return code as people type it ("RC 16", "RC8", "rc=12"); "RC" alone may be a root cause and stays
    assert question_terms("an import came back with RC 16") == ["import", "came", "back", "return", "code", "16"]
    assert question_terms("ended with RC8, then rc=12") == ["end", "return", "code", "8", "return", "code", "12"]
    assert question_terms("the RC of INC-2026-0203") == ["rc", "inc", "2026", "0203"]
    # a product line names the kind of system, not a word to find ("4" is in every count and date)
    assert question_terms("availability of the production S/4 system, and of BW/4?") == ["avail", "product", "system"]
    assert question_terms("locked in s4 prod after the pw rotation") == ["lock", "product", "password", "rotat"]
    assert question_terms("the app03 host and rdisp/max_wprun_time") == ["app03", "host", "rdisp", "max_wprun_tim"]
    assert question_terms("what does an interface id look like according to the spec?") == ["interfac", "id", "specif"]
    assert question_terms("just bump the params vs the tcode's defaults in env?") == [
        "bump",
        "paramet",
        "transact",
        "code",
        "default",
        "environ",
    ]
    # a short form inside a name stays as typed; a sentence may end after one
    assert written_out("the db.sql script and rc8.log in prod.") == "the db.sql script and rc8.log in production."


def test_question_words_are_blanked_exactly_as_by_an_alternation_of_the_stopwords():
    """The word-by-word lookup gives what the plain (slower) case-insensitive alternation gives: a
    stopword, alone or with a clitic ("what's", "couldn't", "can't"), never inside a longer word."""
    words = "|".join(sorted(STOPWORDS))
    alternation = re.compile(
        rf"(?<![\w.-])(?<!\w['’])(?:(?:{words})(?:['’](?:s|re|ve|d|ll|m))?|(?:{words}|ca|wo|sha)n['’]t)"
        r"(?![\w-])(?!['’]\w)",
        re.I,
    )
    corpus = [path.read_text() for path in (PROJECT_ROOT / "portal" / "demo" / "corpus").rglob("*.md")]
    tricky = [
        "What's the Z_WHO of the-end? a.b THE x-the the_x 1the The. -the do- İs ſo KNOW",
        "Why does the job not run, and WHEN was it moved?",
        "why couldnt it run? It didn't, we can't tell, it won’t start, what’s 'the' x'the the'x O'Brien's",
    ]
    for text in corpus + tricky:
        assert without_question_words(text) == alternation.sub(" ", text)
    assert without_question_words("How do I restart Z_WHO in SM37?") == "      restart Z_WHO   SM37?"


def test_importing_portal_search_does_not_start_the_jvm():
    script = (
        "import portal.search, portal.search.index, portal.search.searcher, portal.search.readers\n"
        "from portal.search import jvm\n"
        "assert not jvm.jvm_started()\n"
        "jvm.J()\n"
        "assert jvm.jvm_started()\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""


def test_threads_that_detach_leave_no_java_thread_behind(ops, searcher):
    thread_bean = jvm.J().JManagementFactory.getThreadMXBean()

    def search_then_detach():
        try:
            searcher.search(["ops"], "kerberos")
        finally:
            jvm.detach_current_thread()

    before = thread_bean.getThreadCount()
    for _ in range(20):
        thread = threading.Thread(target=search_then_detach)
        thread.start()
        thread.join()
    assert thread_bean.getThreadCount() <= before + 1


# --- searching ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("proxy port", [101, 106, 102]),
        ("backup restore", [104, 103]),
        ("kerberos", [105]),
        ("firewall HTTPS port", [102, 106, 101]),
        ("proxies", [101, 106]),
    ],
)
def test_exact_passage_ids(ops, searcher, query, expected):
    result = searcher.search(["ops"], query)
    assert ids(result) == expected
    assert result.total_matches == len(expected)
    assert result.no_evidence is False


def test_hits_are_plain_python_values(ops, searcher):
    hit = searcher.search(["ops"], "kerberos").hits[0]
    assert hit == Hit(passage_id=105, document_id="kerberos-notes", pack="ops", score=hit.score)
    assert type(hit.passage_id) is int and type(hit.score) is float and hit.score > 0


def test_title_and_heading_path_are_searched(ops, searcher):
    assert ids(searcher.search(["ops"], "schedule")) == [103]
    assert ids(searcher.search(["ops"], "runbook")) == [104, 103]


@pytest.mark.parametrize(
    "query",
    [
        "AND OR NOT ( ) * ? ~ ^ : [ ] { } \\ / title:foo +bar -baz",
        '"unbalanced quote +bar -baz',
        "bar~2 baz^10 [bar TO baz] {bar TO baz} /ba.*/ ba?",
    ],
)
def test_lucene_syntax_in_a_query_is_just_words(store, searcher, query):
    store.write(
        "ops",
        add=[
            passage(1, "bars", "ops", "The bar counter opens at noon."),
            passage(2, "bazaar", "ops", "Every baz widget is blue."),
            passage(3, "other", "ops", "Nothing to see here."),
        ],
        generation=1,
    )
    result = searcher.search(["ops"], query)
    assert sorted(ids(result)) == [1, 2]


def test_syntax_characters_alone_find_nothing(ops, searcher):
    for query in ["*", "?", "( ) [ ] { }", '"', "\\", "-", "+", "~", "^", "AND OR NOT", "prox*"]:
        result = searcher.search(["ops"], query)
        assert result == SearchResult(hits=[], no_evidence=True, total_matches=0), query


def test_no_matching_term_gives_no_evidence(ops, searcher):
    assert searcher.search(["ops"], "zebra quantum") == SearchResult(hits=[], no_evidence=True, total_matches=0)


@pytest.mark.parametrize("query", ["the and of", "", "   ", "!!!"])
def test_query_without_terms_gives_no_evidence(ops, searcher, query):
    assert searcher.search(["ops"], query) == SearchResult(hits=[], no_evidence=True, total_matches=0)


def test_missing_packs_are_skipped(ops, searcher):
    assert searcher.search(["ops", "never-written"], "proxy") == searcher.search(["ops"], "proxy")
    assert searcher.search(["never-written"], "proxy").no_evidence is True
    assert searcher.search([], "proxy").no_evidence is True


def test_query_longer_than_lucenes_clause_limit(store, searcher):
    store.write(
        "ops",
        add=[passage(1, "words", "ops", "w0007 appears here"), passage(2, "other", "ops", "nothing relevant")],
        generation=1,
    )
    query = " ".join(f"w{n:04d}" for n in range(1500))
    assert ids(searcher.search(["ops"], query)) == [1]


def test_slugs_that_could_escape_the_index_folder_are_refused(store, searcher):
    for slug in ["../etc", "a/b", ".hidden", ""]:
        with pytest.raises(ValueError):
            searcher.search([slug], "proxy")
        with pytest.raises(ValueError):
            store.write(slug, add=[], generation=1)


# --- ranking independence ----------------------------------------------------


def test_other_packs_do_not_change_scores_order_or_counts(ops, store, searcher):
    before = searcher.search(["ops"], "proxy port timeout")
    store.write(
        "elsewhere",
        add=[
            passage(1000 + n, f"noise-{n // 10}", "elsewhere", f"proxy port timeout proxy note {n}") for n in range(300)
        ],
        generation=1,
    )

    after = searcher.search(["ops"], "proxy port timeout")
    assert after == before
    assert [hit.score for hit in after.hits] == [hit.score for hit in before.hits]
    assert after.total_matches == before.total_matches == 3

    combined = searcher.search(["ops", "elsewhere"], "proxy port timeout")
    assert combined.total_matches == 303
    ops_scores_combined = {
        hit.passage_id: hit.score for hit in searcher.search(["ops", "elsewhere"], "proxy port timeout", limit=400).hits
    }
    assert ops_scores_combined[101] != before.hits[0].score


def test_alternating_pack_sets_each_get_their_own_results(store, searcher):
    """Cached searchers over different pack sets must never answer for one another."""
    store.write("one", add=[passage(n, f"one-{n}", "one", "shared term") for n in range(1, 4)], generation=1)
    store.write("two", add=[passage(n, f"two-{n}", "two", "shared term") for n in range(11, 16)], generation=1)
    for _ in range(3):
        assert ids(searcher.search(["one"], "shared")) == [1, 2, 3]
        assert ids(searcher.search(["two"], "shared")) == [11, 12, 13, 14, 15]
        assert sorted(ids(searcher.search(["one", "two"], "shared"))) == [1, 2, 3, 11, 12, 13, 14, 15]


def test_pack_order_in_the_request_does_not_matter(ops, store, searcher):
    store.write("second", add=[passage(7, "s", "second", "proxy port in the second pack")], generation=1)
    assert searcher.search(["second", "ops"], "proxy port") == searcher.search(["ops", "second"], "proxy port")


# --- diversity cap -------------------------------------------------------------


def write_crowded_pack(store, *, with_other_documents: bool, passages_in_big_document: int = 10):
    """A document whose passages all outrank two others that mention the term once in longer text."""
    big = [
        passage(n, "big", "ops", "retention retention retention policy") for n in range(1, passages_in_big_document + 1)
    ]
    others = [
        passage(9001, "small-a", "ops", "The retention of mail is covered by a different policy document entirely."),
        passage(9002, "small-b", "ops", "Logs are rotated weekly; see retention settings in the guide's appendix."),
    ]
    store.write("ops", add=big + (others if with_other_documents else []), generation=1)


def test_at_most_three_passages_of_one_document(store, searcher):
    write_crowded_pack(store, with_other_documents=True)
    result = searcher.search(["ops"], "retention")
    assert ids(result) == [1, 2, 3, 9001, 9002]
    assert result.total_matches == 12


def test_cap_is_configurable(store, searcher):
    write_crowded_pack(store, with_other_documents=True)
    result = searcher.search(["ops"], "retention", per_document_cap=1)
    assert sorted(hit.document_id for hit in result.hits) == ["big", "small-a", "small-b"]


def test_cap_is_lifted_when_only_one_document_matches(store, searcher):
    write_crowded_pack(store, with_other_documents=False)
    result = searcher.search(["ops"], "retention")
    assert [hit.document_id for hit in result.hits] == ["big"] * 8
    assert ids(result) == [1, 2, 3, 4, 5, 6, 7, 8]


def test_cap_with_more_matches_than_are_scanned(store, searcher):
    write_crowded_pack(store, with_other_documents=False, passages_in_big_document=1200)
    alone = searcher.search(["ops"], "retention")
    assert [hit.document_id for hit in alone.hits] == ["big"] * 8

    store.write("ops", add=[passage(9001, "small-a", "ops", "retention " + "filler " * 200)], generation=2)
    crowded = searcher.search(["ops"], "retention")
    assert [hit.document_id for hit in crowded.hits] == ["big"] * 3
    assert crowded.total_is_exact is False and crowded.total_matches >= 1000


def test_same_document_id_in_two_packs_counts_as_two_documents(store, searcher):
    for pack in ("one", "two"):
        store.write(
            pack,
            add=[passage(n + (100 if pack == "two" else 0), "readme", pack, "install install guide") for n in range(5)],
            generation=1,
        )
    result = searcher.search(["one", "two"], "install")
    documents = sorted((hit.pack, hit.document_id) for hit in result.hits)
    assert documents == [("one", "readme")] * 3 + [("two", "readme")] * 3


# --- writing -------------------------------------------------------------------


def test_delete_documents_removes_their_passages(ops, searcher):
    assert ids(searcher.search(["ops"], "backup")) == [104, 103]
    ops.write("ops", delete_documents=["backup-runbook"], generation=2)
    assert searcher.search(["ops"], "backup").no_evidence is True
    assert ids(searcher.search(["ops"], "kerberos")) == [105]


def test_delete_and_add_in_one_write_replaces_a_document(ops, searcher):
    ops.write(
        "ops",
        delete_documents=["kerberos-notes"],
        add=[passage(205, "kerberos-notes", "ops", "Kerberos tickets now last twelve hours.")],
        generation=2,
    )
    assert ids(searcher.search(["ops"], "kerberos")) == [205]


def test_generation_round_trip(store, root):
    assert store.generation("ops") is None
    store.write("ops", add=OPS_CORPUS, generation=5)
    assert store.generation("ops") == 5
    store.write("ops", generation=6)
    assert store.generation("ops") == 6
    store.rebuild("ops", OPS_CORPUS, generation=9)
    assert store.generation("ops") == 9
    assert IndexStore(root).generation("ops") == 9


def test_a_failed_write_writes_nothing(ops, searcher):
    with pytest.raises(ValueError):
        ops.write(
            "ops",
            delete_documents=["kerberos-notes"],
            generation=2,
            add=[passage(301, "new", "ops", "zeppelin one"), passage(302, "new", "other-pack", "zeppelin")],
        )
    assert ops.generation("ops") == 1
    assert searcher.search(["ops"], "zeppelin").no_evidence is True
    assert ids(searcher.search(["ops"], "kerberos")) == [105]


def test_another_store_can_write_after_the_first_finished(ops, root, searcher):
    other_process = IndexStore(root)
    other_process.write("ops", add=[passage(401, "from-cli", "ops", "Zeppelin maintenance window")], generation=2)
    ops.write("ops", add=[passage(402, "from-web", "ops", "Zeppelin hangar doors")], generation=3)
    assert sorted(ids(searcher.search(["ops"], "zeppelin"))) == [401, 402]
    assert other_process.generation("ops") == 3


def test_a_held_lock_makes_the_write_fail_with_index_busy(ops, root):
    directory = jvm.J().JFSDirectory.open(jvm.J().JFile(str(root / "ops")).toPath())
    lock = directory.obtainLock("write.lock")
    try:
        impatient = IndexStore(root, lock_timeout=0.3)
        started = time.monotonic()
        with pytest.raises(IndexBusy) as raised:
            impatient.write("ops", add=[passage(501, "late", "ops", "zeppelin")], generation=2)
        assert time.monotonic() - started >= 0.3
        assert raised.value.pack_slug == "ops"
    finally:
        lock.close()
        directory.close()
    assert ops.generation("ops") == 1
    ops.write("ops", add=[passage(501, "late", "ops", "zeppelin")], generation=2)
    assert ops.generation("ops") == 2


def test_drop_removes_the_index(ops, root, searcher):
    assert searcher.search(["ops"], "kerberos").hits
    ops.drop("ops")
    assert not (root / "ops").exists()
    assert ops.generation("ops") is None
    assert searcher.search(["ops"], "kerberos").no_evidence is True
    ops.drop("ops")


def test_threads_writing_and_searching_different_packs_stay_apart(root, searcher):
    """pyjnius shares method objects between threads: unguarded, this crashed the JVM."""
    store = IndexStore(root)
    failures = []

    def write_pack(pack: str, word: str, first_id: int):
        try:
            for generation in range(1, 7):
                batch = [
                    passage(
                        first_id + generation * 100 + n,
                        f"{pack}-{generation}-{n // 5}",
                        pack,
                        f"{word} passage {n} " + "filler " * 40,
                    )
                    for n in range(30)
                ]
                store.write(pack, add=batch, generation=generation)
        except Exception as error:
            failures.append(error)

    def keep_searching():
        try:
            for _ in range(60):
                searcher.search(["alpha", "beta"], "aardvark bumblebee")
        except Exception as error:
            failures.append(error)

    threads = [
        threading.Thread(target=write_pack, args=("alpha", "aardvark", 0)),
        threading.Thread(target=write_pack, args=("beta", "bumblebee", 100_000)),
        threading.Thread(target=keep_searching),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert searcher.search(["alpha"], "bumblebee").no_evidence is True
    assert searcher.search(["beta"], "aardvark").no_evidence is True
    assert searcher.search(["alpha"], "aardvark").total_matches == 180
    assert searcher.search(["beta"], "bumblebee").total_matches == 180


# --- rebuild and fresh readers ---------------------------------------------------


def test_rebuild_is_invisible_until_it_commits(ops, root, searcher):
    assert ids(searcher.search(["ops"], "kerberos")) == [105]
    seen_during_rebuild = []

    def new_passages():
        for n in range(50):
            if n == 25:
                seen_during_rebuild.append(ids(searcher.search(["ops"], "kerberos")))
                seen_during_rebuild.append(ids(Searcher(root).search(["ops"], "kerberos")))
            yield passage(600 + n, f"new-{n // 5}", "ops", f"zeppelin kerberos replacement {n}")

    assert ops.rebuild("ops", new_passages(), generation=7) == 50
    assert seen_during_rebuild == [[105], [105]]
    result = searcher.search(["ops"], "kerberos", limit=100)
    assert result.total_matches == 50 and min(ids(result)) >= 600
    assert searcher.search(["ops"], "firewall").no_evidence is True


def test_a_rebuild_opens_every_partition_with_the_bulk_buffer_also_one_the_pack_lacked(ops, root, monkeypatch):
    """With Lucene's default buffer of 16 MB a new pack's rebuild flushed a segment every ~5,900 passages with
    vectors, and a vector search costs per segment."""
    buffers = []
    real_config = WriterSettings._writer_config

    def noting_the_buffer(settings, open_mode, ram_buffer_mb):
        config = real_config(settings, open_mode, ram_buffer_mb)
        buffers.append((open_mode, config.getRAMBufferSizeMB()))
        return config

    monkeypatch.setattr(WriterSettings, "_writer_config", noting_the_buffer)
    new_pack = [passage(n, f"doc-{n}", "fresh", f"zeppelin {n}") for n in range(1, 4)]
    assert ops.rebuild("fresh", new_pack, generation=1) == 3  # a pack with no partition yet
    assert ops.rebuild("ops", [passage(9, "again", "ops", "zeppelin")], generation=9) == 1  # one it has
    assert buffers and set(buffers) == {("CREATE", BULK_RAM_BUFFER_MB)}, buffers
    buffers.clear()
    ops.write("ops", add=[passage(10, "more", "ops", "zeppelin")], generation=10)
    assert buffers == [("CREATE_OR_APPEND", 16.0)]  # a write keeps Lucene's default


def test_writes_wait_for_a_rebuild(ops, root):
    impatient = IndexStore(root, lock_timeout=0.2)
    failures = []

    def passages_while_someone_writes():
        yield passage(1, "a", "ops", "zeppelin")
        try:
            impatient.write("ops", add=[passage(2, "b", "ops", "zeppelin")], generation=99)
        except IndexBusy as busy:
            failures.append(busy)

    ops.rebuild("ops", passages_while_someone_writes(), generation=8)
    assert len(failures) == 1
    assert ops.generation("ops") == 8


def test_rebuild_repairs_an_unreadable_index(ops, root, searcher):
    for segments_file in (root / "ops" / "staff").glob("segments_*"):
        segments_file.write_bytes(b"not a lucene commit")
    assert ops.generation("ops") is None
    ops.rebuild("ops", [passage(701, "fresh", "ops", "zeppelin after repair")], generation=3)
    assert ops.generation("ops") == 3
    assert ids(Searcher(root).search(["ops"], "zeppelin")) == [701]


def test_searcher_sees_commits_made_after_it_opened_the_index(ops, searcher):
    assert searcher.search(["ops"], "zeppelin").no_evidence is True
    ops.write("ops", add=[passage(801, "airships", "ops", "zeppelin")], generation=2)
    assert ids(searcher.search(["ops"], "zeppelin")) == [801]


def test_searcher_sees_a_commit_after_the_folder_has_been_quiet(ops, root, searcher):
    """The folder-mtime shortcut must not hide a commit that follows a long quiet period."""
    quiet_since = time.time() - 3600
    os.utime(root / "ops" / "staff", (quiet_since, quiet_since))
    assert searcher.search(["ops"], "zeppelin").no_evidence is True
    assert searcher.search(["ops"], "zeppelin").no_evidence is True
    ops.write("ops", add=[passage(802, "airships", "ops", "zeppelin")], generation=2)
    assert ids(searcher.search(["ops"], "zeppelin")) == [802]


def test_searcher_sees_a_pack_dropped_and_written_again(ops, searcher):
    assert ids(searcher.search(["ops"], "kerberos")) == [105]
    ops.drop("ops")
    ops.write("ops", add=[passage(901, "again", "ops", "kerberos from scratch")], generation=1)
    assert ids(searcher.search(["ops"], "kerberos")) == [901]


def test_search_by_analyzed_terms_matches_the_text_query_and_gives_the_packs_statistics(ops, store, searcher):
    question = "Which proxy port does the proxy use?"
    terms = question_terms(question)
    assert "port" in terms and not {"which", "doe", "does", "the"} & set(terms)
    by_text = searcher.search(["ops"], question)
    by_terms = searcher.search(["ops"], question, terms=terms)
    assert ids(by_terms) == ids(by_text)
    assert [h.score for h in by_terms.hits] == pytest.approx([h.score for h in by_text.hits])
    assert by_terms.passages == len(OPS_CORPUS)
    assert by_terms.doc_freqs["port"] == searcher.search(["ops"], "port", limit=50).total_matches
    assert by_text.doc_freqs == {}  # only asked for with terms

    store.write(
        "elsewhere",
        add=[passage(2000 + n, f"other-{n}", "elsewhere", f"port note {n}") for n in range(5)],
        generation=1,
    )
    alone = searcher.search(["ops"], question, terms=terms)
    assert (alone.passages, alone.doc_freqs) == (by_terms.passages, by_terms.doc_freqs)  # other packs do not count
    both = searcher.search(["ops", "elsewhere"], question, terms=terms)
    assert both.passages == len(OPS_CORPUS) + 5 and both.doc_freqs["port"] == by_terms.doc_freqs["port"] + 5
    unknown = searcher.search(["ops"], "strudel", terms=["strudel"])
    assert unknown.no_evidence and unknown.doc_freqs == {"strudel": 0} and unknown.passages == len(OPS_CORPUS)


def test_term_cache_analyses_many_texts_in_one_call_as_one_at_a_time():
    texts = [
        "How do I restart the stuck jobs?",
        "",
        "Running dogs and cats.",
        "the and of",
        "Post goods issue in VL02N (Z_PP_CONF_IDOC_PROCESS)",
        "What's it got to do with anything?",
    ]
    cache = TermCache()
    cache.prefetch(texts)
    assert [cache._terms[text] for text in texts] == [content_terms(text) for text in texts]
    assert cache("Running dogs and cats.") == ["run", "dog", "cat"]


def test_a_text_analysed_for_one_question_is_not_analysed_again_for_the_next(monkeypatch):
    from portal.search import analysis

    first = TermCache()
    first.prefetch(["Restart the spool cleanup job Z_BC_SPOOL_CLEANUP.", "Check the output queue in SP01."])
    assert first("Post goods issue in VL02N.") == content_terms("Post goods issue in VL02N.")

    def analysed_again(text):
        raise AssertionError(f"analysed again: {text!r}")

    monkeypatch.setattr(analysis, "content_terms", analysed_again)
    second = TermCache()
    second.prefetch(["Check the output queue in SP01.", "Restart the spool cleanup job Z_BC_SPOOL_CLEANUP."])
    assert second("Post goods issue in VL02N.") == first("Post goods issue in VL02N.")
    assert second("Check the output queue in SP01.") == first("Check the output queue in SP01.")
    with pytest.raises(AssertionError, match="analysed again"):
        second("A sentence no question has seen yet.")
