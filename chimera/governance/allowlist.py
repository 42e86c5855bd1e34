"""The adaptive tool allowlist: the tool set narrows once a run is tainted.

While a run is clean the agent may call every registered tool. From the moment its
:class:`~chimera.governance.taint.TaintLedger` records untrusted input, only the tools that
cannot carry an injected instruction out of the workspace remain: the workspace tools
(``read_file``, ``list_dir``, ``search``, ``write_file``, ``edit_file``), ``run_command``
(whose commands the ledger then restricts to tests, project install and read-only
inspection), and quarantined readers (:class:`~chimera.governance.quarantine.QuarantineTool`),
which return only validated, structured extractions. Everything else — fetchers, MCP and
OpenAPI tools, anything unknown — is withheld: no longer offered to the model
(:meth:`AdaptiveToolAllowlist.schemas`) and, if called anyway, judged ``review``
(:meth:`AdaptiveToolAllowlist.assess_action`).

The narrowing is one-way within a run (a run does not become clean again). This follows the
"plan-then-execute" and "action-selector" patterns of Beurer-Kellner et al., *Design Patterns
for Securing LLM Agents against Prompt Injections* (2025): after untrusted input, the agent's
capabilities are what a reviewer could accept under the worst reading of that input.

Heuristic containment, never a boundary: the sandbox is the boundary.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chimera.governance.actions import Action, ActionKind
from chimera.governance.kernel import Decision
from chimera.governance.rules import Verdict
from chimera.governance.taint import TaintLedger
from chimera.protocols import ToolResult, ToolSchema

if TYPE_CHECKING:
    from chimera.governance.audit import AuditLog
    from chimera.tools.registry import ToolRegistry

TAINTED_SAFE_TOOLS = frozenset(
    {"read_file", "list_dir", "search", "write_file", "edit_file", "run_command"}
)
"""Tools a tainted run keeps by default."""


class AdaptiveToolAllowlist:
    """Which tools the agent may use, given the run's taint.

    Args:
        ledger: the run's TaintLedger (the switch).
        tainted_tools: tools kept once tainted (default :data:`TAINTED_SAFE_TOOLS` plus every
            quarantined reader registered on the ledger).
        clean_tools: tools allowed while clean (``None``: every tool).
        audit: when given, the moment of narrowing is one ``allowlist_narrowed`` event.
    """

    def __init__(
        self,
        ledger: TaintLedger,
        *,
        tainted_tools: Iterable[str] = TAINTED_SAFE_TOOLS,
        clean_tools: Iterable[str] | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.ledger = ledger
        self.tainted_tools = frozenset(tainted_tools)
        self.clean_tools = frozenset(clean_tools) if clean_tools is not None else None
        self.audit = audit
        self._narrowed = False
        self._lock = threading.Lock()

    @property
    def narrowed(self) -> bool:
        """Whether the allowlist has narrowed (the ledger is tainted)."""
        if self.ledger.tainted:
            self._note_narrowing()
        return self._narrowed

    def _note_narrowing(self) -> None:
        with self._lock:
            if self._narrowed:
                return
            self._narrowed = True
        if self.audit is not None:
            self.audit.append(
                "allowlist_narrowed",
                tools=sorted(self.tainted_tools | self.ledger.quarantined_tools),
                sources=[s.id for s in self.ledger.sources],
            )

    def allowed(self, tool: str) -> bool:
        """Whether ``tool`` may be called now."""
        if self.narrowed:
            return tool in self.tainted_tools or tool in self.ledger.quarantined_tools
        return self.clean_tools is None or tool in self.clean_tools

    def allowed_names(self, names: Sequence[str]) -> list[str]:
        return [n for n in names if self.allowed(n)]

    def schemas(self, schemas: Sequence[ToolSchema]) -> list[ToolSchema]:
        """The tool schemas to offer the model now (withheld tools are not shown)."""
        return [s for s in schemas if self.allowed(str(s.get("function", {}).get("name", "")))]

    def assess_action(self, action: Action) -> Decision:
        """``review`` for a call to a tool that is not allowed now; else ``allow``."""
        tool = action.tool
        if tool is None or self.allowed(tool):
            return Decision.allow()
        if self.narrowed:
            reason = (
                f"tool {tool!r} is withheld after the run read untrusted input "
                "(only workspace tools, tests and quarantined readers remain)"
            )
        else:
            reason = f"tool {tool!r} is not on this run's tool allowlist"
        return Decision(Verdict.REVIEW, ("tool-allowlist",), (reason,), "allowlist")


class AllowlistedTools:
    """A tool-caller view of a registry that offers and runs only the allowed tools.

    Has the shape the Agent loop needs (``schemas()``, ``call(name, arguments)``), so it drops
    in where the registry went; the schemas shrink the moment the run is tainted. A call to a
    withheld tool is not run and returns ``ToolResult(ok=False)`` with the reason.
    """

    def __init__(self, registry: ToolRegistry, allowlist: AdaptiveToolAllowlist) -> None:
        self.registry = registry
        self.allowlist = allowlist

    def names(self) -> list[str]:
        return self.allowlist.allowed_names(self.registry.names())

    def schemas(self) -> list[ToolSchema]:
        return self.allowlist.schemas(self.registry.schemas())

    def call(self, name: str, arguments: str | Mapping[str, Any]) -> ToolResult:
        if not self.allowlist.allowed(name):
            decision = self.allowlist.assess_action(
                Action(kind=ActionKind.TOOL, workspace="/", tool=name)
            )
            return ToolResult(
                output=decision.message(),
                ok=False,
                meta={"error": "governance_denied", "governance": decision.to_dict()},
            )
        return self.registry.call(name, arguments)


__all__ = ["TAINTED_SAFE_TOOLS", "AdaptiveToolAllowlist", "AllowlistedTools"]
