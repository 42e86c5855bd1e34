"""The connector data model: the common declaration fields, the kind base class, the context.

A declaration (one item of ``connectors:`` in ``.chimera.d/connectors/*.yaml``) holds the
common fields below and exactly one kind, keyed by its ``kind_name``::

    connectors:
      - name: docs
        description: the team's documentation search
        mcp: {command: python, args: [tools/docs_server.py]}
        tools: {include: ["search*"]}
      - name: pets
        openapi:
          document: api/petstore.yaml
          base_url: http://127.0.0.1:8080
          auth: {type: bearer, env: PETS_TOKEN}
          operations: {tags: [pets]}
        quarantine:
          question: What does the record say?
          fields: {status: {type: enum, choices: [available, sold]}}

A kind is a pydantic model that forbids unknown fields (validation is per kind, and every
error maps back to its YAML node) and knows how to :meth:`ConnectorKind.open` itself into
tools. Kinds arrive through pluggy (:mod:`chimera.integrations.hookspecs`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from chimera.governance.quarantine import ExtractionSchema, FieldSpec
from chimera.protocols import ToolResult
from chimera.spec.model import SourceLocation

__all__ = [
    "COMMON_FIELDS",
    "CONNECTOR_NAME",
    "ConnectorContext",
    "ConnectorDecl",
    "ConnectorFields",
    "ConnectorKind",
    "ConnectorTool",
    "Egress",
    "OpenConnector",
    "QuarantineSpec",
    "ToolFilter",
]

CONNECTOR_NAME = re.compile(r"^[a-z][a-z0-9_]{0,23}\Z")
"""A connector's name: it prefixes every tool name, so it is short and provider-safe."""

COMMON_FIELDS: tuple[str, ...] = ("name", "description", "tools", "quarantine", "egress")
"""Keys every declaration may carry besides its one kind; no kind may take these names."""

Egress = Literal["auto", "read", "send"]
"""How the AggregateMonitor treats a connector's calls: ``send`` calls carry data out of the
run (a sink); ``read`` calls only bring data in; ``auto`` decides per tool (an MCP tool's
``readOnlyHint``, an OpenAPI operation's method: ``GET``/``HEAD`` read, the rest send)."""


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolFilter(StrictModel):
    """Which of a connector's tools are offered: shell-style patterns (``fnmatch``) over the
    remote names (MCP tool names, OpenAPI operation ids). Empty ``include``: every tool."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def selects(self, name: str) -> bool:
        from fnmatch import fnmatchcase

        if self.include and not any(fnmatchcase(name, p) for p in self.include):
            return False
        return not any(fnmatchcase(name, p) for p in self.exclude)


class QuarantineField(StrictModel):
    """One field of a quarantined extraction (see :class:`chimera.governance.quarantine`)."""

    type: Literal["string", "integer", "number", "boolean", "enum"]
    description: str = ""
    max_length: int = Field(default=200, ge=1, le=4000)
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    required: bool = False


class QuarantineSpec(StrictModel):
    """Read the connector's output through a quarantined model: the agent sees only these
    validated fields, never the raw text. ``tools``: which tools (patterns; default all)."""

    fields: dict[str, QuarantineField] = Field(min_length=1)
    question: str = ""
    tools: tuple[str, ...] = ("*",)

    @field_validator("fields")
    @classmethod
    def _enums_have_choices(cls, value: dict[str, QuarantineField]) -> dict[str, QuarantineField]:
        for name, spec in value.items():
            if spec.type == "enum" and not spec.choices:
                raise ValueError(f"enum field {name!r} needs choices")
        return value

    def extraction(self) -> ExtractionSchema:
        """The governance layer's extraction schema."""
        return ExtractionSchema(
            {
                name: FieldSpec(
                    type=f.type,
                    description=f.description,
                    max_length=f.max_length,
                    choices=f.choices,
                    pattern=f.pattern,
                    required=f.required,
                )
                for name, f in self.fields.items()
            },
            question=self.question,
        )


class ConnectorFields(StrictModel):
    """The common fields of a declaration, validated apart from its kind."""

    name: str
    description: str = ""
    tools: ToolFilter = ToolFilter()
    quarantine: QuarantineSpec | None = None
    egress: Egress = "auto"

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not CONNECTOR_NAME.match(value):
            raise ValueError(
                f"{value!r} is not a connector name (lowercase letter, then lowercase letters, "
                "digits or '_', at most 24 characters)"
            )
        return value


@dataclass(frozen=True)
class ConnectorContext:
    """What opening a connector may use.

    Attributes:
        root: the project root (relative documents and server folders resolve against it).
        environ: where credentials are read from at call time (default ``os.environ``).
        sandbox: ``bwrap`` (stdio servers under bubblewrap; fail closed without it) or
            ``scrubbed`` (a plain child with an allowlisted environment: weaker).
        timeout_s: the limit of one remote call, in seconds.
        hidden: absolute paths no connector may see (the session sandbox's: the held-out
            spec folder and the run folders that record its verdicts); stdio servers get
            them masked, documents inside them are refused.
    """

    root: Path
    environ: Mapping[str, str] | None = None
    sandbox: Literal["bwrap", "scrubbed"] = "bwrap"
    timeout_s: float = 60.0
    hidden: tuple[Path, ...] = ()

    def env(self) -> Mapping[str, str]:
        import os

        return os.environ if self.environ is None else self.environ


@runtime_checkable
class ConnectorTool(Protocol):
    """A tool a connector provides (a :class:`chimera.protocols.Tool` plus ``sends``).

    Attributes:
        name: the remote name (normalised and prefixed later by the hub).
        sends: whether a call carries data out of the run (see :data:`Egress`).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    sends: bool

    def __call__(self, **kwargs: Any) -> ToolResult: ...


@dataclass
class OpenConnector:
    """A started connector: its tools, and how to stop it (idempotent)."""

    tools: list[ConnectorTool]
    close: Any = field(default=lambda: None)
    detail: str = ""


class ConnectorKind(StrictModel):
    """Base of every connector kind (a pydantic model; unknown fields are errors).

    Subclasses set ``kind_name`` (the YAML key) and implement :meth:`open`.
    """

    kind_name: ClassVar[str] = ""

    def open(self, ctx: ConnectorContext) -> OpenConnector:
        """Start the connector and list its tools.

        Raises:
            ChimeraError: it cannot start (one line; the hub reports it per connector).
        """
        raise NotImplementedError

    def credentials(self) -> tuple[str, ...]:
        """Environment variable names read at call time (never their values)."""
        return ()

    def files(self) -> tuple[tuple[str, str], ...]:
        """``(field, path)`` of each project file the connector reads when it starts (paths
        relative to the project root): ``chimera connectors check`` reports a missing one
        without starting anything."""
        return ()

    def describe(self) -> str:
        """One line: what it reaches and whether that leaves the machine."""
        return self.kind_name


@dataclass(frozen=True)
class ConnectorDecl:
    """One validated declaration.

    Attributes:
        fields: the common fields.
        kind: the kind instance (``kind.kind_name`` says which).
        location: where the declaration starts (``file:line:col``).
    """

    fields: ConnectorFields
    kind: ConnectorKind
    location: SourceLocation

    @property
    def name(self) -> str:
        return self.fields.name
