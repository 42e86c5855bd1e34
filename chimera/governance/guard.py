"""GovernedTool / govern_registry: every tool call is evaluated before it runs.

Wrapping is the whole integration: a :class:`Guard` turns each tool into a
:class:`GovernedTool` with the same ``name``, ``description`` and ``parameters``, so the Agent
loop and the :class:`~chimera.tools.ToolRegistry` work unchanged (``chimera solve --guard``,
on by default for ``chimera run``). Per call:

1. the call becomes an :class:`~chimera.governance.actions.Action`
   (:meth:`Action.from_tool_call`);
2. the :class:`~chimera.governance.kernel.TrustKernel` decides;
3. the decision is an audit event (``trust_verdict``) when an AuditLog is given;
4. ``block`` and ``review`` calls are **not executed**: the tool returns
   ``ToolResult(ok=False)`` whose output is the reason, so the agent sees why and can continue
   without it; each is kept in :attr:`Guard.denied` for the human reviewer's summary;
5. ``allow`` and ``warn`` calls run; a ``warn`` adds its reasons to the result's ``meta``;
6. the output of every call that ran passes a :class:`SecretRedactor` before the model sees
   it (audited as ``secret_redacted``, names only).

:func:`govern_tools` wires the whole layer in one call (guard, TaintLedger, ledgered source
tools, adaptive tool allowlist) and returns the tool caller to hand to the Agent.

The kernel's rules are lexical and never a boundary; the sandbox that runs the tools is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.governance.actions import Action
from chimera.governance.kernel import Decision, TrustKernel
from chimera.governance.redactor import SecretRedactor
from chimera.protocols import Tool, ToolResult, ToolSchema

if TYPE_CHECKING:
    from chimera.governance.allowlist import AdaptiveToolAllowlist
    from chimera.governance.audit import AuditLog
    from chimera.governance.taint import TaintLedger
    from chimera.tools.registry import ToolRegistry

TRUST_VERDICT_EVENT = "trust_verdict"
"""The audit event name of a governance decision."""

_ARGUMENT_CHARS = 2000


@dataclass(frozen=True, slots=True)
class DeniedAction:
    """A tool call that was not executed, for the reviewer.

    Attributes:
        tool: the tool name.
        summary: a one-line description of the action.
        verdict: ``review`` or ``block``.
        rule_ids: the rules (or taint layers) behind it.
        reasons: why, one sentence each.
        agent: the sub-agent that asked, when known.
    """

    tool: str
    summary: str
    verdict: str
    rule_ids: tuple[str, ...]
    reasons: tuple[str, ...]
    agent: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; ``action`` and ``reason`` are the one-line forms run summaries show."""
        return {
            "tool": self.tool,
            "action": self.summary,
            "reason": "; ".join(self.reasons),
            "summary": self.summary,
            "verdict": self.verdict,
            "rule_ids": list(self.rule_ids),
            "reasons": list(self.reasons),
            "agent": self.agent,
        }


DecisionHook = Callable[[Action, Decision], None]


