"""portal.db: selects whose SQL is written once (``KeptSelect``)."""

from __future__ import annotations

import pytest

from helpers import migrated_app
from portal.db import KeptSelect, KeptSelectIn
from portal.models import Company, User


def test_a_kept_select_gives_the_rows_peewee_gives_for_each_value(app, users):
    by_email = KeptSelect(lambda email: User.select().where(User.email == email))
    for user in users.values():
        (kept,) = by_email.rows(user.email)
        assert kept.__data__ == User.get(User.email == user.email).__data__
    assert by_email.rows("nobody@example.test") == []
    assert by_email.first("nobody@example.test") is None


def test_a_kept_select_converts_each_value_as_the_field_it_is_compared_with(app, users):
    """A foreign key given as a model instance becomes its id; an id given as text becomes a number."""
    member = users["Member"]
    of_company = KeptSelect(lambda company: User.select().where(User.company == company))
    assert [u.id for u in of_company.rows(member.company)] == [member.id]
    by_id = KeptSelect(lambda user_id: User.select().where(User.id == user_id))
    assert by_id.first(str(member.id)).email == member.email


def test_a_kept_select_with_a_join_gives_the_joined_rows(app, users):
    member = users["Member"]
    with_company = KeptSelect(
        lambda user_id: User.select(User, Company).join(Company).where(User.id == user_id).limit(1)
    )
    user = with_company.first(member.id)
    assert user.company.name == "Acme Test Co"
    assert "company" in user.__rel__  # read with the user's row: no second query


def test_a_kept_select_writes_its_sql_once_per_database(tmp_path, users, app):
    built = []

    def build(email):
        built.append(email)
        return User.select().where(User.email == email)

    by_email = KeptSelect(build)
    by_email.rows(users["Member"].email)
    by_email.rows(users["Auditor"].email)
    assert len(built) == 1
    with migrated_app(tmp_path / "second") as second:  # another database: its own SQL, its own rows
        assert second.config["DATABASE"] is not app.config["DATABASE"]
        assert by_email.rows(users["Member"].email) == []
    assert len(built) == 2


def test_a_kept_select_takes_exactly_its_values(app):
    by_email = KeptSelect(lambda email: User.select().where(User.email == email))
    with pytest.raises(TypeError):
        by_email.rows()
    with pytest.raises(TypeError):
        by_email.rows("a@example.test", "b@example.test")


def test_a_kept_select_with_an_in_list_gives_the_rows_of_each_list_and_none_for_an_empty_one(app, users):
    by_ids = KeptSelectIn(lambda ids: User.select().where(User.id.in_(ids)).order_by(User.id))
    ids = sorted(u.id for u in users.values())
    for wanted in (ids[:1], ids[1:3], ids, [ids[0], -1], [str(ids[0])]):
        assert [u.id for u in by_ids.rows(wanted)] == [u.id for u in User.select().where(User.id.in_(wanted))]
    assert by_ids.rows([]) == []
    assert by_ids.rows(iter(ids[:2])) == by_ids.rows(ids[:2])  # any iterable
