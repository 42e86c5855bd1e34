"""The task graph of a project run: one card per unmet requirement, ordered by depends_on.

A Kanban-style DAG: a card is *ready* when every card it depends on is accepted. Cards whose
requirement is ``risk: high`` are scheduled as late as the DAG allows (picked only when no
other card is ready), so the human checkpoint they cause pauses as little work as possible.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from chimera.spec.model import Requirement, Risk

RISK_HIGH_REASON = "requirement is risk: high"


class CardStatus(StrEnum):
    """Where a card stands.

    ``pending`` → ``running`` → ``accepted`` (check_drift passed) | ``awaiting_approval``
    (verified, held for a human) | ``failed`` (attempts exhausted) | ``blocked`` (a card it
    depends on failed).
    """

    PENDING = "pending"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    ACCEPTED = "accepted"
    FAILED = "failed"
    BLOCKED = "blocked"

    @property
    def done(self) -> bool:
        return self in (CardStatus.ACCEPTED, CardStatus.FAILED, CardStatus.BLOCKED)


@dataclass
class Card:
    """One unit of work: make ``requirement_id`` pass without turning a green one red.

    Attributes:
        id: unique card id (the requirement id; ``id#2`` for a re-spawned card).
        requirement_id: the requirement this card must make pass.
        depends_on: ids of the cards that must be accepted first.
        risky: statically risky (``risk: high``); a diff can make a card risky later.
        status: see :class:`CardStatus`.
        attempts: attempts spent on this card (summed over its solves).
        notes: one-line outcomes, oldest first (verdicts, stop reasons).
        interrupted: how many times a crash stopped the card mid-solve (its solve then
            continues from its checkpoint).
    """

    id: str
    requirement_id: str
    depends_on: tuple[str, ...] = ()
    risky: bool = False
    status: CardStatus = CardStatus.PENDING
    attempts: int = 0
    notes: list[str] = field(default_factory=list)
    risk_reasons: list[str] = field(default_factory=list)
    interrupted: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "requirement_id": self.requirement_id,
            "depends_on": list(self.depends_on),
            "risky": self.risky,
            "status": self.status.value,
            "attempts": self.attempts,
            "notes": list(self.notes),
            "risk_reasons": list(self.risk_reasons),
            "interrupted": self.interrupted,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Card:
        return cls(
            id=str(data["id"]),
            requirement_id=str(data["requirement_id"]),
            depends_on=tuple(data.get("depends_on", ())),
            risky=bool(data.get("risky", False)),
            status=CardStatus(data.get("status", "pending")),
            attempts=int(data.get("attempts", 0)),
            notes=list(data.get("notes", [])),
            risk_reasons=list(data.get("risk_reasons", [])),
            interrupted=int(data.get("interrupted", 0)),
        )


class TaskGraph:
    """Cards keyed by id, in creation order, with DAG scheduling."""

    def __init__(self, cards: Iterable[Card] = ()) -> None:
        self.cards: dict[str, Card] = {}
        for card in cards:
            self.add(card)

    @classmethod
    def for_requirements(
        cls, requirements: Iterable[Requirement], targets: Iterable[str]
    ) -> TaskGraph:
        """One card per target, depending on the cards of its targeted dependencies.

        A dependency outside ``targets`` is not a card: it already passes (or is unrelated red
        work the run does not own), so it does not gate the schedule.
        """
        wanted = set(targets)
        return cls(cls.card_for(r, wanted) for r in requirements if r.id in wanted)

    @staticmethod
    def card_for(requirement: Requirement, targets: Iterable[str]) -> Card:
        """The card of ``requirement``: risky when it is ``risk: high``, depending on the
        cards of those of its ``depends_on`` that are in ``targets``."""
        wanted = set(targets)
        high = requirement.risk is Risk.HIGH
        return Card(
            id=requirement.id,
            requirement_id=requirement.id,
            depends_on=tuple(d for d in requirement.depends_on if d in wanted),
            risky=high,
            risk_reasons=[RISK_HIGH_REASON] if high else [],
        )

    def add(self, card: Card) -> None:
        if card.id in self.cards:
            raise ValueError(f"duplicate card id {card.id!r}")
        self.cards[card.id] = card

    def respawn(self, requirement_id: str, *, risky: bool = False) -> Card:
        """A fresh card for a requirement whose earlier card was accepted but is red again
        (``risky``: its requirement is ``risk: high``)."""
        n = 2
        while f"{requirement_id}#{n}" in self.cards:
            n += 1
        card = Card(
            id=f"{requirement_id}#{n}",
            requirement_id=requirement_id,
            risky=risky,
            risk_reasons=[RISK_HIGH_REASON] if risky else [],
        )
        self.add(card)
        return card

    def _deps_accepted(self, card: Card) -> bool:
        return all(
            self.cards[d].status is CardStatus.ACCEPTED for d in card.depends_on if d in self.cards
        )

    def _deps_dead(self, card: Card) -> list[str]:
        return [
            d
            for d in card.depends_on
            if d in self.cards and self.cards[d].status in (CardStatus.FAILED, CardStatus.BLOCKED)
        ]

    def propagate_blocked(self) -> list[Card]:
        """Mark pending cards whose dependency failed as blocked; returns the cards marked."""
        changed: list[Card] = []
        progress = True
        while progress:
            progress = False
            for card in self.cards.values():
                if card.status is CardStatus.PENDING and (dead := self._deps_dead(card)):
                    card.status = CardStatus.BLOCKED
                    card.notes.append(f"blocked: dependency {', '.join(dead)} did not pass")
                    changed.append(card)
                    progress = True
        return changed

    def ready(self) -> list[Card]:
        """Pending cards whose dependencies are accepted; risky cards only when nothing else is.

        Order: creation order among non-risky cards, then risky cards.
        """
        ready = [
            c
            for c in self.cards.values()
            if c.status is CardStatus.PENDING and self._deps_accepted(c)
        ]
        safe = [c for c in ready if not c.risky]
        # Cards run one at a time, so when no safe card is ready every pending safe card
        # waits on a risky one (or on nothing that can still pass): the risky card goes now.
        return safe or [c for c in ready if c.risky]

    def next_card(self) -> Card | None:
        ready = self.ready()
        return ready[0] if ready else None

    def by_status(self, status: CardStatus) -> list[Card]:
        return [c for c in self.cards.values() if c.status is status]

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.cards.values()]

    @classmethod
    def from_json(cls, data: Iterable[Mapping[str, Any]]) -> TaskGraph:
        return cls(Card.from_json(d) for d in data)
