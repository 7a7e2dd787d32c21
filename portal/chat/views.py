"""The support chat: start and continue conversations, an answer's source page, its cited documents."""

from __future__ import annotations

from flask import Blueprint, redirect, request, url_for
from flask_login import current_user, login_required

from portal import access
from portal.chat import services
from portal.documents import viewer
from portal.documents.downloads import send_figure, send_original
from portal.errors import NotFound, Refused
from portal.feedback.services import MAX_NOTE_CHARS, REASONS, rating_of
from portal.ingest.limits import MAX_QUESTION_CHARS
from portal.models import REVISIONS_KEPT, Agent, Conversation, Run
from portal.numbers import query_number, query_version
from portal.rendering import render, wants_fragment
from portal.runs.services import STATUS_LABELS

bp = Blueprint("chat", __name__, url_prefix="/chat")

# What every answer's rating widget needs (templates/feedback/_rating.html).
RATING_CONTEXT = {"reasons": REASONS, "max_note_chars": MAX_NOTE_CHARS, "choosing": False, "form": {}}


@bp.route("/")
@login_required
def index():
    if not access.can(current_user, "chat.use"):
        raise NotFound("chat")
    agents = services.offered_agents(current_user)
    return _chat_page(None, chosen=agents[0] if len(agents) == 1 else None, agents=agents)


@bp.route("/agents/<slug>")
@login_required
def new(slug: str):
    """A new conversation with this agent; ``?question=`` fills the question box (a "no evidence" answer's
    links to the other agents carry the question that found nothing), for the member to send or change."""
    question = request.args.get("question", "")[:MAX_QUESTION_CHARS]
    return _chat_page(None, chosen=access.agent_for_chat(current_user, slug), question=question)


@bp.route("/", methods=["POST"])
@login_required
def start():
    if not access.can(current_user, "chat.use"):
        raise NotFound("chat")
    question, slug = request.form.get("question", ""), request.form.get("agent", "")
    if not slug:
        return _refused(None, None, question, "Choose an agent to ask. Nothing was sent.")
    agent = access.agent_for_chat(current_user, slug)
    try:
        conversation, run = services.start_conversation(current_user, agent, question)
    except Refused as refusal:
        return _refused(None, agent, question, refusal.message)
    if not wants_fragment():  # a plain form: redirect, so a reload never asks again
        return redirect(answer_address(run), code=303)
    response = _chat_page(Conversation.get_by_id(conversation.id), fragment="chat/_started.html")
    response.headers["HX-Push-Url"] = url_for("chat.conversation", conversation_id=conversation.id)
    return response


@bp.route("/<int:conversation_id>")
@login_required
def conversation(conversation_id: int):
    """The latest turns; ``?before=<run id>`` the turns before that one (htmx: only them, for "Show earlier")."""
    conversation = access.conversation_for_member(current_user, conversation_id)
    turns = services.turn_page(current_user, conversation, _sources_url, query_number("before"))
    return _chat_page(conversation, turns, fragment="chat/_earlier.html" if turns.before else "chat/_chat.html")


@bp.route("/<int:conversation_id>", methods=["POST"])
@login_required
def ask(conversation_id: int):
    conversation = access.conversation_for_member(current_user, conversation_id)
    agents = services.offered_agents(current_user)
    agent = services.agent_still_offered(conversation, agents)
    if agent is None:
        raise NotFound(conversation_id)
    question = request.form.get("question", "")
    try:
        run = services.continue_conversation(current_user, conversation, agent, question)
    except Refused as refusal:
        return _refused(conversation, None, question, refusal.message)
    if not wants_fragment():
        return redirect(answer_address(run), code=303)
    # htmx appends the new turn alone: the answer costs the same however long the conversation is.
    return render(
        "chat/_answered.html",
        **_chat_context(conversation, agent=agent, agents=agents, turn=services.new_turn(run, _sources_url)),
    )


def _refused(conversation: Conversation | None, chosen: Agent | None, question: str, error: str):
    """A refused question: with htmx only the question form, with its message, replaces the form in place."""
    if not wants_fragment():
        return _chat_page(conversation, chosen=chosen, question=question, error=error, status=422)
    response = render(
        "chat/_ask_form.html",
        status=422,
        conversation=conversation,
        chosen=chosen,
        agents=services.offered_agents(current_user),
        question=question,
        error=error,
        action=_form_action(conversation),
    )
    response.headers.update({"HX-Retarget": "#ask", "HX-Reswap": "outerHTML"})
    return response


def _chat_context(conversation: Conversation | None, **context) -> dict:
    """What every part of the chat needs: the offered agents, the sidebar, the question form and its address."""
    if "agents" not in context:
        context["agents"] = services.offered_agents(current_user)
    return {
        "conversation": conversation,
        "chosen": None,
        "question": "",
        "error": None,
        "status_labels": STATUS_LABELS,
        "action": _form_action(conversation),
        "conversations": services.conversations_of(current_user, services.SIDEBAR_CONVERSATIONS + 1),
        "sidebar_size": services.SIDEBAR_CONVERSATIONS,
        **RATING_CONTEXT,
        **context,
    }


