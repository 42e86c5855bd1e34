"""A queue that heals: every ``chimera:running`` slot names the workflow run holding it, and
drain releases a slot whose run is finished or gone.

A slot is taken by a label, and the run that should release it can die without doing so: a
run cancelled in the UI, a runner lost, a queue dispatch that GitHub accepted but never
started. With ``max-open-prs: 1`` such a slot stalls the queue forever. So the holder is
recorded by Chimera's own identity:

* an admitted run's decide posts the run's one outcome comment at once, as ``running`` (its
  key names the workflow run); publish later edits it to the outcome;
* drain's dispatch writes ``dispatched`` (a time) into the issue's ``chimera:queued`` marker.

:func:`heal` asks the Actions API about the run of the newest ``running`` outcome: finished
(``completed``) or gone (404) means the run ended without an outcome, so the slot is released
and that comment says so. A dispatch older than ``grace`` whose run never posted gives the
issue its place back (the queued marker keeps the original time). A ``chimera:running`` label
without either record is left alone: only a record by Chimera's identity says whom to ask.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from chimera.github.queue import LABEL_QUEUED, LABEL_RUNNING
from chimera.github.summary import parse_marker, render_marker

if TYPE_CHECKING:
    from chimera.github.client import GitHubClient

__all__ = ["DISPATCH_GRACE", "Healed", "heal", "mark_dispatched", "running_record"]

# How long a queue dispatch may take to start its run before its place is given back.
DISPATCH_GRACE = timedelta(minutes=20)


@dataclass(frozen=True)
class Healed:
    """A slot drain released: ``issue``, the ``run`` that held it (``None``: a dispatch that
    never started), ``why`` (``completed: cancelled``, ``gone``, ``never started``), and the
    id of the run's ``running`` outcome comment (to edit; ``None`` for a dispatch)."""

    issue: int
    run: str | None
    why: str
    comment_id: int | None = None


def mark_dispatched(
    client: GitHubClient,
    issue: int,
    identities: Collection[str],
    *,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> None:
    """Write the dispatch time into the issue's ``chimera:queued`` marker (in place).

    Raises:
        GitHubError: the API failed after retries.
    """
    for cid, author, body in client.comments(issue):
        data = parse_marker(body, "queued") if author in identities else None
        if data is None or data.get("issue") != issue:
            continue
        data["dispatched"] = now().isoformat(timespec="seconds")
        lines = body.rstrip().splitlines()
        client.edit_comment(issue, cid, "\n".join([*lines[:-1], render_marker("queued", data)]))
        return


def running_record(
    client: GitHubClient, issue: int, identities: Collection[str]
) -> tuple[tuple[int, str] | None, str | None]:
    """The newest ``running`` outcome ``(comment id, run id)`` and the queued marker's
    ``dispatched`` time, each by Chimera's identity (``None`` when absent).

    Raises:
        GitHubError: the API failed after retries.
    """
    running: tuple[int, str] | None = None
    dispatched: str | None = None
    for cid, author, body in client.comments(issue):
        if author not in identities:
            continue
        outcome = parse_marker(body, "outcome")
        if outcome is not None and outcome.get("issue") == issue:
            if outcome.get("kind") == "running":
                running = (cid, str(outcome.get("key", "")).split(":", 1)[0])
            continue
        queued = parse_marker(body, "queued")
        if queued is not None and queued.get("issue") == issue and queued.get("dispatched"):
            dispatched = str(queued["dispatched"])
    return running, dispatched


def heal(
    client: GitHubClient,
    identities: Collection[str],
    *,
    grace: timedelta = DISPATCH_GRACE,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> list[Healed]:
    """Release every ``chimera:running`` slot whose recorded run is finished or gone, and give
    back the place of a dispatch that never started. The caller says so on the issue.

    Raises:
        GitHubError: the API failed after retries.
    """
    healed: list[Healed] = []
    for info in client.issues_with_label(LABEL_RUNNING):
        running, dispatched = running_record(client, info.number, identities)
        if running is not None and running[1].isdigit():
            state = client.workflow_run(int(running[1]))
            if state is not None and state[0] != "completed":
                continue
            why = "gone" if state is None else f"completed: {state[1] or 'unknown'}"
            client.remove_label(info.number, LABEL_RUNNING)
            healed.append(Healed(info.number, running[1], why, running[0]))
        elif running is None and dispatched is not None:
            try:
                at = datetime.fromisoformat(dispatched)
            except ValueError:
                continue
            if now() - at < grace:
                continue
            client.add_labels(info.number, LABEL_QUEUED)
            client.remove_label(info.number, LABEL_RUNNING)
            healed.append(Healed(info.number, None, "never started"))
    return healed
