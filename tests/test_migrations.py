"""The schema: migrations and models agree, and databases migrated before peewee's runner move forward.

Runs on SQLite, or on PostgreSQL with CAIRN_TEST_DATABASE_URL set.
"""

from __future__ import annotations

import datetime as dt
import importlib.util

from peewee import PostgresqlDatabase
from playhouse.migrate import SchemaMigrator
from playhouse.schema_diff import diff_models

from helpers import POSTGRES_URL, empty_postgres
from portal import create_app
from portal import migrate as migrations
from portal.models import ALL_MODELS, AuditLog, Document, Feedback, Revision, Run, RunReference, User

FORMER_RUNNER_APPLIED = (
    "0001_packs_documents",
    "0002_agents_runs",
    "0003_chat_feedback",
    "0004_user_session_token",
    "0005_answer_basis",
    "0006_receipt_figures",
    "0007_index_pending",
)


def test_a_freshly_migrated_database_has_no_difference_from_the_models(app):
    db = app.config["DATABASE"]
    assert migrations.pending(db) == []
    diff = diff_models(db, list(ALL_MODELS))
    assert not diff, str(diff)


def test_every_model_is_in_the_one_list_and_run_declares_its_conversation():
    import importlib
    import pkgutil

    from portal import models
    from portal.db import BaseModel

    # Every module of the package, so a model defined in one but missing from the list is caught.
    modules = [
        models,
        *(importlib.import_module(f"{models.__name__}.{info.name}") for info in pkgutil.iter_modules(models.__path__)),
    ]
    declared = {
        v
        for module in modules
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, BaseModel) and v is not BaseModel
    }
    assert declared == set(ALL_MODELS)
    assert "conversation" in Run.__dict__ and Run.conversation.null


