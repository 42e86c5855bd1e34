"""The labels Chimera uses, and creating the missing ones with their colours and descriptions.

GitHub creates a label on first use by itself, grey and without a description; Chimera creates
its own first, so a maintainer sees at a glance what each means. The trigger label is the
exception: decide runs only once an issue carries it, so ``chimera init --github`` and
``chimera doctor --fix`` create it; decide (which holds ``issues: write``) creates the others
when a run first needs them (:func:`ensure_labels`), idempotently — a label another job made
meanwhile is no error — and names in one line those its token may not create.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chimera.errors import GitHubPermissionDenied
from chimera.github.queue.queue import LABEL_DEFINITIONS

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient

__all__ = ["EnsuredLabels", "LabelSpec", "chimera_labels", "ensure_labels"]


@dataclass(frozen=True)
class LabelSpec:
    """One label: its name, colour (six hex digits, no ``#``) and description."""

    name: str
    color: str
    description: str

    def gh_command(self) -> str:
        """The ``gh label create`` line that makes it (for a fix a person runs)."""
        return (
            f'gh label create {self.name} --color {self.color} --description "{self.description}"'
        )


def chimera_labels(trigger: str = "chimera") -> tuple[LabelSpec, ...]:
    """Every label Chimera uses, the trigger label (named ``trigger``, the ``label`` input)
    first."""
    (_, color, description), *others = LABEL_DEFINITIONS
    return (
        LabelSpec(trigger, color, description),
        *(LabelSpec(name, c, d) for name, c, d in others),
    )


@dataclass(frozen=True)
class EnsuredLabels:
    """What :func:`ensure_labels` did: labels it ``created``, those that ``existed``, and
    those the token was ``denied`` creating."""

    created: tuple[str, ...] = ()
    existed: tuple[str, ...] = ()
    denied: tuple[str, ...] = ()

    @property
    def note(self) -> str:
        """One line naming the labels the token may not create (``""``: none)."""
        if not self.denied:
            return ""
        return (
            f"the token may not create the labels {', '.join(self.denied)} (it needs "
            "issues: write); GitHub creates them grey on first use, and `chimera doctor --fix` "
            "with a token that may gives them their colours"
        )


def ensure_labels(client: GitHubClient, labels: tuple[LabelSpec, ...]) -> EnsuredLabels:
    """Create each of ``labels`` the repository lacks (one listing, then one write per missing
    label); a label that appears meanwhile counts as existing.

    Raises:
        GitHubError: the listing or a write failed for another reason than a refusal.
    """
    present = client.label_names()
    created: list[str] = []
    existed: list[str] = []
    denied: list[str] = []
    for spec in labels:
        if spec.name in present:
            existed.append(spec.name)
            continue
        if denied:
            # One refusal says the token may not: the rest would be refused too.
            denied.append(spec.name)
            continue
        try:
            made = client.create_label(spec.name, spec.color, spec.description)
        except GitHubPermissionDenied:
            denied.append(spec.name)
            continue
        (created if made else existed).append(spec.name)
    return EnsuredLabels(tuple(created), tuple(existed), tuple(denied))