def _chat_page(
    conversation: Conversation | None,
    turns: services.TurnPage | None = None,
    fragment: str = "chat/_chat.html",
    status: int = 200,
    **context,
):
    if conversation is not None:
        context["turn_page"] = turns or services.turn_page(current_user, conversation, _sources_url)
        context.setdefault("agents", services.offered_agents(current_user))
        context["agent"] = services.agent_still_offered(conversation, context["agents"])
    return render("chat/page.html", fragment, status=status, **_chat_context(conversation, **context))


def _form_action(conversation: Conversation | None) -> str:
    if conversation is None:
        return url_for("chat.start")
    return url_for("chat.ask", conversation_id=conversation.id)


def _sources_url(run: Run) -> str:
    return url_for("chat.sources", run_id=run.id)


# gunicorn refuses a request line over its ``limit_request_line`` (``cairn serve`` sets 8,190 bytes; a proxy in front
# may allow less): a question whose address would come near 4,094 bytes, gunicorn's default, is not carried, and the
# member's question box starts empty.
CARRIED_QUESTION_BYTES = 3_000


@bp.app_template_global()
def ask_another_agent_address(agent: Agent, run: Run) -> str:
    """The address of a new conversation with ``agent``, its question box holding ``run``'s question."""
    carried = url_for("chat.new", slug=agent.slug, question=run.question_as_read)
    return carried if len(carried) <= CARRIED_QUESTION_BYTES else url_for("chat.new", slug=agent.slug)


bp.add_app_template_global(services.agents_searching_elsewhere)  # runs/_answer.html: "ask another agent"


@bp.app_template_global()
def answer_address(run: Run) -> str:
    """Where an answer is shown: its turn in its conversation (on the page of older turns that holds it,
    when it is not among the latest), else its source page."""
    if not run.conversation_id:
        return url_for("chat.sources", run_id=run.id)
    return (
        url_for("chat.conversation", conversation_id=run.conversation_id, before=services.cursor_showing(run))
        + f"#turn-{run.id}"
    )


@bp.route("/conversations")
@login_required
def conversations():
    if not access.can(current_user, "chat.use"):
        raise NotFound("chat")
    return render("chat/conversations.html", conversations=services.conversations_of(current_user))


# --- An answer's sources and the documents it cited ------------------------------------


@bp.route("/answers/<int:run_id>/sources")
@login_required
def sources(run_id: int):
    run = access.answer_for_member(current_user, run_id)
    return render(
        "chat/sources.html",
        run=run,
        cited=services.cited_sources(current_user, run),
        answer_html=services.answer_html(run),
        agents=services.offered_agents(current_user),
        feedback=rating_of(current_user, run),
        status_labels=STATUS_LABELS,
        **RATING_CONTEXT,
    )


@bp.route("/answers/<int:run_id>/sources/<int:n>/document")
@login_required
def document(run_id: int, n: int):
    cited = services.cited_document(current_user, run_id, n, query_version())
    view = viewer.chosen_view(request.args.get("view"))
    body = viewer.document_body(
        cited.revision,
        cited.document.kind,
        cited.passages,
        view,
        cited.highlighted,
        lambda number: url_for("chat.figure", run_id=run_id, n=n, number=number, version=cited.revision.version),
    )
    return render(
        "chat/document.html",
        citation=cited,
        cited=cited.highlighted,
        document=cited.document,
        revision=cited.revision,
        receipt=cited.reference,
        run=cited.run,
        body=body,
        view=view,
        can_download=access.member_may_download(current_user, cited.document, cited.revision),
        revisions_kept=REVISIONS_KEPT,
    )


@bp.route("/answers/<int:run_id>/sources/<int:n>/document/figures/<int:number>.webp")
@login_required
def figure(run_id: int, n: int, number: int):
    """A figure of the revision of the cited document the page shows; no other document's or revision's."""
    cited = services.cited_document(current_user, run_id, n, query_version())
    found = viewer.figure_of(cited.revision, number)
    if found is None:
        raise NotFound(number)
    return send_figure(found.path)


@bp.route("/answers/<int:run_id>/sources/<int:n>/document/original")
@login_required
def original(run_id: int, n: int):
    """The current revision's original, only when the document's reader visibility lets this member read it
    directly (the cited revision, when older, is not: without ``?version=`` it is the one chosen)."""
    cited = services.cited_document(current_user, run_id, n, query_version())
    if not access.member_may_download(current_user, cited.document, cited.revision):
        raise NotFound(n)
    return send_original(cited.revision)
