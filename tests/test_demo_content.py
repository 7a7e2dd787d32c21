"""The demo seed's content: corpus shape, catalog rules, evaluation questions, generated Word/PDF.

No database and no JVM: these tests read the files under ``portal/demo`` and the
catalog's plain data, so a broken document or an inconsistent figure is caught
before anybody seeds a portal with it.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

import docx
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

from portal.demo import build_binaries, catalog
from portal.evaluation import questions as questions_module

DOCUMENT_ID_RULE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
ROLES = {"PlatformAdmin", "AgentBuilder", "Auditor", "Member"}
CORPUS_PACK_COUNTS = {
    "company-ams-incident-digests": 30,
    "company-solution-design-fds": 7,
    "company-change-and-downtime-calendar": 6,
    "sap-operations-runbooks": 12,
}
MARKDOWN_DOCUMENTS = [(pack["slug"], document) for pack, document in catalog.iter_documents() if "source" in document]


def _last_line(text: str) -> str:
    return [line for line in text.splitlines() if line.strip()][-1].strip()


def _words(text: str) -> int:
    return len(re.findall(r"\S+", text))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    return build_binaries.build_all(tmp_path_factory.mktemp("demo-binaries"))


@pytest.fixture(scope="module")
def docx_text(built) -> str:
    document = docx.Document(built["build_docx"])
    parts = [paragraph.text for paragraph in document.paragraphs]
    parts += [cell.text for table in document.tables for row in table.rows for cell in row.cells]
    parts += [shape._inline.docPr.get("descr") or "" for shape in document.inline_shapes]
    return "\n".join(parts)


@pytest.fixture(scope="module")
def pdf_pages(built) -> list[str]:
    pdf = pdfium.PdfDocument(built["build_pdf"])
    try:
        return [page.get_textpage().get_text_range() for page in pdf]
    finally:
        pdf.close()


# --- corpus shape ---------------------------------------------------------------------------


def test_corpus_holds_55_documents_in_the_four_operations_packs():
    counts = {slug: len(list((catalog.CORPUS_DIR / slug).glob("*.md"))) for slug in CORPUS_PACK_COUNTS}
    assert counts == CORPUS_PACK_COUNTS
    assert sum(counts.values()) == 55


def test_incident_pack_holds_24_digests_4_problem_records_2_service_reviews():
    stems = [path.stem for path in (catalog.CORPUS_DIR / "company-ams-incident-digests").glob("*.md")]
    assert Counter(stem.split("-")[0] for stem in stems) == {"inc": 24, "prb": 4, "msr": 2}


def test_catalog_has_eleven_packs_seven_of_them_with_one_document():
    assert len(catalog.PACKS) == 11
    assert len({pack["slug"] for pack in catalog.PACKS}) == 11
    single = [pack["slug"] for pack in catalog.PACKS if len(pack["documents"]) == 1]
    assert len(single) == 7
    for slug, count in CORPUS_PACK_COUNTS.items():
        assert len(catalog.pack_by_slug(slug)["documents"]) == count


def test_catalog_lists_exactly_the_files_of_the_corpus_folder():
    listed = {catalog.markdown_path(document) for _, document in MARKDOWN_DOCUMENTS}
    on_disk = set(catalog.CORPUS_DIR.glob("*/*.md"))
    assert listed == on_disk
    for pack_slug, document in MARKDOWN_DOCUMENTS:
        assert document["source"] == f"corpus/{pack_slug}/{document['id']}.md"


def test_pack_kinds_and_companies():
    for pack in catalog.PACKS:
        assert pack["kind"] in {"generic", "company"}
        assert pack["title"] and pack["description"]
        if pack["kind"] == "company":
            assert pack["company"] == catalog.COMPANY["name"]
            assert pack["slug"].startswith("company-")
        else:
            assert pack["company"] is None
    assert [p["slug"] for p in catalog.PACKS if p["kind"] == "company"] == [
        "company-ams-incident-digests",
        "company-solution-design-fds",
        "company-change-and-downtime-calendar",
    ]


def test_generated_documents_are_one_word_file_and_one_pdf():
    generated = [document for _, document in catalog.iter_documents() if "generator" in document]
    assert sorted((d["generator"], Path(d["filename"]).suffix) for d in generated) == [
        ("build_docx", ".docx"),
        ("build_pdf", ".pdf"),
    ]


def test_document_ids_follow_the_id_rule_and_are_unique():
    ids = [document["id"] for _, document in catalog.iter_documents()]
    assert len(ids) == len(set(ids)) == 62
    for document_id in ids:
        assert DOCUMENT_ID_RULE.match(document_id), document_id


@pytest.mark.parametrize("pack_slug,document", MARKDOWN_DOCUMENTS, ids=lambda v: v["id"] if isinstance(v, dict) else v)
def test_markdown_document_shape(pack_slug, document):
    text = catalog.markdown_path(document).read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == f"# {document['title']}"
    assert any(line.startswith("## ") for line in lines), "needs ## sections"
    assert _last_line(text).startswith("Keywords: ")
    assert sum(line.startswith("Keywords:") for line in lines) == 1
    assert 300 <= _words(text) <= 1500


def test_digest_and_problem_titles_carry_their_ids():
    for _, document in MARKDOWN_DOCUMENTS:
        match = re.match(r"^(inc|prb)-(\d{4})-(\d{3,4})-", document["id"])
        if match:
            record = f"{match.group(1).upper()}-{match.group(2)}-{match.group(3)}"
            assert document["title"].startswith(f"{record}: "), document["id"]


# --- company rules --------------------------------------------------------------------------


def _company_markers() -> list[re.Pattern]:
    words = [
        catalog.COMPANY["name"],
        catalog.COMPANY["short_name"],
        *catalog.COMPANY_SYSTEM_IDS,
        *catalog.COMPANY_PLANTS,
    ]
    patterns = [re.compile(rf"\b{re.escape(word)}\b") for word in words]
    patterns.append(re.compile(re.escape(catalog.COMPANY_HOST_PREFIX) + r"[a-z0-9]"))
    patterns += [re.compile(re.escape(prefix)) for prefix in catalog.COMPANY_RECORD_PREFIXES]
    return patterns


def _generic_texts(docx_text: str, pdf_pages: list[str]) -> dict[str, str]:
    texts = {
        document["id"]: catalog.markdown_path(document).read_text(encoding="utf-8")
        for slug, document in MARKDOWN_DOCUMENTS
        if catalog.pack_by_slug(slug)["kind"] == "generic"
    }
    texts["ops-writing-style-guide"] = docx_text
    texts["worked-examples-interface-incident-triage"] = "\n".join(pdf_pages)
    return texts


def test_runbooks_name_no_company_system_incident_plant_or_company():
    runbooks = catalog.pack_by_slug("sap-operations-runbooks")
    assert runbooks["kind"] == "generic"
    for document in runbooks["documents"]:
        text = catalog.markdown_path(document).read_text(encoding="utf-8")
        for pattern in _company_markers():
            assert not pattern.search(text), f"{document['id']} names {pattern.pattern}"


def test_no_generic_document_names_the_company(docx_text, pdf_pages):
    for document_id, text in _generic_texts(docx_text, pdf_pages).items():
        for pattern in _company_markers():
            assert not pattern.search(text), f"{document_id} names {pattern.pattern}"


def test_company_documents_reference_only_existing_runbooks_and_records():
    documents = {document["id"] for _, document in catalog.iter_documents()}
    digests = {d["title"].split(":")[0] for d in catalog.pack_by_slug("company-ams-incident-digests")["documents"]}
    for slug, document in MARKDOWN_DOCUMENTS:
        text = catalog.markdown_path(document).read_text(encoding="utf-8")
        for runbook in re.findall(r"\brb-[a-z]+(?:-[a-z]+)*", text):
            assert runbook in documents, f"{document['id']} cites unknown runbook {runbook}"
        if catalog.pack_by_slug(slug)["kind"] == "company":
            for record in re.findall(r"\b(?:INC-2026-\d{4}|PRB-2026-\d{3})\b", text):
                assert record in digests, f"{document['id']} cites unknown record {record}"


def _header_value(text: str, field: str) -> str:
    match = re.search(rf"^\| {field} \| (.+?) \|$", text, re.MULTILINE)
    assert match, field
    return match.group(1)


def _duration(minutes: int) -> str:
    return f"{minutes // 60} h {minutes % 60} min"


def test_service_reviews_agree_with_the_incident_digests():
    targets = {"P1": 4 * 60, "P2": 8 * 60, "P3": 72 * 60}
    by_month: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for document in catalog.pack_by_slug("company-ams-incident-digests")["documents"]:
        if not document["id"].startswith("inc-"):
            continue
        text = catalog.markdown_path(document).read_text(encoding="utf-8")
        priority = _header_value(text, "Priority")[:2]
        opened = datetime.strptime(_header_value(text, "Opened")[:16], "%Y-%m-%d %H:%M")
        restored_field = _header_value(text, "Service restored")
        restored = datetime.strptime(restored_field[:16], "%Y-%m-%d %H:%M")
        minutes = int((restored - opened).total_seconds() // 60)
        assert f"({_duration(minutes)})" in restored_field, document["id"]
        met = minutes <= targets[priority]
        assert ("met" if met else "breached") in _header_value(text, "Resolution target"), document["id"]
        by_month[opened.strftime("%Y-%m")].append((document["title"][:13], priority, minutes))

    for month, incidents in by_month.items():
        review = (
            catalog.CORPUS_DIR / "company-ams-incident-digests" / f"msr-{month}-monthly-service-review.md"
        ).read_text()
        met = sum(minutes <= targets[priority] for _, priority, minutes in incidents)
        assert (
            f"| P1 to P3 resolved within target | {met} of {len(incidents)} ({100 * met / len(incidents):.1f} percent)"
            in review
        )
        for priority in ("P1", "P2", "P3"):
            durations = [minutes for _, p, minutes in incidents if p == priority]
            mttr = round(sum(durations) / len(durations))
            assert f"| {priority} | {len(durations)} | {_duration(mttr)} |" in review, (month, priority)
            assert f"| Incidents {priority} | {len(durations)} |" in review, (month, priority)
        for record, priority, minutes in incidents:
            row = re.search(
                rf"^\| {record} \| [^|]+ \| {priority} \|.*\| {re.escape(_duration(minutes))} \| (Met|Breached) \|$",
                review,
                re.MULTILINE,
            )
            assert row, (month, record)


# --- agents and users -----------------------------------------------------------------------


def test_ten_agents_in_preferred_mode_and_the_rest_open():
    modes = Counter(agent["mode"] for agent in catalog.AGENTS)
    assert modes["preferred"] == 10
    assert modes["open"] >= 3
    assert set(modes) == {"preferred", "open"}
    assert len({agent["slug"] for agent in catalog.AGENTS}) == len(catalog.AGENTS)


def test_grants_respect_company_rules():
    packs = {pack["slug"]: pack for pack in catalog.PACKS}
    for agent in catalog.AGENTS:
        assert agent["company"] in {None, catalog.COMPANY["name"]}
        assert agent["instructions"].strip()
        for slug in agent["packs"]:
            pack = packs[slug]
            if pack["kind"] == "company":
                assert agent["company"] == pack["company"], (agent["slug"], slug)
    granted = {slug for agent in catalog.AGENTS for slug in agent["packs"]}
    assert granted == set(packs), "every pack is granted to at least one agent"


def test_one_demo_user_per_role_and_the_member_belongs_to_the_company():
    assert sorted(role for user in catalog.DEMO_USERS for role in user["roles"]) == sorted(ROLES)
    for user in catalog.DEMO_USERS:
        assert user["email"].endswith("@demo.cairn.test")
        assert user["password"]
        assert (user["company"] == catalog.COMPANY["name"]) == ("Member" in user["roles"])


# --- evaluation questions -------------------------------------------------------------------

QUESTIONS = json.loads(catalog.EVAL_QUESTIONS_PATH.read_text(encoding="utf-8"))
# Questions asking for values, written to tune the evidence check's asked-value rule: tuning data only.
VALUE_QUESTIONS = json.loads(catalog.VALUE_QUESTIONS_PATH.read_text(encoding="utf-8"))
# Question words and English stopwords: what a question shares with any text.
FUNCTION_WORDS = set(
    "a an and are as at be but by do does did for how i if in into is it many me much my no not of on or our "
    "such that the their then there these they this to was we what when where which who whom why will with "
    "you your can could should would get".split()
)


# Minimum number of questions per kind (issue 10): the set must stay large enough to tune on
# one half and report on the other.
KIND_MINIMUMS = {"paraphrase": 45, "exact_id": 25, "two_docs": 15, "procedure": 12, "table_row": 10, "unanswerable": 40}


def _split_group(question: dict) -> tuple:
    return question["kind"], question.get("adjacent")


def test_evaluation_questions_mix():
    kinds = Counter(question["kind"] for question in QUESTIONS)
    assert len(QUESTIONS) >= 170
    assert set(kinds) == questions_module.KINDS
    for kind, minimum in KIND_MINIMUMS.items():
        assert kinds[kind] >= minimum, kind
    unanswerable = [question for question in QUESTIONS if question["kind"] == "unanswerable"]
    assert all(isinstance(question["adjacent"], bool) for question in unanswerable)
    assert sum(question["adjacent"] for question in unanswerable) >= 30
    assert sum(not question["adjacent"] for question in unanswerable) >= 8
    assert len({question["id"] for question in QUESTIONS}) == len(QUESTIONS)


def test_evaluation_questions_pass_the_loader(tmp_path):
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(QUESTIONS))
    assert questions_module.load_questions(path) == QUESTIONS


def test_value_questions_are_tuning_questions_the_loader_takes(tmp_path):
    path = tmp_path / "values.json"
    path.write_text(json.dumps(VALUE_QUESTIONS))
    assert questions_module.load_questions(path) == VALUE_QUESTIONS
    assert len(VALUE_QUESTIONS) >= 50 and {question["split"] for question in VALUE_QUESTIONS} == {"tune"}
    assert sum(question["kind"] == "unanswerable" for question in VALUE_QUESTIONS) >= 15


def test_split_alternates_within_each_kind_so_both_halves_hold_every_kind():
    groups = defaultdict(list)
    for question in QUESTIONS:
        groups[_split_group(question)].append(question)
    for group, items in groups.items():
        ordered = sorted(items, key=lambda question: question["id"])
        # The rule, written down: sorted by id, the 1st, 3rd, 5th ... question goes to "tune".
        assert [question["split"] for question in ordered] == [
            "tune" if index % 2 == 0 else "check" for index in range(len(ordered))
        ], group
    for split in questions_module.SPLITS:
        kinds = Counter(question["kind"] for question in QUESTIONS if question["split"] == split)
        assert set(kinds) == questions_module.KINDS, split


def test_expected_documents_exist_in_the_packs_searched():
    pack_of = {document["id"]: pack["slug"] for pack, document in catalog.iter_documents()}
    slugs = {pack["slug"] for pack in catalog.PACKS}
    for question in QUESTIONS + VALUE_QUESTIONS:
        assert question["packs"] and set(question["packs"]) <= slugs, question["id"]
        for document_id in question["expected"]:
            assert document_id in pack_of, (question["id"], document_id)
            assert pack_of[document_id] in question["packs"], (question["id"], document_id)
        if question["kind"] == "unanswerable":
            assert question["expected"] == []
        elif question["kind"] == "two_docs":
            assert len(question["expected"]) >= 2
        else:
            assert question["expected"]


def _document_texts(docx_text: str, pdf_pages: list[str]) -> dict[str, str]:
    """Each document's text as stored, the generated ones as their Word and PDF files read back."""
    generated = {"build_docx": docx_text, "build_pdf": "\n".join(pdf_pages)}
    return {
        document["id"]: catalog.markdown_path(document).read_text(encoding="utf-8")
        if "source" in document
        else generated[document["generator"]]
        for _, document in catalog.iter_documents()
    }


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def test_answer_strings_are_copied_from_an_expected_document(docx_text, pdf_pages):
    texts = {document_id: _squeeze(text) for document_id, text in _document_texts(docx_text, pdf_pages).items()}
    for question in QUESTIONS + VALUE_QUESTIONS:
        for wanted in question["answer_contains"]:
            # Case-sensitive and verbatim: the key fact as the document writes it, without Markdown around it.
            assert not set(wanted) & set("*|`#"), (question["id"], wanted)
            assert any(_squeeze(wanted) in texts[document_id] for document_id in question["expected"]), (
                question["id"],
                wanted,
            )
            # The question must not give the fact away.
            assert wanted.lower() not in question["question"].lower(), (question["id"], wanted)


