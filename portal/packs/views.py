"""Pack list, pack page and pack search; editing a pack and deleting it after a confirmation."""

from __future__ import annotations

from flask import Blueprint, flash, redirect, request, url_for
from flask_login import current_user, login_required

from portal import access
from portal.answers.references import section_path
from portal.companies import company_names
from portal.errors import NotFound, Refused
from portal.meanwhile import ChangedMeanwhile, shown_base
from portal.numbers import form_number, query_page
from portal.packs.deletion import delete_pack, pack_contents
from portal.packs.services import EDITED_FIELDS, create_pack, documents_page, edit_pack, live_document_counts
from portal.rendering import render, wants_fragment
from portal.request_text import query_search
from portal.search import vocabulary
from portal.wording import counted, edit_stamp

bp = Blueprint("packs", __name__, url_prefix="/packs")


@bp.app_template_filter("section")
def section(heading_path: str, title: str) -> str:
    """The heading path without the document title it usually starts with (``references.section_path``)."""
    return section_path(heading_path, title)


@bp.route("/")
@login_required
def index():
    if not access.can(current_user, "packs.read"):
        raise NotFound("packs")
    return _packs_page(form={})


@bp.route("/", methods=["POST"])
@login_required
def create():
    if not access.can(current_user, "documents.write"):
        raise NotFound("packs")
    form = request.form
    try:
        pack = create_pack(
            form.get("slug", ""),
            form.get("title", ""),
            form.get("kind", "generic"),
            form.get("company") or None,
            form.get("description", ""),
        )
    except Refused as refusal:
        return _packs_page(form=form, refusal=refusal, status=422)
    return redirect(url_for("packs.show", slug=pack.slug), code=303)


# The field of the new-pack form each refusal of ``create_pack`` is about: marked invalid, described by the error.
REFUSED_FIELD = {
    "bad_slug": "slug",
    "slug_reused": "slug",
    "slug_taken": "slug",
    "bad_title": "title",
    "bad_description": "description",
    "bad_kind": "kind",
    "bad_company": "company",
    "unknown_company": "company",
}
# ... and of the edit form, which holds only these (a refusal of another field shows at the top)
EDIT_REFUSED_FIELD = {"bad_title": "title", "bad_description": "description", "bad_vocabulary": "vocabulary"}


def _packs_page(form, refusal: Refused | None = None, status: int = 200):
    """The pack list with the new-pack form (a company pack chooses among the existing companies)."""
    return render(
        "packs/index.html",
        status=status,
        packs=list(access.readable_packs(current_user)),
        counts=live_document_counts(),
        companies=company_names(),
        form=form,
        error=refusal.message if refusal else None,
        invalid=REFUSED_FIELD.get(refusal.reason) if refusal else None,
    )


DOCUMENT_LIST = "documents/_documents.html"


@bp.route("/<slug>")
@login_required
def show(slug: str):
    # A pager link names its page: htmx then swaps the document list alone, and search results stay as shown.
    paging = "page" in request.args and wants_fragment()
    return pack_page(access.pack_for(current_user, slug), query_search(), DOCUMENT_LIST if paging else None)


@bp.route("/<slug>/search")
@login_required
def search(slug: str):
    pack = access.pack_for(current_user, slug)
    return pack_page(pack, query_search(), "packs/_results.html")


def pack_page(pack, query: str = "", fragment: str | None = None, outcomes: list | None = None, status: int = 200):
    """The pack's page with the documents the reader may read, for a query its search results, after an
    upload its outcomes; ``fragment``: what htmx swaps in instead (a search's results, an upload's outcomes)."""
    searching = query.strip() and fragment != DOCUMENT_LIST
    results = access.search_for_reader(current_user, [pack], query) if searching else None
    return render(
        "packs/show.html",
        fragment,
        status=status,
        pack=pack,
        outcomes=outcomes or [],
        documents=documents_page(current_user, pack, query_page()),
        query=query,
        results=results,
        vocabulary_entries=vocabulary.entry_count(pack.vocabulary),
    )


@bp.route("/<slug>/edit", methods=["GET", "POST"])
@login_required
def edit(slug: str):
    pack = access.pack_for(current_user, slug, "documents.write")
    if request.method == "GET":
        shown = {name: getattr(pack, name) for name in EDITED_FIELDS}
        return _edit_page(pack, shown, shown, edit_stamp(pack.updated_at))
    form = request.form
    base = shown_base(form, EDITED_FIELDS)
    try:
        edit_pack(
            current_user,
            pack,
            form.get("title", ""),
            form.get("description", ""),
            form.get("vocabulary"),
            based_on=form.get("based_on"),
            base=base,
        )
    except ChangedMeanwhile as refusal:  # both changes in the form, based on the row the refusal read
        pack.title = refusal.current["title"]  # the heading names the pack as it now is (never saved from here)
        return _edit_page(pack, refusal.form, refusal.current, refusal.based_on, refusal.message, 409)
    except Refused as refusal:
        invalid = EDIT_REFUSED_FIELD.get(refusal.reason)
        return _edit_page(pack, form, base or {}, form.get("based_on"), refusal.message, 422, invalid)
    flash("Saved the pack's title, description and vocabulary.")
    return redirect(url_for("packs.show", slug=slug), code=303)


def _edit_page(
    pack,
    form,
    base: dict,
    based_on: str | None,
    error: str | None = None,
    status: int = 200,
    invalid: str | None = None,
):
    """The edit form holding ``form``, based on ``base`` (the values it shows as saved) and ``based_on`` (when
    the pack had last changed then), which a save carries back (``services.edit_pack``); ``invalid``: the field a
    refusal is about, marked and given the focus as on the new-pack form."""
    return render(
        "packs/edit.html",
        status=status,
        pack=pack,
        form=form,
        base=base,
        based_on=based_on,
        error=error,
        invalid=invalid,
    )


@bp.route("/<slug>/delete", methods=["GET", "POST"])
@login_required
def delete(slug: str):
    """GET: what deleting the pack removes, and the button; POST: delete it, if it has not changed since."""
    pack = access.pack_for(current_user, slug, "documents.write")
    if request.method == "GET":
        return render("packs/delete.html", pack=pack, contents=pack_contents(pack), error=None)
    try:
        removed = delete_pack(current_user, pack, form_number("generation"))
    except Refused as refusal:
        return render("packs/delete.html", status=409, pack=pack, contents=pack_contents(pack), error=refusal.message)
    flash(
        f"Deleted the pack {pack.title}: {counted(removed.documents, 'document')}, "
        f"{counted(removed.revisions, 'revision')}, {counted(removed.files, 'file')}; "
        f"its slug {pack.slug} stays reserved."
    )
    return redirect(url_for("packs.index"), code=303)
