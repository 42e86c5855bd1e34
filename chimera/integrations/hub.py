"""The connector hub: declarations in, named tools out; started lazily, closed once.

:meth:`ConnectorHub.tools` opens every declared connector the first time it is asked
(a connector that is never needed never starts), applies each declaration's tool filter,
names every tool by the strictest provider rule (:func:`~chimera.integrations.names.tool_name`)
and returns a :class:`HubTools` result: the tools, plus one problem line per connector that
could not start and per name clash (both sides named). Nothing here raises for a broken
connector: the others still work, and the problem is shown to whoever asked.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chimera.errors import ChimeraError, MissingExtraError
from chimera.integrations.describe import describe_tool
from chimera.integrations.model import ConnectorContext, ConnectorDecl, ConnectorTool, OpenConnector
from chimera.integrations.names import TOOL_NAME, tool_name
from chimera.protocols import ToolResult, ToolSchema

__all__ = ["ConnectorHub", "HubTool", "HubTools", "schema_of"]


class NamedTool:
    """A connector tool under its provider-safe name; its description tagged with the source
    and its descriptions fenced as data (:func:`~chimera.integrations.describe.describe_tool`).

    Raises:
        ConnectorError: the tool's schema holds a string the model would read outside the
            fence that is unsafe (the hub reports it and leaves the tool out).
    """

    def __init__(self, inner: ConnectorTool, name: str, connector: str) -> None:
        self.inner = inner
        self.name: str = name
        self.description, self.parameters = describe_tool(
            connector, str(inner.description or ""), inner.parameters or {}
        )
        self.sends: bool = inner.sends

    def __call__(self, **kwargs: Any) -> ToolResult:
        return self.inner(**kwargs)


@dataclass(frozen=True)
class HubTool:
    """One tool of the hub.

    Attributes:
        tool: the tool under its final name (ungoverned: see :mod:`.governance`).
        connector: the declaring connector's name.
        remote: the name the connector gave it (MCP tool name, OpenAPI operation id).
        sends: whether a call carries data out of the run.
        quarantined: whether its output is read through a quarantined model.
    """

    tool: NamedTool
    connector: str
    remote: str
    sends: bool
    quarantined: bool

    @property
    def name(self) -> str:
        return self.tool.name


@dataclass
class HubTools:
    """The result of opening the hub: the tools and every problem (one line each)."""

    tools: list[HubTool] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def schema_of(tool: Any) -> ToolSchema:
    """The OpenAI function-calling schema of ``tool`` (what the model is sent)."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def estimate_tokens(schemas: Sequence[ToolSchema]) -> int:
    """About four characters a token: the estimate when no model is named."""
    return max(0, (sum(len(json.dumps(s, default=str)) for s in schemas) + 3) // 4)


class ConnectorHub:
    """The run's connectors (see the module docstring). Use as a context manager, or call
    :meth:`close`; both are idempotent and safe from any thread."""

    def __init__(self, decls: Sequence[ConnectorDecl], ctx: ConnectorContext) -> None:
        self.decls = list(decls)
        self.ctx = ctx
        self._open: dict[str, OpenConnector] = {}
        self._result: HubTools | None = None
        self._lock = threading.Lock()

    def tools(self) -> HubTools:
        """Open every connector (once) and return its named tools and the problems.

        Raises:
            MissingExtraError: a connector's kind needs an extra that is not installed (a
                fact about the install, not a problem of one connector).
        """
        with self._lock:
            if self._result is None:
                self._result = self._open_all()
            return self._result

    def _open_all(self) -> HubTools:
        result = HubTools()
        owners: dict[str, tuple[str, str]] = {}
        for decl in self.decls:
            try:
                opened = decl.kind.open(self.ctx)
            except MissingExtraError:
                raise  # the install lacks the connector's extra: not this connector's problem
            except ChimeraError as exc:
                result.problems.append(f"connector {decl.name!r} ({decl.location}): {exc}")
                continue
            self._open[decl.name] = opened
            quarantine = decl.fields.quarantine
            for raw in opened.tools:
                if not decl.fields.tools.selects(raw.name):
                    continue
                name = tool_name(decl.name, raw.name)
                if not TOOL_NAME.match(name):  # pragma: no cover - tool_name guarantees it
                    continue
                if name in owners:
                    first = owners[name]
                    result.problems.append(
                        f"tool name {name!r} is taken twice: {first[1]!r} of connector "
                        f"{first[0]!r} and {raw.name!r} of connector {decl.name!r}"
                    )
                    continue
                owners[name] = (decl.name, raw.name)
                egress = decl.fields.egress
                sends = raw.sends if egress == "auto" else egress == "send"
                from fnmatch import fnmatchcase

                quarantined = quarantine is not None and any(
                    fnmatchcase(raw.name, p) for p in quarantine.tools
                )
                try:
                    named = NamedTool(raw, name, decl.name)
                except ChimeraError as exc:
                    result.problems.append(f"tool {raw.name!r} of connector {decl.name!r}: {exc}")
                    continue
                named.sends = sends
                result.tools.append(HubTool(named, decl.name, raw.name, sends, quarantined))
        return result

    def decl(self, connector: str) -> ConnectorDecl | None:
        return next((d for d in self.decls if d.name == connector), None)

    def close(self) -> None:
        """Stop every started connector (errors on the way out are dropped)."""
        with self._lock:
            opened, self._open = self._open, {}
        for item in opened.values():
            with contextlib.suppress(Exception):  # closing must reach every connector
                item.close()

    def __enter__(self) -> ConnectorHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
