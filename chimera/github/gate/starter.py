"""Who started a queued run, and which ``chimera:running`` labels hold queue slots — both read
from the issue's record through the API, never from a dispatch's inputs or a label alone.

* :func:`queued_starter`: a queue dispatch comes from ``github-actions[bot]`` or the App,
  which any workflow of the repository can imitate, so whose permission counts is re-derived:
  the last person who added the trigger label, else (a run asked for with ``@chimera run`` or
  ``retry`` and queued) the last person who commented that command.
* :func:`holds_slot`: anyone with triage rights can add ``chimera:running`` by hand; only the
  label as Chimera's own identities set it counts, so people cannot exhaust the slots.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chimera.github.gate.commands import parse_command

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient

__all__ = ["START_VERBS", "Starter", "holds_slot", "queued_starter"]

START_VERBS = frozenset({"run", "retry"})


@dataclass(frozen=True)
class Starter:
    """Who asked for a run: ``login``, and ``via`` ``label`` or ``command``."""

    login: str
    via: str


def queued_starter(
    client: GitHubClient, issue: int, label: str, identities: Collection[str]
) -> Starter | None:
    """The person who asked for ``issue``'s queued run, or ``None`` when nobody did.

    Raises:
        GitHubError: the API failed after retries.
    """
    labeller = client.labeller(issue, label)
    if labeller is not None and labeller not in identities:
        return Starter(labeller, "label")
    commander: str | None = None
    for _cid, author, body in client.comments(issue):
        if author in identities:
            continue
        command = parse_command(body)
        if command is not None and command.verb in START_VERBS:
            commander = author
    return Starter(commander, "command") if commander else None


def holds_slot(client: GitHubClient, issue: int, label: str, identities: Collection[str]) -> bool:
    """Whether ``label`` on ``issue`` was last added by one of Chimera's ``identities``.

    Raises:
        GitHubError: the API failed after retries.
    """
    return client.labeller(issue, label) in identities
