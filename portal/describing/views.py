"""Describe images: start a job from the document page and step through it, one figure per request."""

from __future__ import annotations

from flask import Blueprint, flash, redirect, url_for
from flask_login import current_user, login_required

from portal import access
from portal.describing import service
from portal.errors import NotFound, Refused
from portal.models import DescribeJob
from portal.rendering import render, wants_fragment

bp = Blueprint("describing", __name__, url_prefix="/packs/<slug>/documents/<doc_id>/describe")


def _document(slug: str, doc_id: str):
    pack = access.pack_for(current_user, slug, "documents.describe")
    return pack, access.document_for(current_user, pack, doc_id)


@bp.route("", methods=["POST"])
@login_required
def start(slug: str, doc_id: str):
    pack, document = _document(slug, doc_id)
    try:
        job = service.start(document, current_user)
    except Refused as refusal:
        if not wants_fragment():
            flash(refusal.message, "error")
            return redirect(url_for("documents.show", slug=slug, doc_id=doc_id), code=303)
        return render("describing/_job.html", status=422, pack=pack, document=document, job=None, error=refusal.message)
    if not wants_fragment():  # without JavaScript the whole job runs in this request
        job = service.run_to_end(job)
        message = service.STILL_RUNNING if job.status == "running" else job.message
        flash(" ".join([*job.notes, message]), "error" if job.status != "written" else "message")
        return redirect(url_for("documents.show", slug=slug, doc_id=doc_id), code=303)
    return render("describing/_job.html", pack=pack, document=document, job=job, error=None)


@bp.route("/jobs/<int:job_id>", methods=["POST"])
@login_required
def step(slug: str, doc_id: str, job_id: int):
    pack, document = _document(slug, doc_id)
    job = DescribeJob.get_or_none((DescribeJob.id == job_id) & (DescribeJob.document == document.id))
    if job is None:
        raise NotFound(job_id)
    job = service.step(job)
    if not wants_fragment():
        return redirect(url_for("documents.show", slug=slug, doc_id=doc_id), code=303)
    return render("describing/_job.html", pack=pack, document=document, job=job, error=None)