def test_adjacent_unanswerable_questions_name_facts_the_corpus_lacks(docx_text, pdf_pages):
    corpus = "\n".join(_document_texts(docx_text, pdf_pages).values())
    for question in QUESTIONS:
        for term in question.get("absent", []):
            assert question["kind"] == "unanswerable" and question["adjacent"], question["id"]
            assert term in question["question"] or term.lower() in question["question"].lower(), (question["id"], term)
            assert term not in corpus, (question["id"], term)


def test_off_topic_unanswerable_questions_share_no_content_word_with_the_corpus(docx_text, pdf_pages):
    vocabulary = set(re.findall(r"[a-z0-9]+", "\n".join(_document_texts(docx_text, pdf_pages).values()).lower()))
    for question in QUESTIONS:
        if question["kind"] != "unanswerable" or question["adjacent"] or question.get("shares_words"):
            continue
        for word in re.findall(r"[a-z0-9]+", question["question"].lower()):
            if word in FUNCTION_WORDS:
                continue
            # A prefix check is stricter than stemming: "payroll" must not even match "payr…".
            stem = word[: max(4, len(word) - 3)]
            clash = sorted(term for term in vocabulary if term.startswith(stem))
            assert not clash, f"{question['id']}: {word!r} matches {clash[:5]}"


