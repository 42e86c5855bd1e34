"""``sequential``: roles in order, each seeing the earlier outputs consolidated."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from chimera.crews.model import CrewDefinition, CrewKind, Role, unknown_roles
from chimera.spec.yamlload import NodePath

if TYPE_CHECKING:
    from chimera.crews.crew import Crew


class Sequential(CrewKind):
    """``sequential: {order: [a, b]}`` — ``order`` defaults to the roles' file order; the
    last role's answer is the crew's."""

    kind_name: ClassVar[str] = "sequential"

    order: list[str] = Field(default_factory=list, description="Role names, first to last.")

    def check_roles(self, roles: Sequence[Role]) -> list[tuple[NodePath, str]]:
        problems = unknown_roles(self.order, roles, "order")
        seen: set[str] = set()
        for i, name in enumerate(self.order):
            if name in seen:
                problems.append((("order", i), f"'order' names role '{name}' twice"))
            seen.add(name)
        return problems

    def build(self, definition: CrewDefinition) -> Crew:
        from chimera.crews.crew import SequentialCrew

        return SequentialCrew(definition, self.order)

    def describe(self) -> str:
        return "sequential"
