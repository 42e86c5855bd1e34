"""The crew file's typed model: :class:`Role`, :class:`CrewKind`, :class:`CrewDefinition`.

A crew file (``.chimera.d/crews/NAME.yaml``) names its roles and exactly one kind key — how the
roles work together — the way a requirement names exactly one check::

    crew: review
    budget: {tokens: 40000}
    roles:
      - name: tests
        goal: Decide whether the change is tested.
        instructions: Name the behaviour no test covers.
        model: scripted:tests.yaml        # or rung: 1, or neither (the run's model)
        budget: {tokens: 8000}
      - name: security
        goal: Decide whether the change is safe.
    parallel: {}                          # or sequential: {...}, supervisor: {...}
    consolidate: {tokens: 1200}

Kinds are pluggable (:mod:`chimera.crews.registry`); each is a :class:`CrewKind` subclass
validated from its mapping, which then checks itself against the roles and builds the runtime
crew (:mod:`chimera.crews.crew`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from chimera.spec.yamlload import NodePath

if TYPE_CHECKING:
    from chimera.crews.crew import Crew

__all__ = [
    "COMMON_FIELDS",
    "READ_ONLY_TOOLS",
    "ConsolidateSettings",
    "CrewDefinition",
    "CrewKind",
    "Role",
    "RoleBudget",
]

NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,39}$"
_NAME_RE = re.compile(NAME_PATTERN.replace("$", r"\Z"))

READ_ONLY_TOOLS: tuple[str, ...] = ("read_file", "list_dir", "search")
"""The tools a role may be allowed. A crew answers; changes go through ``chimera solve``,
whose verify-or-revert loop and Spec gate them."""

COMMON_FIELDS: tuple[str, ...] = ("crew", "description", "budget", "roles", "consolidate")
"""Top-level keys of a crew file besides its one kind key; no kind may take these names."""


def _name(value: str) -> str:
    if not _NAME_RE.match(value):
        raise ValueError(
            f"invalid name {value!r}: a letter, then up to 39 letters, digits, '_' or '-'"
        )
    return value


Name = Annotated[str, AfterValidator(_name), Field(json_schema_extra={"pattern": NAME_PATTERN})]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RoleBudget(_Model):
    """A hard ceiling (tokens and/or USD); ``None`` leaves only the enclosing budget."""

    tokens: int | None = Field(default=None, ge=1, description="Prompt + completion tokens.")
    usd: float | None = Field(default=None, ge=0, description="US dollars.")


class Role(_Model):
    """One role of a crew.

    Attributes:
        name: unique in the crew; shown as the source of its findings.
        goal: what the role decides or produces, one sentence.
        instructions: how (appended to the system prompt).
        tools: the allowlist (a subset of :data:`READ_ONLY_TOOLS`); never widened.
        model: a model name or ``scripted:PATH``; ``rung``: an index into the run's ladder
            (0 is the default model); neither: the run's model. Not both.
        budget: the role's own ceiling under the crew's (and the run's).
        max_steps: model turns of the role's agent loop per run.
    """

    name: Name
    goal: str = Field(min_length=1)
    instructions: str = ""
    tools: list[str] = Field(default_factory=list)
    model: str | None = Field(default=None, min_length=1)
    rung: int | None = Field(default=None, ge=0)
    budget: RoleBudget = Field(default_factory=RoleBudget)
    max_steps: int = Field(default=8, ge=1, le=50)

    @model_validator(mode="after")
    def _model_or_rung(self) -> Role:
        if self.model is not None and self.rung is not None:
            raise ValueError("a role names a 'model' or a 'rung', not both")
        return self

    def system_prompt(self, extra: str = "") -> str:
        """The role's system message: who it is, its goal, its instructions."""
        parts = [f"You are the '{self.name}' member of a crew.", f"Your goal: {self.goal}"]
        if self.instructions.strip():
            parts.append(self.instructions.strip())
        if self.tools:
            parts.append(f"You may use only these tools: {', '.join(self.tools)}.")
        parts.append(
            "Answer with short points, one per line ('- ...'). When done, reply with the "
            "answer and no tool call."
        )
        if extra:
            parts.append(extra)
        return "\n".join(parts)


class ConsolidateSettings(_Model):
    """How outputs are merged before another role sees them (see
    :func:`~chimera.crews.consolidate.consolidate`)."""

    tokens: int = Field(default=1500, ge=50, description="The consolidated brief's budget.")
    similarity: float = Field(
        default=0.6, gt=0, le=1, description="Content-word overlap above which points merge."
    )


class CrewKind(_Model):
    """Base of every crew kind (how the roles work together).

    A subclass sets ``kind_name`` (the YAML key), declares its fields, and implements
    :meth:`check_roles` (problems that need the roles, e.g. an unknown role name) and
    :meth:`build`.
    """

    kind_name: ClassVar[str] = ""

    def check_roles(self, roles: Sequence[Role]) -> list[tuple[NodePath, str]]:
        """Problems as ``(path under the kind's node, message)``; empty when consistent."""
        return []

    def build(self, definition: CrewDefinition) -> Crew:
        """The runtime crew for ``definition`` (whose ``process`` is this object)."""
        raise NotImplementedError

    def describe(self) -> str:
        return self.kind_name


def unknown_roles(
    names: Sequence[str], roles: Sequence[Role], field: str
) -> list[tuple[NodePath, str]]:
    """``(path, message)`` for each name in ``names`` that is no role (with a suggestion)."""
    import difflib

    known = [r.name for r in roles]
    out: list[tuple[NodePath, str]] = []
    for i, name in enumerate(names):
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else f" (roles: {', '.join(known)})"
        out.append(((field, i), f"'{field}' names unknown role '{name}'{hint}"))
    return out


@dataclass(frozen=True)
class CrewDefinition:
    """A validated crew file.

    Attributes:
        name: the crew's name (``crew:``, else the file's stem).
        roles: in file order.
        process: the kind object (``parallel``, ``sequential``, ``supervisor``, a plugin's).
        budget: the crew's ceiling (under the run's).
        consolidate: how outputs are merged.
        source: ``file`` as shown in messages.
        description: free text.
    """

    name: str
    roles: tuple[Role, ...]
    process: CrewKind
    budget: RoleBudget
    consolidate: ConsolidateSettings
    source: str
    description: str = ""

    def role(self, name: str) -> Role:
        """The role called ``name``.

        Raises:
            KeyError: no such role.
        """
        for r in self.roles:
            if r.name == name:
                return r
        raise KeyError(name)

    def build(self) -> Crew:
        """The runtime crew (see :meth:`CrewKind.build`)."""
        return self.process.build(self)