def _migrate_like_the_former_runner(db, names) -> None:
    """What portal/migrate.py did before it used playhouse.migrations (commit cbd3b2f), step for step."""
    db.execute_sql("CREATE TABLE IF NOT EXISTS schema_migration (name VARCHAR(255) PRIMARY KEY, applied_at TIMESTAMP)")
    for name in names:
        path = migrations.MIGRATIONS_DIR / f"{name}.py"
        spec = importlib.util.spec_from_file_location(f"cairn_migration_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with db.atomic():
            module.up(SchemaMigrator.from_database(db), db)
            db.execute_sql(
                f"INSERT INTO schema_migration (name, applied_at) VALUES ({db.param}, CURRENT_TIMESTAMP)", (name,)
            )


def test_a_database_migrated_by_the_former_runner_migrates_forward_without_loss(tmp_path):
    if POSTGRES_URL:
        empty_postgres(POSTGRES_URL)
    app = create_app(
        {
            "CAIRN_DATA_DIR": str(tmp_path / "data"),
            "DATABASE_URL": POSTGRES_URL or None,
            "SECRET_KEY": "test-secret",
            "CAIRN_REPAIR_INDEX_ON_START": False,
            "TESTING": True,
        }
    )
    with app.app_context():
        db = app.config["DATABASE"]
        _migrate_like_the_former_runner(db, FORMER_RUNNER_APPLIED)
        applied_before = dict(db.execute_sql("SELECT name, applied_at FROM schema_migration").fetchall())
        now, q = dt.datetime(2026, 11, 1, 9), db.param

        def insert(table: str, **values) -> int:
            sql = f'INSERT INTO "{table}" ({", ".join(values)}) VALUES ({", ".join([q] * len(values))})'
            if isinstance(db, PostgresqlDatabase):
                return db.execute_sql(sql + " RETURNING id", tuple(values.values())).fetchone()[0]
            return db.execute_sql(sql, tuple(values.values())).lastrowid

        admin = insert(
            "user",
            email="admin@example.test",
            password_hash="x",
            roles="PlatformAdmin,Auditor",
            active=True,
            created_at=now,
            session_token="t1",
        )
        nobody = insert(
            "user",
            email="nobody@example.test",
            password_hash="x",
            roles="",
            active=True,
            created_at=now,
            session_token="t2",
        )
        pack = insert("pack", slug="ops", title="Operations", created_at=now)
        restricted = insert(
            "document",
            pack_id=pack,
            doc_id="a",
            title="A",
            reader_roles="Auditor,AgentBuilder",
            created_at=now,
            updated_at=now,
        )
        open_to_all = insert("document", pack_id=pack, doc_id="b", title="B", created_at=now, updated_at=now)
        revision = insert(
            "revision",
            document_id=restricted,
            version=1,
            text="t",
            sha256="s",
            images_not_kept='{"size": 2}',
            created_at=now,
        )
        agent = insert("agent", slug="desk", name="Desk", created_at=now, updated_at=now)
        insert(
            "audit_log",
            actor_id=admin,
            action="agent.create",
            target_type="agent",
            target_id=agent,
            detail='{"by": "admin@example.test", "mode": "open", "packs": ["ops"]}',
            created_at=now,
        )
        run = insert(
            "run",
            agent_id=agent,
            agent_slug="desk",
            agent_name="Desk",
            user_id=admin,
            question="q",
            answer="a [1]",
            status="completed",
            mode="open",
            model="extractive",
            model_called=False,
            warnings='["a warning"]',
            timings='{"search_ms": 1.5, "total_ms": 2.0}',
            cited="[1]",
            searched_packs='[{"slug": "ops", "title": "Operations"}]',
            created_at=now,
        )
        insert(
            "run_reference",
            run_id=run,
            n=1,
            passage_id=7,
            pack_slug="ops",
            pack_title="Operations",
            document_pk=restricted,
            document_id="a",
            document_title="A",
            version=1,
            line_start=1,
            line_end=2,
            text="t",
            figures='[{"number": 1, "label": "Chart", "figure_id": 3}]',
        )
        insert(
            "feedback",
            run_id=run,
            user_id=admin,
            rating="not_helpful",
            reasons='["outdated", "incorrect"]',
            created_at=now,
            updated_at=now,
        )

        newer = [
            "0010_json_roles_and_indexes",
            "0011_api_tokens_and_grounding",
            "0012_conversation_turns_index",
            "0016_pack_tombstones",
            "0017_document_sync_source",
        ]
        assert migrations.pending(db) == newer
        assert migrations.migrate(db) == newer
        assert migrations.migrate(db) == [] and migrations.pending(db) == []

        history = migrations.runner(db).applied()
        assert set(history) == {*FORMER_RUNNER_APPLIED, *newer}
        for name, applied_at in applied_before.items():  # the former runner's timestamps are kept
            kept = applied_at if isinstance(applied_at, dt.datetime) else dt.datetime.fromisoformat(applied_at)
            assert history[name] == kept
        assert not diff_models(db, list(ALL_MODELS))
        if not isinstance(db, PostgresqlDatabase):  # the table rebuilds kept every reference sound
            assert db.execute_sql("PRAGMA foreign_key_check").fetchall() == []

        assert User.get_by_id(admin).roles == {"PlatformAdmin", "Auditor"}
        assert User.get_by_id(nobody).roles == frozenset()
        assert Document.get_by_id(restricted).reader_roles == {"Auditor", "AgentBuilder"}
        assert Document.get_by_id(open_to_all).reader_roles == frozenset()
        assert [d.doc_id for d in Document.select().where(~Document.reader_role_names.is_empty())] == ["a"]
        assert Revision.get_by_id(revision).images_not_kept == {"size": 2}
        assert AuditLog.get().detail == {"by": "admin@example.test", "mode": "open", "packs": ["ops"]}
        stored = Run.get_by_id(run)
        assert (stored.warnings, stored.timings, stored.cited, stored.searched_packs) == (
            ["a warning"],
            {"search_ms": 1.5, "total_ms": 2.0},
            [1],
            [{"slug": "ops", "title": "Operations"}],
        )
        assert RunReference.get().figures == [{"number": 1, "label": "Chart", "figure_id": 3}]
        assert RunReference.get().sha256 == "s"  # the hash of the revision it was issued from, while it is kept
        assert Feedback.get().reasons == ["outdated", "incorrect"]
        assert Feedback.select().where(Feedback.reasons.holds("outdated")).count() == 1

        # Rows written now, by the models and by the column defaults, read back as lists.
        newcomer = User.create(email="new@example.test", password_hash="x")
        assert User.get_by_id(newcomer.id).roles == frozenset()
        insert("user", email="raw@example.test", password_hash="x", active=True, created_at=now, session_token="t3")
        assert User.by_email("raw@example.test").roles == frozenset()
        app.extensions["cairn_indexes"].close()
        db.close()


def test_a_json_list_filter_matches_whole_keys_only(app, users):
    from portal.models import Agent

    agent = Agent.create(slug="desk", name="Desk")
    for n, reasons in enumerate((["did_not_cite"], ["didXnotXcite"], ["outdated", "other"], [])):
        run = Run.create(
            agent=agent,
            agent_slug="desk",
            agent_name="Desk",
            question=f"q{n}",
            answer="a",
            status="completed",
            mode="open",
            model="extractive",
        )
        Feedback.create(run=run, user=users["Member"], rating="not_helpful", reasons=reasons)

    def matching(key):
        return sorted(f.run.question for f in Feedback.select().where(Feedback.reasons.holds(key)))

    assert matching("did_not_cite") == ["q0"]
    assert matching("other") == ["q2"] and matching("oth") == []
    assert matching("%") == [] and matching("_") == []
    assert sorted(f.run.question for f in Feedback.select().where(Feedback.reasons.is_empty())) == ["q3"]
