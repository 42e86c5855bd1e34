"""Connector tools under governance: guarded, ledgered (tainted), quarantined, monitored.

Every connector tool the agent can call is, from the inside out:

1. the connector's tool under its provider-safe name (:class:`~.hub.NamedTool`);
2. a :class:`~chimera.governance.ledger_tool.LedgeredTool` as a *source*: its output is
   recorded in the run's :class:`~chimera.governance.taint.TaintLedger`, sanitized and
   fenced as data, ``provenance: tainted`` — connector output is untrusted, always — and
   reported to the :class:`~chimera.governance.aggregate_monitor.AggregateMonitor` as
   untrusted input; **or**, when the declaration asks for ``quarantine``, a
   :class:`~chimera.governance.quarantine.QuarantineTool`: the raw output goes to the ledger
   and to a quarantined model with no tools, and the agent sees only the validated fields
   (such a read is not an exposure: nothing free-form reaches the agent);
3. a :class:`~chimera.governance.guard.GovernedTool` on the run's guard: the TrustKernel
   decides before the call runs (audited as ``trust_verdict``), output is redacted of secrets.

The guard's kernel gains a :class:`SplitFlowAssessor`: every call — connector or native —
is a capability event of the tool that makes it. A connector call that ``sends`` (or a
native command off the tainted-run allowlist, a network command) after *another* tool
brought untrusted text in completes a split flow: ``review`` (not executed), and a
``split_flow`` audit event, which ``chimera audit show`` renders.

Network-reaching connectors run outside the command sandbox (which has no network), in
Chimera's process or, for a stdio server, in a bubblewrap of its own with network: the
governed tool boundary above is the only way a call reaches them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.governance.actions import Action, ActionKind
from chimera.governance.aggregate_monitor import AggregateMonitor
from chimera.governance.guard import GovernedTool, Guard
from chimera.governance.kernel import Decision, TrustKernel
from chimera.governance.ledger_tool import LedgeredTool
from chimera.governance.quarantine import QuarantineTool
from chimera.governance.rules import Verdict
from chimera.governance.taint import SourceKind, TaintedSource, TaintLedger
from chimera.integrations.hub import HubTool
from chimera.protocols import SupportsComplete, Tool, ToolCaller, ToolResult, ToolSchema
from chimera.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from chimera.governance.allowlist import AdaptiveToolAllowlist
    from chimera.governance.audit import AuditLog
    from chimera.integrations.model import QuarantineSpec

__all__ = ["ConnectedTools", "SplitFlowAssessor", "govern_connector_tools"]


class SplitFlowAssessor:
    """A TrustKernel assessor feeding every call to an AggregateMonitor (one principal per
    tool). ``sends``: connector tool name → whether its calls carry data out."""

    def __init__(self, monitor: AggregateMonitor, sends: Mapping[str, bool]) -> None:
        self.monitor = monitor
        self.sends = dict(sends)

    def assess_action(self, action: Action) -> Decision:
        tool = action.tool or "agent"
        if tool in self.sends:
            if not self.sends[tool]:
                return Decision.allow()  # a read only brings data in (recorded on ingest)
            action = replace(action, kind=ActionKind.NETWORK)
        flows = self.monitor.observe(tool, action)
        if not flows:
            return Decision.allow()
        return Decision(
            Verdict.REVIEW,
            ("aggregate-split-flow",),
            tuple(dict.fromkeys(f.describe() for f in flows)),
            "aggregate",
        )


def _ingest_hook(monitor: AggregateMonitor, tool: str) -> Callable[[TaintedSource], None]:
    def hook(source: TaintedSource) -> None:
        monitor.ingest(tool, source)

    return hook


def _quarantined(
    tool: Tool, spec: QuarantineSpec, backend: SupportsComplete, ledger: TaintLedger
) -> QuarantineTool:
    return QuarantineTool(
        tool,
        backend,
        spec.extraction(),
        ledger=ledger,
        name=tool.name,
        source_kind=SourceKind.TOOL_OUTPUT,
    )


def govern_connector_tools(
    tools: Sequence[HubTool],
    *,
    guard: Guard,
    ledger: TaintLedger,
    monitor: AggregateMonitor,
    quarantine: Mapping[str, QuarantineSpec] | None = None,
    backend: SupportsComplete | None = None,
) -> tuple[ToolRegistry, list[str]]:
    """A registry of ``tools`` wrapped as the module docstring says, and the problems.

    Args:
        quarantine: connector name → its quarantine spec (for tools marked ``quarantined``).
        backend: the quarantined model; without one a quarantined tool is withheld (a
            problem line says so), never offered raw.

    The guard's kernel gains one :class:`SplitFlowAssessor` over these tools.
    """
    registry = ToolRegistry()
    problems: list[str] = []
    specs = dict(quarantine or {})
    for item in tools:
        wrapped: Tool
        if item.quarantined:
            spec = specs.get(item.connector)
            if spec is None or backend is None:
                problems.append(
                    f"tool {item.name!r} is quarantined but no quarantine model is available: "
                    "withheld"
                )
                continue
            wrapped = _quarantined(item.tool, spec, backend, ledger)
        else:
            wrapped = LedgeredTool(
                item.tool,
                ledger,
                source=True,
                source_kind=SourceKind.TOOL_OUTPUT,
                on_ingest=_ingest_hook(monitor, item.name),
            )
        try:
            registry.register(GovernedTool(wrapped, guard))
        except Exception as exc:  # a server's schema the registry cannot use
            problems.append(f"tool {item.name!r} withheld: {exc}")
    guard.kernel.add_assessor(SplitFlowAssessor(monitor, {t.name: t.sends for t in tools}))
    return registry, problems


class ConnectedTools:
    """The agent's tool caller: native tools plus governed connector tools.

    ``schemas()`` offers the native ones as their caller offers them and the connector ones
    the run's adaptive allowlist allows now (all while the run is clean).
    """

    def __init__(
        self,
        native: ToolCaller,
        connectors: ToolRegistry,
        *,
        guard: Guard,
        ledger: TaintLedger,
        allowlist: AdaptiveToolAllowlist | None = None,
    ) -> None:
        self.native = native
        self.connectors = connectors
        self.guard = guard
        self.ledger = ledger
        self.allowlist = allowlist

    def schemas(self) -> list[ToolSchema]:
        extra = self.connectors.schemas()
        if self.allowlist is not None:
            extra = self.allowlist.schemas(extra)
        return [*self.native.schemas(), *extra]

    def call(self, name: str, arguments: Any) -> ToolResult:
        if name in self.connectors:
            return self.connectors.call(name, arguments)
        return self.native.call(name, arguments)


def connect_tools(
    native: ToolCaller,
    tools: Sequence[HubTool],
    *,
    workspace: Path,
    audit: AuditLog | None,
    monitor: AggregateMonitor,
    quarantine: Mapping[str, QuarantineSpec] | None = None,
    backend: SupportsComplete | None = None,
    run_id: str = "",
) -> tuple[ConnectedTools, list[str]]:
    """Join ``native`` (a plain registry, or the governance layer's ``GovernedTools``) and
    the connector tools under one guard and one ledger.

    When ``native`` already carries a guard (``--guard``) its guard, kernel, ledger and
    allowlist are shared, so a connector read taints the same run record that narrows the
    native tools. Otherwise a guard is made here and the native tools are governed by it too,
    so the AggregateMonitor sees them.
    """
    guard = getattr(native, "guard", None)
    ledger = getattr(native, "ledger", None)
    allowlist = getattr(native, "allowlist", None)
    if not isinstance(guard, Guard):
        guard = Guard(TrustKernel(), workspace, audit=audit)
        if isinstance(native, ToolRegistry):
            native = guard.govern(native)
    if not isinstance(ledger, TaintLedger):
        ledger = TaintLedger(run_id, audit=audit)
    registry, problems = govern_connector_tools(
        tools, guard=guard, ledger=ledger, monitor=monitor, quarantine=quarantine, backend=backend
    )
    clash = [n for n in registry.names() if n in _names(native)]
    if clash:
        problems.append(f"connector tools shadow native tools, withheld: {', '.join(clash)}")
        kept = ToolRegistry()
        for name in registry.names():
            if name not in clash:
                kept.register(registry.get(name))
        registry = kept
    return ConnectedTools(
        native, registry, guard=guard, ledger=ledger, allowlist=allowlist
    ), problems


def _names(caller: ToolCaller) -> set[str]:
    return {str(s.get("function", {}).get("name", "")) for s in caller.schemas()}
