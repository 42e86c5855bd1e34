"""LedgeredTool: a tool whose results and effects are written into the run's TaintLedger.

Two roles, decided per tool:

* **source** — the tool brings outside text into the run (a fetched page, an issue comment, an
  MCP tool's answer). Its output is recorded in the ledger (the run is tainted from that
  byte on), sanitized of chat-template control tokens and invisible characters, and returned
  inside a data fence (:func:`chimera.governance.sanitize.fence_untrusted`), with
  ``meta["provenance"] = "tainted"``.
* **sink** — the tool changes the workspace (``write_file``, ``edit_file``, ``delete_file``).
  After a successful call the touched path is recorded as an artifact carrying the run's
  provenance, so a file written by a tainted run stays ``tainted`` in the run's record.

By default a tool is a source when its kind is ``network`` (``fetch_url`` ...) or when it is
not one of the native tools (the agent issue's ``read_file``/``write_file``/.../
``run_command``); pass ``source=`` to decide explicitly. Files changed by ``run_command``
are not known lexically: record them from the attempt's real diff
(:meth:`TaintLedger.record_artifact`).

Heuristic containment, never a boundary (the sandbox is the boundary).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from chimera.governance.actions import TOOL_KINDS, ActionKind
from chimera.governance.sanitize import fence_untrusted
from chimera.governance.taint import TAINTED, SourceKind, TaintedSource, TaintLedger
from chimera.protocols import Tool, ToolResult

if TYPE_CHECKING:
    from chimera.tools.registry import ToolRegistry

NATIVE_TOOLS = frozenset(
    {"read_file", "write_file", "edit_file", "list_dir", "search", "run_command"}
)
"""Tools that read or change the workspace itself (their output is the run's own data)."""

_SINK_KINDS = (ActionKind.WRITE, ActionKind.EDIT, ActionKind.DELETE)
_PATH_KEYS = ("path", "file_path", "file", "filename", "target")

IngestHook = Callable[[TaintedSource], None]


def is_source_tool(name: str) -> bool:
    """The default source decision (see the module docstring)."""
    return TOOL_KINDS.get(name) is ActionKind.NETWORK or name not in NATIVE_TOOLS


class LedgeredTool:
    """Wrap ``tool`` so its outputs (source) or effects (sink) go into ``ledger``.

    Args:
        tool: any tool (metadata copied as instance attributes).
        ledger: the run's TaintLedger.
        source: whether the tool's output is untrusted (default: :func:`is_source_tool`).
        source_kind: how to label its outputs in the ledger.
        on_ingest: called with each new tainted source (an AggregateMonitor's agent view).
    """

    def __init__(
        self,
        tool: Tool,
        ledger: TaintLedger,
        *,
        source: bool | None = None,
        source_kind: SourceKind = SourceKind.TOOL_OUTPUT,
        on_ingest: IngestHook | None = None,
    ) -> None:
        self.inner = tool
        self.ledger = ledger
        self.name: str = tool.name
        self.description: str = tool.description
        self.parameters: dict[str, Any] = tool.parameters
        self.source = is_source_tool(tool.name) if source is None else source
        if source is None and TOOL_KINDS.get(tool.name) is ActionKind.NETWORK:
            source_kind = SourceKind.FETCHED_PAGE
        self.source_kind = source_kind
        self.on_ingest = on_ingest

    def __call__(self, **kwargs: Any) -> ToolResult:
        result = self.inner(**kwargs)
        if self.source:
            return self._ingest(result, kwargs)
        kind = TOOL_KINDS.get(self.name)
        if result.ok and kind in _SINK_KINDS:
            for key in _PATH_KEYS:
                value = kwargs.get(key)
                if isinstance(value, str) and value:
                    self.ledger.record_artifact(value, tool=self.name)
                    break
        meta = dict(result.meta)
        meta["provenance"] = self.ledger.provenance
        return replace(result, meta=meta)

    def _ingest(self, result: ToolResult, kwargs: dict[str, Any]) -> ToolResult:
        target = next(
            (str(kwargs[k]) for k in ("url", "uri", "query", "path", "id") if k in kwargs), ""
        )
        label = f"{self.name} {target}".strip()
        # A failed call's output can still carry attacker text (an error page): taint it too.
        source = self.ledger.taint(result.output, self.source_kind, label)
        if self.on_ingest is not None:
            self.on_ingest(source)
        meta = dict(result.meta)
        meta.update(provenance=TAINTED, taint_source=source.id)
        return replace(result, output=fence_untrusted(result.output, label), meta=meta)

    def __repr__(self) -> str:
        return f"LedgeredTool({self.inner!r}, source={self.source})"


def ledger_registry(
    registry: ToolRegistry,
    ledger: TaintLedger,
    *,
    sources: Iterable[str] | None = None,
    on_ingest: IngestHook | None = None,
) -> ToolRegistry:
    """A new registry with every tool of ``registry`` wrapped in a :class:`LedgeredTool`.

    Args:
        sources: names of the tools whose output is untrusted (default: decided per tool by
            :func:`is_source_tool`).
    """
    from chimera.tools.registry import ToolRegistry

    chosen = set(sources) if sources is not None else None
    out = ToolRegistry()
    for name in registry.names():
        is_source = None if chosen is None else name in chosen
        out.register(
            LedgeredTool(registry.get(name), ledger, source=is_source, on_ingest=on_ingest)
        )
    return out


__all__ = ["NATIVE_TOOLS", "LedgeredTool", "is_source_tool", "ledger_registry"]