class Guard:
    """Evaluates tool calls for one run (or one sub-agent of it) and remembers denials.

    Args:
        kernel: the TrustKernel (with the run's TaintLedger among its assessors, if any).
        workspace: the root the run is confined to.
        audit: when given, each decision is appended as a ``trust_verdict`` event.
        home: what ``~`` means in commands (default: the current user's home).
        agent: a sub-agent name recorded with each decision.
        on_decision: called with every (action, decision), e.g. by an AggregateMonitor.
        redactor: removes secrets from tool output (default: credential-named variables of
            the current environment, the workspace's dotenv values, known token formats).

    Thread-safe: tools of parallel workers may share one guard.
    """

    def __init__(
        self,
        kernel: TrustKernel,
        workspace: Path | str,
        *,
        audit: AuditLog | None = None,
        home: str | None = None,
        agent: str = "",
        on_decision: DecisionHook | None = None,
        redactor: SecretRedactor | None = None,
    ) -> None:
        self.kernel = kernel
        self.workspace = Path(workspace)
        self.audit = audit
        self.home = home
        self.agent = agent
        self.on_decision = on_decision
        self.redactor = (
            redactor
            if redactor is not None
            else SecretRedactor.from_environment(workspace=self.workspace)
        )
        self._denied: list[DeniedAction] = []
        self._warned: list[DeniedAction] = []
        self._lock = threading.Lock()

    @property
    def denied(self) -> list[DeniedAction]:
        """Calls not executed (``review`` and ``block``), oldest first."""
        with self._lock:
            return list(self._denied)

    @property
    def warnings(self) -> list[DeniedAction]:
        """Calls executed with a ``warn`` verdict, oldest first."""
        with self._lock:
            return list(self._warned)

    def check(self, tool_name: str, arguments: Mapping[str, Any] | str) -> Decision:
        """Evaluate one call, audit it, and remember it if denied or warned."""
        action = Action.from_tool_call(tool_name, arguments, self.workspace, home=self.home)
        decision = self.kernel.evaluate(action)
        # What is recorded (audit, summaries) passes the redactor too: a command or a reason
        # may quote a credential the model wrote into its call.
        clean = self._clean
        record = DeniedAction(
            tool=tool_name,
            summary=clean(action.summary()),
            verdict=decision.verdict.value,
            rule_ids=decision.rule_ids,
            reasons=tuple(clean(r) for r in decision.reasons),
            agent=self.agent,
        )
        with self._lock:
            if decision.denied:
                self._denied.append(record)
            elif decision.rule_ids:
                self._warned.append(record)
        if self.audit is not None:
            described = {
                k: clean(v)
                if isinstance(v, str)
                else [clean(x) for x in v]
                if isinstance(v, list)
                else v
                for k, v in action.to_dict().items()
            }
            self.audit.append(
                TRUST_VERDICT_EVENT,
                tool=tool_name,
                action=described,
                arguments=clean(str(dict(action.arguments)))[:_ARGUMENT_CHARS],
                executed=decision.executes,
                agent=self.agent,
                verdict=decision.verdict.value,
                rule_ids=list(decision.rule_ids),
                reasons=list(record.reasons),
                source=decision.source,
            )
        if self.on_decision is not None:
            self.on_decision(action, decision)
        return decision

    def redact_text(self, text: str) -> str:
        """``text`` with secrets replaced (see :class:`SecretRedactor`)."""
        return self.redactor.redact(text)[0]

    _clean = redact_text

    def redact(self, tool_name: str, result: ToolResult) -> ToolResult:
        """``result`` with secrets removed from its output (audited as ``secret_redacted``)."""
        text, names = self.redactor.redact(result.output)
        if not names:
            return result
        if self.audit is not None:
            self.audit.append(
                "secret_redacted", tool=tool_name, names=sorted(set(names)), agent=self.agent
            )
        meta = dict(result.meta)
        meta["redacted"] = sorted(set(names))
        return replace(result, output=text, meta=meta)

    def wrap(self, tool: Tool) -> GovernedTool:
        """``tool`` behind this guard (same metadata, evaluated on every call)."""
        return GovernedTool(tool, self)

    def govern(self, registry: ToolRegistry) -> ToolRegistry:
        """A new registry holding every tool of ``registry``, each behind this guard.

        The original registry is left as it was.
        """
        from chimera.tools.registry import ToolRegistry

        governed = ToolRegistry()
        for name in registry.names():
            governed.register(self.wrap(registry.get(name)))
        return governed


class GovernedTool:
    """A tool whose every call is evaluated by a :class:`Guard` first.

    ``name``, ``description`` and ``parameters`` are copied from the wrapped tool as instance
    attributes, so it registers and is offered to the model exactly like the original.
    """

    def __init__(self, tool: Tool, guard: Guard) -> None:
        self.inner = tool
        self.guard = guard
        self.name: str = tool.name
        self.description: str = tool.description
        self.parameters: dict[str, Any] = tool.parameters

    def __call__(self, **kwargs: Any) -> ToolResult:
        decision = self.guard.check(self.name, kwargs)
        if decision.denied:
            return ToolResult(
                output=self.guard.redact_text(decision.message()),
                ok=False,
                meta={"error": "governance_denied", "governance": decision.to_dict()},
            )
        result = self.guard.redact(self.name, self.inner(**kwargs))
        if decision.rule_ids:
            meta = dict(result.meta)
            meta["governance"] = decision.to_dict()
            result = replace(result, meta=meta)
        return result

    def __repr__(self) -> str:
        return f"GovernedTool({self.inner!r})"


