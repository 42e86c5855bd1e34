"""The one polite refusal of an ``@chimera`` command: after the API's permission check, so a
person without write access hears why, not a usage hint; a bot hears nothing. Shared by the
decide job (the verbs that start jobs) and the command job (``stop``, ``status``, unknown
verbs), which each answer their own verbs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chimera.github.action.context import post_outcome
from chimera.github.gate.permissions import has_write
from chimera.github.trust.summary import code

if TYPE_CHECKING:
    from chimera.github.action.context import ActionContext
    from chimera.github.client.client import GitHubClient
    from chimera.github.gate.decision import Decision
    from chimera.github.trust.settings import ActionSettings

__all__ = ["command_refusal", "explain_command"]


def command_refusal(client: GitHubClient, settings: ActionSettings, actor: str) -> str | None:
    """Why ``actor`` may not give a command, in one line; ``""`` when nobody is answered (a
    bot: two bots answering each other would never stop); ``None`` when ``actor`` may (a
    person with the write, maintain or admin role, asked through the API).

    Raises:
        GitHubError: the API failed after retries.
    """
    if client.user_type(actor) == "Bot":
        return ""  # a bot gets no reply at all
    role = client.permission(actor)
    if not has_write(role):
        return (
            f"@chimera commands are taken from people with the write, maintain or admin role; "
            f"{code(actor, 60)} has the {code(role, 20)} role here, so nothing was done"
        )
    return None


def explain_command(
    ctx: ActionContext, client: GitHubClient, settings: ActionSettings, decision: Decision
) -> bool:
    """Answer an explained ``ignore`` of a comment command once: the permission refusal when
    the commenter lacks a write role, else the decision's reason. Returns whether anything
    was posted (a bot's comment gets nothing).

    Raises:
        GitHubError: the API failed after retries.
    """
    target = decision.pull or decision.issue
    if target is None or decision.actor is None:
        return False
    refusal = command_refusal(client, settings, decision.actor)
    if refusal == "":
        return False
    post_outcome(ctx, client, target, "refused", f"{refusal or decision.reason}.")
    return True
