"""A queue that heals: every live slot claim names the workflow run holding it, and drain
releases a claim whose run is finished or gone.

A slot is taken by a claim (:mod:`chimera.github.queue.claims`), and the run that should resolve it
can die without doing so: a run cancelled in the UI, a runner lost, a queue dispatch that
GitHub accepted but never started. With ``max-open-prs: 1`` such a slot stalls the queue
forever. So the holder is recorded by Chimera's own identity, in the claim itself:

* an admitted run's claim is its one outcome comment, ``running``, whose key names the
  workflow run; publish later edits it to the outcome;
* a drain's claim names the dispatch and its time (``dispatched``) until the dispatched run
  adopts it.

:func:`heal` asks the Actions API about the run of every live claim: finished (``completed``)
or gone (404) means the run ended without an outcome, so the caller states that outcome on the
claim's comment and the slot is released. A dispatch older than ``grace`` that no run adopted
gives the issue its place back (the queued marker keeps the original time). A
``chimera:running`` label that Chimera set and no live claim backs is removed (its claim was
resolved by a job that died before the label went).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from chimera.github.gate.starter import holds_slot
from chimera.github.queue.claims import Claim, claims_on, live_claims
from chimera.github.queue.queue import LABEL_QUEUED, LABEL_RUNNING

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient

__all__ = ["DISPATCH_GRACE", "Healed", "heal"]

# How long a queue dispatch may take to start its run before its place is given back.
DISPATCH_GRACE = timedelta(minutes=20)


@dataclass(frozen=True)
class Healed:
    """A slot drain released: ``issue``, the ``run`` that held it (``None``: a dispatch that
    never started), ``why`` (``completed: cancelled``, ``gone``, ``never started``), and the
    claim (whose comment the caller edits to the outcome; ``None`` for a dispatch, whose
    claim is deleted: it never started)."""

    issue: int
    run: str | None
    why: str
    claim: Claim | None = None

    @property
    def comment_id(self) -> int | None:
        return self.claim.comment_id if self.claim is not None else None


def heal(
    client: GitHubClient,
    identities: Collection[str],
    *,
    say: Callable[[Healed], None] = lambda healed: None,
    grace: timedelta = DISPATCH_GRACE,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> list[Healed]:
    """Release every live claim whose run is finished or gone (``say`` states the outcome
    on its comment first), give back the place of a dispatch that never started, and drop a
    ``chimera:running`` label no live claim backs.

    Raises:
        GitHubError: the API failed after retries.
    """
    labelled = client.issues_with_label(LABEL_RUNNING)
    claims = live_claims(client, identities, running=[i.number for i in labelled], now=now())
    healed: list[Healed] = []
    for claim in (c for c in claims if c.live):
        if claim.run.isdigit():
            state = client.workflow_run(int(claim.run))
            if state is not None and state[0] != "completed":
                continue
            why = "gone" if state is None else f"completed: {state[1] or 'unknown'}"
            done = Healed(claim.issue, claim.run, why, claim)
            say(done)
        elif not claim.run and claim.dispatched:
            try:
                at = datetime.fromisoformat(claim.dispatched)
            except ValueError:
                continue
            if now() - at < grace:
                continue
            client.add_labels(claim.issue, LABEL_QUEUED)
            client.delete_comment(claim.issue, claim.comment_id)
            done = Healed(claim.issue, None, "never started")
        else:
            continue
        healed.append(done)
        if not any(c.live for c in claims_on(client, claim.issue, identities)):
            client.remove_label(claim.issue, LABEL_RUNNING)
    held = {c.issue for c in claims if c.live}
    for info in labelled:
        if info.number in held or any(h.issue == info.number for h in healed):
            continue
        if holds_slot(client, info.number, LABEL_RUNNING, identities):
            client.remove_label(info.number, LABEL_RUNNING)
    return healed
