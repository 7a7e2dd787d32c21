"""The API's search and asking: passages from the packs the token's user may read, and a question
asked of an agent (``portal.runs.ask``). Packs and documents are in ``portal.api.packs``."""

from __future__ import annotations

from portal import access
from portal.answers.references import grounding_reference
from portal.api import schemas as s
from portal.api.blueprint import ASKING, NOT_FOUND, endpoint, json_response
from portal.api.spec import JSON
from portal.models import User
from portal.runs.ask import ask
from portal.runs.services import run_as_json


@endpoint(
    "GET",
    "/search",
    summary="Search the packs you may read",
    tag=ASKING,
    query=s.SearchQuery,
    responses=((200, "Passages, best first; `no_evidence` when no term matched.", s.SearchOut),),
    errors=(NOT_FOUND,),
)
def search(user: User, query: s.SearchQuery):
    packs = (
        [access.pack_for(user, slug) for slug in dict.fromkeys(query.pack)]
        if query.pack
        else list(access.readable_packs(user))
    )
    results = access.search_for_reader(user, packs, query.q, query.limit)
    return json_response(
        s.SearchOut,
        {
            "query": query.q,
            "no_evidence": results.no_evidence,
            "hits": [
                {
                    **hit.as_json(),
                    "sha256": hit.sha256,
                    "grounding": grounding_reference(
                        hit.document_id, hit.version, hit.sha256, hit.line_start, hit.line_end
                    ),
                }
                for hit in results.hits
            ],
        },
    )


@endpoint(
    "POST",
    "/agents/{slug}/ask",
    summary="Ask an agent",
    tag=ASKING,
    description="Staff ask any agent; a Member asks the agents offered to them in the support chat. The run "
    "is stored like one from the try page. A refused question (`empty_question`, "
    "`question_too_long`) is 422.",
    path_params=s.AgentPath,
    body={JSON: s.AskRequest},
    responses=((200, "The run: answer, warnings, references and the answer's citations.", s.RunOut),),
    errors=(NOT_FOUND, (415, "The body is not JSON."), (422, "The question was refused.")),
)
def ask_agent(user: User, slug: str, body: s.AskRequest):
    agent = access.agent_for_asking(user, slug)
    return json_response(s.RunOut, run_as_json(ask(agent, user, body.question)))