def test_help_desk_questions_share_everyday_words_but_not_their_subject(docx_text, pdf_pages):
    """The off-topic questions a help desk gets ("reset my VPN password") share words with the corpus,
    so a check that only asks for shared words answers them: the set keeps at least ten, half in
    each split, each sharing a content word with the documents."""
    vocabulary = set(re.findall(r"[a-z0-9]+", "\n".join(_document_texts(docx_text, pdf_pages).values()).lower()))
    sharing = [q for q in QUESTIONS if q.get("shares_words")]
    assert len(sharing) >= 10
    assert Counter(q["split"] for q in sharing) == {
        "tune": len(sharing) // 2,
        "check": len(sharing) - len(sharing) // 2,
    }
    for question in sharing:
        words = [w for w in re.findall(r"[a-z0-9]+", question["question"].lower()) if w not in FUNCTION_WORDS]
        assert any(w in vocabulary for w in words), question["id"]


# --- generated Word and PDF ---------------------------------------------------------------


def test_word_file_has_headings_lists_a_table_and_a_picture_with_alt_text(built):
    document = docx.Document(built["build_docx"])
    styles = Counter(paragraph.style.name for paragraph in document.paragraphs)
    assert styles["Title"] == 1 and styles["Heading 1"] >= 5
    assert styles["List Bullet"] >= 3 and styles["List Number"] >= 3
    assert len(document.tables) >= 1
    assert len(document.inline_shapes) >= 1
    for shape in document.inline_shapes:
        assert len(shape._inline.docPr.get("descr", "")) > 20
    image_parts = [part for part in document.part.package.parts if part.content_type == "image/png"]
    assert image_parts
    assert all(_png_size(part.blob) >= (200, 200) for part in image_parts)
    assert _last_line("\n".join(p.text for p in document.paragraphs)).startswith("Keywords: ")
    assert document.core_properties.author == build_binaries.AUTHOR


