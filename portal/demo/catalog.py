"""The demo seed as plain data: one invented company, eleven packs, the agents and one user per role.

Everything here is fiction written for the demo. The company, its systems
(K4P, K4Q, K4D, KBP, KXP, KXQ), plants, hosts, incidents and changes are invented;
SAP appears only as the product, with its standard transaction codes. No
document names a person: people appear as roles ("on-call Basis engineer").

Documents are Markdown files under ``corpus/<pack-slug>/<document-id>.md``,
except two binary documents made by ``build_binaries``: their entries name a
``generator`` (``build_docx`` or ``build_pdf``) and the ``filename`` to ingest
them under. ``source`` paths are relative to this package's folder (``DEMO_DIR``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

DEMO_DIR = Path(__file__).resolve().parent
CORPUS_DIR = DEMO_DIR / "corpus"
EVAL_QUESTIONS_PATH = DEMO_DIR / "eval" / "questions.json"

COMPANY: dict[str, str] = {
    "slug": "tarnwick",
    "name": "Tarnwick Fluid Systems GmbH",
    "short_name": "Tarnwick",
    "description": (
        "Invented manufacturer of industrial valves and pumps with a valve assembly plant (TW10), "
        "a pump foundry (TW20) and a central distribution centre (TW30). It runs S/4HANA (K4P), "
        "BW/4HANA (KBP) and SAP PO (KXP), supported by its own AMS team."
    ),
}

# The company's landscape as its documents name it. Generic packs name none of these.
COMPANY_SYSTEM_IDS = ("K4P", "K4Q", "K4D", "KBP", "KXP", "KXQ")
COMPANY_PLANTS = ("TW10", "TW20", "TW30", "TW31")
COMPANY_HOST_PREFIX = "tfs-"
COMPANY_RECORD_PREFIXES = ("INC-2026-", "PRB-2026-", "CHG-2026-", "K4DK")

INCIDENT_DIGESTS = "company-ams-incident-digests"
SOLUTION_DESIGN = "company-solution-design-fds"
CHANGE_CALENDAR = "company-change-and-downtime-calendar"
RUNBOOKS = "sap-operations-runbooks"


def _md(pack_slug: str, document_id: str, title: str) -> dict[str, str]:
    return {"id": document_id, "title": title, "source": f"corpus/{pack_slug}/{document_id}.md"}


def _generated(document_id: str, title: str, generator: str, filename: str) -> dict[str, str]:
    return {"id": document_id, "title": title, "generator": generator, "filename": filename}


PACKS: list[dict[str, Any]] = [
    {
        "slug": INCIDENT_DIGESTS,
        "title": "AMS incident digests",
        "description": (
            "Incident digests of priority P1 to P3, problem records and monthly service reviews "
            "of the Tarnwick AMS team, February and March 2026."
        ),
        "kind": "company",
        "company": COMPANY["name"],
        "visibility": "company",
        "documents": [
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0203-invoic-idocs-stuck-in-trfc",
                "INC-2026-0203: Outbound invoice IDocs stuck in tRFC after a network interruption",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0217-spool-number-range-at-92-percent",
                "INC-2026-0217: Spool number range at 92 percent after the cleanup job failed for three weeks",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0231-dialog-work-processes-exhausted-by-mes-burst",
                "INC-2026-0231: Users unable to log on to K4P while a burst of MES confirmations occupied all dialog work processes",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0244-transport-rc8-label-config-table",
                "INC-2026-0244: Release R26.02 transport ended with return code 8: label configuration table not activated",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0258-billing-skipped-deliveries-locked-by-credit-release",
                "INC-2026-0258: Nightly billing skipped 312 deliveries locked by the overrunning credit release",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0266-bw-extraction-failed-rfc-user-locked",
                "INC-2026-0266: Daily sales load in KBP failed because the extraction user was locked in K4P",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0272-label-reprint-duplicate-key-update-errors",
                "INC-2026-0272: Label reprints at TW30 failing in the update task with duplicate keys",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0285-edi-orders-status-51-missing-customer-material",
                "INC-2026-0285: 312 EDI orders of a key distributor stuck in status 51 after a change of customer material numbers",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0291-k4q-ssl-client-certificate-expired",
                "INC-2026-0291: E-invoice status polling in K4Q failing after the SSL client certificate expired",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0304-payment-file-rejected-pkix-path",
                "INC-2026-0304: Payment file to the house bank not delivered after the bank changed its certificate chain",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0312-mrp-live-job-overrun-tw10",
                "INC-2026-0312: MRP run for plant TW10 still active after nine hours",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0320-hana-data-volume-application-log-growth",
                "INC-2026-0320: HANA data volume of K4P at 91 percent because EDI application logs never expired",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0338-delivery-advices-stuck-after-downtime",
                "INC-2026-0338: Delivery advices to the 3PL stuck in SM58 after the weekend downtime",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0345-bw-billing-data-missing-suspended-collective-runs",
                "INC-2026-0345: No billing data in KBP since the downtime: collective run jobs left suspended",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0351-spool-flood-from-label-retry-loop",
                "INC-2026-0351: Spool fill level at 81 percent after the label program retried an offline printer every ten seconds",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0359-goods-issue-blocked-by-delivery-mass-update-locks",
                "INC-2026-0359: Goods issue blocked at TW30 by locks of the delivery mass update report",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0366-transport-rc12-missing-data-file",
                "INC-2026-0366: Release R26.03 transport cancelled with return code 12 because its data file was gone",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0372-billing-job-memory-dump-after-r26-03",
                "INC-2026-0372: Nightly billing cancelled with TSV_TNEW_PAGE_ALLOC_FAILED after the R26.03 text enhancement",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0379-k4p-hang-hana-log-volume-full",
                "INC-2026-0379: K4P stopped for 85 minutes when the HANA log volume filled up",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0386-loipro-job-pinned-to-retired-server",
                "INC-2026-0386: Production orders not sent to the MES: job pinned to a retired application server",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0393-k4p-ssl-client-certificate-expired",
                "INC-2026-0393: E-invoice status feedback stopped when the K4P SSL client certificate expired",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0401-mes-confirmations-status-64-wrong-partner-in-variant",
                "INC-2026-0401: 7,900 MES confirmations left in status 64 because the new job selected the wrong partner",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0408-update-terminated-credit-log-field-overflow",
                "INC-2026-0408: Order changes lost in the update task: credit exposure too large for the credit log",
            ),
            _md(
                INCIDENT_DIGESTS,
                "inc-2026-0412-billing-skipped-deliveries-quarter-end-credit-release",
                "INC-2026-0412: Billing again skipped deliveries locked by the credit release at quarter-end",
            ),
            _md(
                INCIDENT_DIGESTS,
                "msr-2026-02-monthly-service-review",
                "Monthly service review: February 2026",
            ),
            _md(INCIDENT_DIGESTS, "msr-2026-03-monthly-service-review", "Monthly service review: March 2026"),
            _md(
                INCIDENT_DIGESTS,
                "prb-2026-007-idoc-adapter-registration-loss",
                "PRB-2026-007: The PO IDoc adapter loses its registration at the K4P gateway and does not recover",
            ),
            _md(
                INCIDENT_DIGESTS,
                "prb-2026-008-label-printing-chain-tw30",
                "PRB-2026-008: Label printing at distribution centre TW30 floods the spool and breaks the label queue",
            ),
            _md(
                INCIDENT_DIGESTS,
                "prb-2026-009-nightly-billing-chain-reliability",
                "PRB-2026-009: The nightly billing run fails or skips documents after changes around it",
            ),
            _md(
                INCIDENT_DIGESTS,
                "prb-2026-010-certificate-lifecycle-management",
                "PRB-2026-010: Certificates expire or change without anyone noticing in time",
            ),
        ],
    },
    {
        "slug": SOLUTION_DESIGN,
        "title": "Solution design: functional and technical specifications",
        "description": (
            "Tarnwick's functional and technical specifications for billing, EDI orders, credit release, "
            "outbound deliveries, MES integration, and the landscape and batch schedule."
        ),
        "kind": "company",
        "company": COMPANY["name"],
        "visibility": "company",
        "documents": [
            _md(
                SOLUTION_DESIGN,
                "fs-le-007-outbound-deliveries-and-label-printing",
                "FS-LE-007: Outbound deliveries, 3PL messages and label printing at TW30 (functional specification)",
            ),
            _md(
                SOLUTION_DESIGN,
                "fs-pp-011-mes-integration",
                "FS-PP-011: Integration with the manufacturing execution system at TW10 (functional specification)",
            ),
            _md(
                SOLUTION_DESIGN,
                "fs-sd-014-billing-output-and-einvoicing",
                "FS-SD-014: Billing output and e-invoicing (functional specification)",
            ),
            _md(
                SOLUTION_DESIGN,
                "fs-sd-021-edi-order-intake",
                "FS-SD-021: EDI order intake with ORDERS05 (functional specification)",
            ),
            _md(
                SOLUTION_DESIGN,
                "fs-sd-030-credit-release-and-credit-log",
                "FS-SD-030: Nightly credit release and credit exposure log (functional specification)",
            ),
            _md(
                SOLUTION_DESIGN,
                "ts-bc-003-batch-schedule-and-interface-monitoring",
                "TS-BC-003: Landscape, batch schedule and interface monitoring (technical specification)",
            ),
            _md(
                SOLUTION_DESIGN,
                "ts-sd-014-billing-enhancements",
                "TS-SD-014: Billing enhancements (technical specification)",
            ),
        ],
    },
    {
        "slug": CHANGE_CALENDAR,
        "title": "Change and downtime calendar",
        "description": (
            "Tarnwick's downtime and release calendars, post-downtime reports, the landscape restart "
            "checklist and change board minutes."
        ),
        "kind": "company",
        "company": COMPANY["name"],
        "visibility": "company",
        "documents": [
            _md(CHANGE_CALENDAR, "cab-2026-03-05-change-board-minutes", "Change board minutes: 5 March 2026"),
            _md(
                CHANGE_CALENDAR,
                "cal-2026-q1-downtime-and-release-calendar",
                "Downtime and release calendar: first quarter 2026",
            ),
            _md(
                CHANGE_CALENDAR,
                "cal-2026-q2-downtime-and-release-calendar",
                "Downtime and release calendar: second quarter 2026",
            ),
            _md(
                CHANGE_CALENDAR,
                "k4p-landscape-restart-checklist",
                "Restart checklist for planned downtimes of the K4P landscape",
            ),
            _md(
                CHANGE_CALENDAR,
                "pdr-2026-02-28-kxp-support-packages-and-k4p-kernel",
                "Post-downtime report: KXP support package stack and K4P kernel patch, 28 February 2026",
            ),
            _md(
                CHANGE_CALENDAR,
                "pdr-2026-03-14-k4p-hana-revision-and-host-move",
                "Post-downtime report: K4P HANA revision update and application server move, 14 March 2026",
            ),
        ],
    },
    {
        "slug": RUNBOOKS,
        "title": "SAP operations runbooks",
        "description": (
            "Twelve generic runbooks for SAP operations: IDocs, jobs, updates, locks, transports, RFC, "
            "dumps, work processes, spool, queues, certificates and database space."
        ),
        "kind": "generic",
        "company": None,
        "visibility": "shared",
        "documents": [
            _md(RUNBOOKS, "rb-certificate-expiry", "Runbook: Expiring and expired certificates (STRUST)"),
            _md(RUNBOOKS, "rb-database-space-growth", "Runbook: Database space and table growth (DB02)"),
            _md(RUNBOOKS, "rb-idoc-backlog", "Runbook: IDoc backlog and failed IDoc processing"),
            _md(RUNBOOKS, "rb-lock-entries", "Runbook: Stale and blocking lock entries (SM12)"),
            _md(RUNBOOKS, "rb-qrfc-trfc-queues", "Runbook: Blocked qRFC and tRFC queues (SMQ1, SMQ2, SM58)"),
            _md(RUNBOOKS, "rb-rfc-destination-failures", "Runbook: RFC destination failures (SM59)"),
            _md(RUNBOOKS, "rb-short-dumps", "Runbook: Analysing short dumps (ST22)"),
            _md(
                RUNBOOKS,
                "rb-spool-overflow",
                "Runbook: Spool overflow and spool number range exhaustion (SP01)",
            ),
            _md(
                RUNBOOKS,
                "rb-stuck-background-jobs",
                "Runbook: Background jobs that hang, overrun or never start (SM37)",
            ),
            _md(RUNBOOKS, "rb-transport-import-failures", "Runbook: Transport import failures (STMS)"),
            _md(RUNBOOKS, "rb-update-task-errors", "Runbook: Terminated update requests (SM13)"),
            _md(RUNBOOKS, "rb-work-process-exhaustion", "Runbook: Work process exhaustion (SM50, SM66)"),
        ],
    },
    {
        "slug": "spec-templates",
        "title": "Specification templates",
        "description": "A reusable template for functional specifications, with numbering rules and a review checklist.",
        "kind": "generic",
        "company": None,
        "visibility": "shared",
        "documents": [
            _md("spec-templates", "functional-specification-template", "Functional specification template"),
        ],
    },
    {
        "slug": "writing-style-guide",
        "title": "Writing style guide",
        "description": "House style for operations documents: structure, identifiers, dates, terms, keyword lines (Word).",
        "kind": "generic",
        "company": None,
        "visibility": "shared",
        "documents": [
            _generated(
                "ops-writing-style-guide",
                "Style guide for operations documents",
                "build_docx",
                "ops-writing-style-guide.docx",
            ),
        ],
    },
    {
        "slug": "runbook-template",
        "title": "Runbook template",
        "description": "The structure every runbook follows, with guidance and a review checklist for authors.",
        "kind": "generic",
        "company": None,
        "visibility": "shared",
        "documents": [
            _md("runbook-template", "runbook-template", "Runbook template and guidance for runbook authors"),
        ],
    },
    {
        "slug": "worked-examples",
        "title": "Worked examples",
        "description": "Three interface incidents triaged step by step, with diagrams and a decision flow (PDF).",
        "kind": "generic",
        "company": None,
        "visibility": "shared",
        "documents": [
            _generated(
                "worked-examples-interface-incident-triage",
                "Worked examples: triaging SAP interface incidents",
                "build_pdf",
                "worked-examples-interface-incident-triage.pdf",
            ),
        ],
    },
    {
        "slug": "sap-glossary",
        "title": "SAP operations glossary",
        "description": "Short definitions of the terms used in runbooks, incident digests and specifications.",
        "kind": "generic",
        "company": None,
        "visibility": "shared",
        "documents": [
            _md("sap-glossary", "sap-operations-glossary", "SAP operations glossary"),
        ],
    },
    {
        "slug": "post-incident-review-guide",
        "title": "Post-incident review guide",
        "description": "How to write blameless incident digests and problem records that later readers can find and use.",
        "kind": "generic",
        "company": None,
        "visibility": "shared",
        "documents": [
            _md(
                "post-incident-review-guide",
                "post-incident-review-guide",
                "Post-incident review guide: writing incident digests and problem records",
            ),
        ],
    },
    {
        "slug": "change-request-guide",
        "title": "Change request guide",
        "description": "Planning, approving and checking changes to SAP systems, including post-change checks.",
        "kind": "generic",
        "company": None,
        "visibility": "shared",
        "documents": [
            _md(
                "change-request-guide",
                "change-request-guide",
                "Change request guide: planning, approving and checking changes to SAP systems",
            ),
        ],
    },
]

_COMPANY_AGENT_RULES = (
    "Cite the passages you use as [n]. Quote identifiers (incident, change and requirement ids, job "
    "names, error messages) exactly as the references write them. If the references do not answer the "
    "question, say so instead of guessing. Name roles, never persons."
)
_GENERIC_AGENT_RULES = (
    "Cite the passages you use as [n]. Answer generically: do not assume a particular company, system "
    "id or host. If the references do not answer the question, say so."
)

AGENTS: list[dict[str, Any]] = [
    # --- preferred mode: asked to cite [n] (ten agents) ---
    {
        "slug": "ams-incident-analyst",
        "name": "AMS incident analyst",
        "company": COMPANY["name"],
        "mode": "preferred",
        "instructions": (
            "You help Tarnwick's AMS team and its business users understand past incidents: what happened, "
            "the root cause, the fix and the follow-up actions, and which problem record and runbook apply. "
            + _COMPANY_AGENT_RULES
        ),
        "packs": [INCIDENT_DIGESTS, RUNBOOKS, CHANGE_CALENDAR],
    },
    {
        "slug": "basis-on-call-assistant",
        "name": "Basis on-call assistant",
        "company": COMPANY["name"],
        "mode": "preferred",
        "instructions": (
            "You support the on-call Basis engineer of the Tarnwick landscape during an incident. Start from "
            "the matching runbook's first checks, then point out earlier incidents with the same symptom and "
            "what fixed them. Keep answers short and ordered as steps. " + _COMPANY_AGENT_RULES
        ),
        "packs": [RUNBOOKS, INCIDENT_DIGESTS, CHANGE_CALENDAR, SOLUTION_DESIGN],
    },
    {
        "slug": "interface-monitor-assistant",
        "name": "Interface monitoring assistant",
        "company": COMPANY["name"],
        "mode": "preferred",
        "instructions": (
            "You help the AMS integration team with Tarnwick's interfaces: IDocs, tRFC and qRFC, SAP PO "
            "channels, partner messages. Use the interface catalogue and specifications for the design and the "
            "incident digests for known failures. " + _COMPANY_AGENT_RULES
        ),
        "packs": [SOLUTION_DESIGN, INCIDENT_DIGESTS, RUNBOOKS, "worked-examples"],
    },
    {
        "slug": "change-calendar-assistant",
        "name": "Change and downtime assistant",
        "company": COMPANY["name"],
        "mode": "preferred",
        "instructions": (
            "You answer questions about Tarnwick's release windows, planned downtimes, freezes, change board "
            "decisions and the restart checklist, and about incidents that followed a change. "
            + _COMPANY_AGENT_RULES
        ),
        "packs": [CHANGE_CALENDAR, INCIDENT_DIGESTS],
    },
    {
        "slug": "solution-design-assistant",
        "name": "Solution design assistant",
        "company": COMPANY["name"],
        "mode": "preferred",
        "instructions": (
            "You explain how Tarnwick's SAP processes are designed: requirements by id, jobs, interfaces, "
            "tables and error messages, as written in the functional and technical specifications. "
            + _COMPANY_AGENT_RULES
        ),
        "packs": [SOLUTION_DESIGN, "spec-templates"],
    },
    {
        "slug": "service-review-assistant",
        "name": "Service review assistant",
        "company": COMPANY["name"],
        "mode": "preferred",
        "instructions": (
            "You help the service delivery manager and business owners read Tarnwick's monthly service "
            "reviews: ticket volumes, service levels, MTTR, availability, breaches and their incidents. "
            "Use only figures the references state. " + _COMPANY_AGENT_RULES
        ),
        "packs": [INCIDENT_DIGESTS, CHANGE_CALENDAR],
    },
    {
        "slug": "sap-runbook-guide",
        "name": "SAP runbook guide",
        "company": None,
        "mode": "preferred",
        "instructions": (
            "You guide SAP operators through the generic runbooks: which runbook fits a symptom, its first "
            "checks, and what must never be done. Explain terms with the glossary. " + _GENERIC_AGENT_RULES
        ),
        "packs": [RUNBOOKS, "sap-glossary"],
    },
    {
        "slug": "spec-writing-coach",
        "name": "Specification writing coach",
        "company": None,
        "mode": "preferred",
        "instructions": (
            "You help analysts write functional and technical specifications that follow the template and "
            "the house style: numbered requirements, exact names, error handling, volumes. "
            + _GENERIC_AGENT_RULES
        ),
        "packs": ["spec-templates", "writing-style-guide"],
    },
    {
        "slug": "runbook-author",
        "name": "Runbook author",
        "company": None,
        "mode": "preferred",
        "instructions": (
            "You help engineers write and review runbooks: the template's structure, the writing rules, and "
            "the existing runbooks as examples of the expected depth. " + _GENERIC_AGENT_RULES
        ),
        "packs": ["runbook-template", "writing-style-guide", RUNBOOKS],
    },
    {
        "slug": "post-incident-review-coach",
        "name": "Post-incident review coach",
        "company": None,
        "mode": "preferred",
        "instructions": (
            "You help teams write blameless incident digests and problem records and learn from worked "
            "examples of interface incidents. " + _GENERIC_AGENT_RULES
        ),
        "packs": ["post-incident-review-guide", "worked-examples", "writing-style-guide"],
    },
    # --- open mode: receive references, not asked to cite ---
    {
        "slug": "sap-glossary-helper",
        "name": "SAP glossary helper",
        "company": None,
        "mode": "open",
        "instructions": "You explain SAP operations terms in plain language, briefly, with an example where it helps.",
        "packs": ["sap-glossary"],
    },
    {
        "slug": "change-request-helper",
        "name": "Change request helper",
        "company": None,
        "mode": "open",
        "instructions": (
            "You help people draft change requests: the kind of change, what the request must contain, and a "
            "post-change check that proves the change works."
        ),
        "packs": ["change-request-guide", "sap-glossary"],
    },
    {
        "slug": "style-checker",
        "name": "Style checker",
        "company": None,
        "mode": "open",
        "instructions": (
            "You review a draft operations document against the house style guide and list concrete "
            "corrections: structure, identifiers, dates, terms, roles instead of names, the keyword line."
        ),
        "packs": ["writing-style-guide"],
    },
    {
        "slug": "figure-describer",
        "name": "Figure describer",
        "company": None,
        "mode": "open",
        "instructions": (
            "You receive one figure from a document. Describe what it shows, factually and in at most "
            "1,000 characters: boxes, arrows, labels, values and the reading order. Do not speculate about "
            "what is not visible, and transcribe identifiers exactly."
        ),
        "packs": [],
    },
]

# Demo-only credentials, printed by the seed command; never use them outside a local demo.
DEMO_USERS: list[dict[str, Any]] = [
    {
        "email": "admin@demo.cairn.test",
        "display_name": "Demo platform administrator",
        "roles": ["PlatformAdmin"],
        "company": None,
        "password": "cairn-demo-admin",
    },
    {
        "email": "builder@demo.cairn.test",
        "display_name": "Demo agent builder",
        "roles": ["AgentBuilder"],
        "company": None,
        "password": "cairn-demo-builder",
    },
    {
        "email": "auditor@demo.cairn.test",
        "display_name": "Demo auditor",
        "roles": ["Auditor"],
        "company": None,
        "password": "cairn-demo-auditor",
    },
    {
        "email": "member@demo.cairn.test",
        "display_name": "Demo member (order desk)",
        "roles": ["Member"],
        "company": COMPANY["name"],
        "password": "cairn-demo-member",
    },
]


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
