"""The governance layer around one run's tools, as ``--guard`` and ``--untrusted`` wire it.

Built only by the session factory (:mod:`chimera.orchestration.session_factory`) for every surface
(``chimera solve``, ``run`` and the GitHub Action), so all enforce the same rules the same way,
with the allowlist from one source: :func:`trusted_commands` of the run's *base* Spec.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from chimera.governance.audit import AuditLog
from chimera.governance.guard import Guard, govern_tools
from chimera.governance.taint import SourceKind, TaintLedger
from chimera.protocols import ToolCaller
from chimera.spec.model import Spec
from chimera.tools import ToolRegistry

ToolWrapper = Callable[[ToolRegistry], ToolCaller]


def trusted_commands(spec: Spec) -> list[str]:
    """The ``command`` runs of ``spec`` in file order: what a tainted run may execute.

    Pass the *base* Spec (before the task or the agent add requirements): requirements they
    add are untrusted text (DESIGN.md, governance).
    """
    return [run for r in spec.requirements if isinstance(run := getattr(r.check, "run", None), str)]


def tool_governance(
    workspace: Path,
    audit: AuditLog,
    *,
    guard: bool,
    untrusted: bool,
    task: str,
    trusted_commands: Sequence[str] = (),
    run_id: str = "",
    on_ledger: Callable[[TaintLedger], None] | None = None,
) -> tuple[ToolWrapper | None, list[Guard]]:
    """The tool wrapper for an AutonomousAgent, and the guards it creates.

    With ``guard``, every tool call is evaluated by the TrustKernel first (block and review
    verdicts are not executed; the reason goes back to the model). With ``untrusted`` (which
    implies ``guard``), the run is tainted by ``task`` from the first byte: commands run only
    from the allowlist (``trusted_commands`` — the *base* spec's ``command`` runs — the test
    runner, installing the project itself, read-only inspection).

    Returns:
        ``(wrapper, guards)``: ``wrapper`` is ``None`` when neither applies; ``guards`` fills
        in as the agent builds its tools and holds the denied actions for the run summary.
        ``on_ledger`` receives an untrusted run's taint ledger (the session keeps it, so a
        recalled tainted memory is recorded there too).
    """
    guards: list[Guard] = []
    if not (guard or untrusted):
        return None, guards
    ledger: TaintLedger | None = None
    if untrusted:
        ledger = TaintLedger.for_spec(trusted_commands, run_id, audit=audit)
        ledger.taint(task, SourceKind.UNTRUSTED_TASK, "task")
        if on_ledger is not None:
            on_ledger(ledger)

    def wrap(registry: ToolRegistry) -> ToolCaller:
        governed = govern_tools(registry, workspace, audit=audit, ledger=ledger)
        guards.append(governed.guard)
        return governed

    return wrap, guards