def test_pdf_has_several_pages_with_text_and_pictures(built, pdf_pages):
    assert len(pdf_pages) >= 4
    assert all(len(text.strip()) > 200 for text in pdf_pages)
    assert _last_line(pdf_pages[-1]).startswith("Keywords: ")
    pdf = pdfium.PdfDocument(built["build_pdf"])
    try:
        images_per_page = [len(list(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE]))) for page in pdf]
        sizes = [
            image.get_px_size() for page in pdf for image in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE])
        ]
    finally:
        pdf.close()
    assert sum(images_per_page) >= 2
    assert images_per_page[-1] == 0, "figures stay off the last page, so its text ends with the keywords"
    assert all(width >= 200 and height >= 200 for width, height in sizes)


def test_generation_is_deterministic(tmp_path, built):
    """The seed builds the same bytes every time (its speed is the benchmarks' business, not a test's)."""
    again = build_binaries.build_all(tmp_path)
    for name, path in again.items():
        assert path.read_bytes() == built[name].read_bytes(), name


def test_build_document_returns_the_file_to_ingest(tmp_path):
    for _, document in catalog.iter_documents():
        path = catalog.build_document(document, tmp_path)
        assert path.is_file()
        expected = document.get("filename") or f"{document['id']}.md"
        assert path.name == expected


def _png_size(blob: bytes) -> tuple[int, int]:
    assert blob[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(blob[16:20], "big"), int.from_bytes(blob[20:24], "big")