def govern_registry(
    registry: ToolRegistry,
    kernel: TrustKernel,
    *,
    workspace: Path | str,
    audit: AuditLog | None = None,
    home: str | None = None,
    redactor: SecretRedactor | None = None,
) -> ToolRegistry:
    """A registry whose tools are all governed by ``kernel`` (see :class:`Guard`).

    Use :class:`Guard` directly to read the denied actions afterwards.
    """
    return Guard(kernel, workspace, audit=audit, home=home, redactor=redactor).govern(registry)


class GovernedTools:
    """The whole governance layer around one tool registry, as the Agent loop's tool caller.

    Built by :func:`govern_tools`. ``schemas()`` offers only the tools the adaptive allowlist
    allows now (all of them while the run is clean); ``call()`` runs through the guard.

    Attributes:
        registry: the governed registry (every tool a :class:`GovernedTool`, and a
            :class:`~chimera.governance.ledger_tool.LedgeredTool` inside it when a ledger is
            given).
        guard: holds the denied and warned calls for the run summary.
        ledger: the run's TaintLedger, if any.
        allowlist: the adaptive tool allowlist, if a ledger is given.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        guard: Guard,
        ledger: TaintLedger | None = None,
        allowlist: AdaptiveToolAllowlist | None = None,
    ) -> None:
        self.registry = registry
        self.guard = guard
        self.ledger = ledger
        self.allowlist = allowlist

    def names(self) -> list[str]:
        names = self.registry.names()
        return self.allowlist.allowed_names(names) if self.allowlist else names

    def schemas(self) -> list[ToolSchema]:
        schemas = self.registry.schemas()
        return self.allowlist.schemas(schemas) if self.allowlist else schemas

    def call(self, name: str, arguments: str | Mapping[str, Any]) -> ToolResult:
        return self.registry.call(name, arguments)


def govern_tools(
    registry: ToolRegistry,
    workspace: Path | str,
    *,
    audit: AuditLog | None = None,
    ledger: TaintLedger | None = None,
    kernel: TrustKernel | None = None,
    sources: Iterable[str] | None = None,
    home: str | None = None,
    agent: str = "",
    redactor: SecretRedactor | None = None,
) -> GovernedTools:
    """Wire the governance layer around ``registry`` in one call (``--guard``).

    With a ``ledger``: outside-text tools become ledgered sources (their output taints the
    run and is fenced), writes record provenance, and the kernel gains the ledger (command
    allowlist once tainted) and an :class:`AdaptiveToolAllowlist` (tool set narrows once
    tainted) as assessors.

    Args:
        registry: the run's tools (e.g. :func:`chimera.tools.native_tools`).
        workspace: the workspace root.
        audit: the run's audit log (verdicts, taint sources, the narrowing).
        ledger: the run's TaintLedger (taint it with the task first when the task came from
            outside: ``ledger.taint(task, SourceKind.UNTRUSTED_TASK, "task")``).
        kernel: a kernel to extend (default: the default rules); the ledger and allowlist are
            added to its assessors.
        sources: names of tools whose output is untrusted (default: decided per tool).
        home: what ``~`` means in commands.
        agent: the sub-agent's name, recorded with each decision.
        redactor: removes secrets from tool output (default: see :class:`Guard`).
    """
    from chimera.governance.allowlist import AdaptiveToolAllowlist
    from chimera.governance.ledger_tool import ledger_registry

    kern = kernel if kernel is not None else TrustKernel()
    allowlist = None
    if ledger is not None:
        registry = ledger_registry(registry, ledger, sources=sources)
        allowlist = AdaptiveToolAllowlist(ledger, audit=audit)
        kern.add_assessor(ledger)
        kern.add_assessor(allowlist)
    guard = Guard(kern, workspace, audit=audit, home=home, agent=agent, redactor=redactor)
    return GovernedTools(guard.govern(registry), guard, ledger, allowlist)


__all__ = [
    "TRUST_VERDICT_EVENT",
    "DeniedAction",
    "GovernedTool",
    "Guard",
    "SecretRedactor",
    "govern_registry",
]
