"""AggregateMonitor: catch split flows across sub-agents.

A per-agent monitor sees one agent's capabilities. A multi-agent run can split an attack so no
single agent looks guilty: agent A fetches an untrusted page (harmless by itself — A never
executes anything), its summary is handed to agent B, and B, which never read untrusted input
itself, runs a command or sends data out. The AggregateMonitor sits one level up: it receives
every sub-agent's capability events (ingesting untrusted input, executing, reaching the
network, touching secrets, writing, handing off to another agent) and flags a **split flow**
when an agent exposed to another agent's untrusted input — through a recorded handoff, or
through the shared context of the run (the default, conservative assumption) — then executes
off the tainted-run allowlist, reaches the network or touches secrets.

Use it online — :meth:`AggregateMonitor.for_agent` gives each sub-agent an assessor for its
TrustKernel, so the flow is stopped (``review``) before B's action runs — or offline over a
list of events (:meth:`AggregateMonitor.replay`).

Heuristic containment, never a boundary: the sandbox is the boundary.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from chimera.governance.actions import Action, ActionKind
from chimera.governance.kernel import Decision
from chimera.governance.redactor import cut_redacted as _cut
from chimera.governance.rules import (
    ActionFacts,
    Verdict,
    is_network_command,
    secret_dir_reason,
    secret_file_reason,
)
from chimera.governance.taint import TaintedSource
from chimera.governance.taint_allowlist import TaintAllowlist

if TYPE_CHECKING:
    from chimera.governance.audit import AuditLog


class Capability(StrEnum):
    """What a capability event records."""

    INGEST = "ingest_untrusted"
    EXECUTE = "execute"
    NETWORK = "network"
    SECRET = "secret"
    WRITE = "write"
    HANDOFF = "handoff"


SINKS = frozenset({Capability.EXECUTE, Capability.NETWORK, Capability.SECRET})
"""Capabilities that turn an injected instruction into damage."""


@dataclass(frozen=True, slots=True)
class CapabilityEvent:
    """One capability use by one agent.

    Attributes:
        seq: order of arrival at the monitor (1-based).
        agent: the sub-agent's name.
        capability: what it did.
        detail: a short description (the action summary, the source label).
        target: for a handoff, the receiving agent.
    """

    seq: int
    agent: str
    capability: Capability
    detail: str = ""
    target: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "agent": self.agent,
            "capability": self.capability.value,
            "detail": self.detail,
            "target": self.target,
        }


@dataclass(frozen=True, slots=True)
class SplitFlow:
    """Untrusted input ingested by one agent reaching a sink in another."""

    source: CapabilityEvent
    sink: CapabilityEvent

    def describe(self) -> str:
        return (
            f"split flow: {self.source.agent} ingested untrusted input ({self.source.detail}); "
            f"{self.sink.agent} then attempts {self.sink.capability.value} "
            f"({self.sink.detail})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source.to_dict(), "sink": self.sink.to_dict()}


class AggregateMonitor:
    """Collect capability events of every sub-agent of a run and find split flows.

    Args:
        shared_context: assume every agent of the run can see what any other ingested (true
            for crews that share memory or consolidate outputs). With ``False``, exposure
            travels only along recorded :meth:`handoff` events.
        allowlist: commands that are not a sink even when exposed (default: the tainted-run
            allowlist — tests, project install, read-only inspection).
        audit: when given, each split flow is a ``split_flow`` audit event.
    """

    def __init__(
        self,
        *,
        shared_context: bool = True,
        allowlist: TaintAllowlist | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.shared_context = shared_context
        self.allowlist = allowlist or TaintAllowlist()
        self.audit = audit
        self._events: list[CapabilityEvent] = []
        self._flows: list[SplitFlow] = []
        self._lock = threading.Lock()

    # -- recording ----------------------------------------------------------------------------

    def _add(
        self, agent: str, capability: Capability, detail: str, target: str = ""
    ) -> CapabilityEvent:
        with self._lock:
            event = CapabilityEvent(
                len(self._events) + 1, agent, capability, _cut(detail, 200), target
            )
            self._events.append(event)
        return event

    def ingest(self, agent: str, source: TaintedSource | str) -> CapabilityEvent:
        """``agent`` read untrusted input (a TaintedSource, or a label)."""
        label = source if isinstance(source, str) else f"{source.kind.value} {source.label}"
        return self._add(agent, Capability.INGEST, label.strip())

    def handoff(self, from_agent: str, to_agent: str, detail: str = "") -> CapabilityEvent:
        """``from_agent``'s output reaches ``to_agent`` (delegation, consolidation, memory)."""
        return self._add(from_agent, Capability.HANDOFF, detail, target=to_agent)

    @property
    def events(self) -> list[CapabilityEvent]:
        with self._lock:
            return list(self._events)

    @property
    def flows(self) -> list[SplitFlow]:
        """Every split flow found so far."""
        with self._lock:
            return list(self._flows)

    # -- analysis -----------------------------------------------------------------------------

    def capabilities(self, action: Action) -> list[tuple[Capability, str]]:
        """The sink/write capabilities an action would use (lexically)."""
        found: list[tuple[Capability, str]] = []
        summary = action.summary(120)
        facts = ActionFacts(action)
        if action.command is not None:
            if any(is_network_command(c) for c in facts.commands):
                found.append((Capability.NETWORK, summary))
            elif self.allowlist.violations(action):
                found.append((Capability.EXECUTE, summary))
        elif action.kind is ActionKind.NETWORK:
            found.append((Capability.NETWORK, summary))
        elif action.kind in (ActionKind.WRITE, ActionKind.EDIT, ActionKind.DELETE):
            found.append((Capability.WRITE, summary))
        elif action.kind is ActionKind.TOOL:
            found.append((Capability.EXECUTE, summary))
        for op in (*facts.reads, *facts.writes):
            if secret_file_reason(action, op.resolved) or secret_dir_reason(action, op.resolved):
                found.append((Capability.SECRET, summary))
                break
        return found

    def _exposure(self, agent: str, before: int) -> list[CapabilityEvent]:
        """Ingest events of *other* agents that reach ``agent`` before event ``before``."""
        with self._lock:
            events = [e for e in self._events if e.seq < before]
        ingests = [e for e in events if e.capability is Capability.INGEST and e.agent != agent]
        if self.shared_context:
            return ingests
        reached: list[CapabilityEvent] = []
        for ingest in ingests:
            exposed = {ingest.agent}
            for event in events:
                if (
                    event.seq > ingest.seq
                    and event.capability is Capability.HANDOFF
                    and event.agent in exposed
                ):
                    exposed.add(event.target)
            if agent in exposed:
                reached.append(ingest)
        return reached

    def observe(self, agent: str, action: Action) -> list[SplitFlow]:
        """Record ``agent``'s action and return the split flows it completes."""
        flows: list[SplitFlow] = []
        for capability, detail in self.capabilities(action):
            event = self._add(agent, capability, detail)
            if capability not in SINKS:
                continue
            for source in self._exposure(agent, event.seq):
                flows.append(SplitFlow(source, event))
        if flows:
            with self._lock:
                self._flows.extend(flows)
            if self.audit is not None:
                for flow in flows:
                    self.audit.append("split_flow", **flow.to_dict())
        return flows

    def replay(self, events: Iterable[CapabilityEvent]) -> list[SplitFlow]:
        """Split flows in a recorded event list (offline analysis, e.g. of an audit log)."""
        monitor = AggregateMonitor(shared_context=self.shared_context, allowlist=self.allowlist)
        flows: list[SplitFlow] = []
        for event in sorted(events, key=lambda e: e.seq):
            added = monitor._add(event.agent, event.capability, event.detail, event.target)
            if added.capability in SINKS:
                flows.extend(SplitFlow(s, added) for s in monitor._exposure(added.agent, added.seq))
        return flows

    def for_agent(self, agent: str) -> AgentMonitor:
        """The per-agent view: an assessor for that agent's TrustKernel and an ingest hook
        for its LedgeredTools."""
        return AgentMonitor(self, agent)


class AgentMonitor:
    """One sub-agent's view of an :class:`AggregateMonitor` (a TrustKernel assessor)."""

    def __init__(self, monitor: AggregateMonitor, agent: str) -> None:
        self.monitor = monitor
        self.agent = agent

    def ingest(self, source: TaintedSource) -> None:
        """Hook for :class:`~chimera.governance.ledger_tool.LedgeredTool` ``on_ingest``."""
        self.monitor.ingest(self.agent, source)

    def assess_action(self, action: Action) -> Decision:
        """``review`` when the action completes a split flow; else ``allow``."""
        flows = self.monitor.observe(self.agent, action)
        if not flows:
            return Decision.allow()
        return Decision(
            Verdict.REVIEW,
            ("aggregate-split-flow",),
            tuple(dict.fromkeys(f.describe() for f in flows)),
            "aggregate",
        )


__all__ = [
    "SINKS",
    "AgentMonitor",
    "AggregateMonitor",
    "Capability",
    "CapabilityEvent",
    "SplitFlow",
]
