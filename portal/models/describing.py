"""A request to describe a document's figures, one figure per step (migrations/0019)."""

from __future__ import annotations

from peewee import CharField, DateTimeField, ForeignKeyField, IntegerField, TextField

from portal.db import BaseModel, JSONTextField
from portal.models.clock import utcnow
from portal.models.packs import Document
from portal.models.people import User


class DescribeJob(BaseModel):
    """Which figures of which version are being described, what came back so far, and how it ended.

    Descriptions wait here until the last figure, then go into one new revision together.
    """

    document = ForeignKeyField(Document, backref="describe_jobs", on_delete="CASCADE")
    user = ForeignKeyField(User, null=True, backref="describe_jobs", on_delete="SET NULL")
    base_version = IntegerField()
    figures = JSONTextField(default=list)  # [figure number] in order
    done = IntegerField(default=0)  # how many of ``figures`` were tried
    descriptions = JSONTextField(default=dict)  # {"figure number": description}
    notes = JSONTextField(default=list)  # one line per figure tried, shown as progress
    status = CharField(max_length=16, default="running")  # running, then written or nothing_written
    message = TextField(default="")
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(null=True)  # when a step last claimed a figure or added a result (migrations/0024)
    finished_at = DateTimeField(null=True)

    @property
    def last_moved(self):
        return self.updated_at or self.created_at

    @property
    def waiting(self) -> bool:
        """Every figure taken, the job still running: another request is describing one of its last figures."""
        return self.status == "running" and self.done >= len(self.figures)

    class Meta:
        table_name = "describe_job"

    @classmethod
    def end_running(cls, document_pks) -> None:
        """End the running jobs of documents being deleted (in the deleting transaction): their pages are gone,
        so no step would ever end them, and a job must not stay "running" for ever."""
        cls.update(
            status="nothing_written", message="The document was deleted; nothing was written.", finished_at=utcnow()
        ).where(cls.document.in_(list(document_pks)) & (cls.status == "running")).execute()
