"""The audit log: who did what to which target. Agents, packs, documents and API tokens all write it."""

from __future__ import annotations

from portal.models import AuditLog, User


def audit(actor: User | None, action: str, target, detail: dict) -> AuditLog:
    """Record who did what to which target (``actor`` None: the command line or the seed).

    ``detail`` also keeps the actor's e-mail, so the entry still says who after the user is gone.
    Call it inside the transaction of the change it records: a change and its entry stand or fall together.
    """
    detail = {**detail, "by": actor.email if actor is not None else "command line"}
    return AuditLog.create(
        actor=actor.id if actor is not None else None,
        action=action,
        target_type=type(target).__name__.lower(),
        target_id=target.id,
        detail=detail,
    )
