"""``parallel`` and ``supervisor``: workers take the task at once, outputs consolidated."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from chimera.crews.model import CrewDefinition, CrewKind, Role, unknown_roles
from chimera.spec.yamlload import NodePath

if TYPE_CHECKING:
    from chimera.crews.crew import Crew

MAX_ROUNDS = 5


class Parallel(CrewKind):
    """``parallel: {}`` — every role takes the task at once under its own budget; the answer
    is their outputs consolidated (no synthesis call)."""

    kind_name: ClassVar[str] = "parallel"

    def build(self, definition: CrewDefinition) -> Crew:
        from chimera.crews.crew import ParallelCrew

        return ParallelCrew(definition)


class Supervisor(CrewKind):
    """``supervisor: {role: lead, workers: [a, b], rounds: 2}`` — the workers (default: every
    other role) take the task in parallel, the supervisor synthesises their consolidated
    outputs or sends some back, for at most ``rounds`` rounds. The supervisor has no tools: it
    delegates, it does not do the work."""

    kind_name: ClassVar[str] = "supervisor"

    role: str = Field(min_length=1, description="The supervising role's name.")
    workers: list[str] = Field(default_factory=list, description="Worker role names.")
    rounds: int = Field(default=2, ge=1, le=MAX_ROUNDS, description="Rounds at most.")

    def worker_names(self, roles: Sequence[Role]) -> list[str]:
        return self.workers or [r.name for r in roles if r.name != self.role]

    def check_roles(self, roles: Sequence[Role]) -> list[tuple[NodePath, str]]:
        problems = unknown_roles([self.role], roles, "role")
        problems = [(("role",), m) for _, m in problems]
        problems += unknown_roles(self.workers, roles, "workers")
        for i, name in enumerate(self.workers):
            if name == self.role:
                problems.append((("workers", i), f"the supervisor '{name}' cannot be a worker"))
        by_name = {r.name: r for r in roles}
        sup = by_name.get(self.role)
        if sup is not None and sup.tools:
            problems.append(
                (
                    ("role",),
                    f"the supervisor '{self.role}' has tools ({', '.join(sup.tools)}); a "
                    "supervisor delegates and synthesises, so it takes none",
                )
            )
        if not [n for n in self.worker_names(roles) if n in by_name]:
            problems.append(
                ((), "a supervisor crew needs at least one worker besides the supervisor")
            )
        return problems

    def build(self, definition: CrewDefinition) -> Crew:
        from chimera.crews.crew import SupervisorCrew

        return SupervisorCrew(
            definition, self.role, self.worker_names(definition.roles), self.rounds
        )

    def describe(self) -> str:
        return f"supervisor {self.role}, up to {self.rounds} round(s)"
