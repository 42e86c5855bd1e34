"""Cost economics and the delegation hierarchy.

* :class:`CascadeBackend` (+ gates) — weak → gate → medium → gate → fusion; pays every hop.
* :class:`EffortPolicy` / :class:`EffortBackend` — max_tokens, reasoning effort and ladder
  rung from (purpose, risk, attempt, repeated signature); :func:`call_context` sets the facts.
* :class:`WorkerBudgets` — per-worker hard ceilings under the run budget.
* :class:`EnvelopeVerifier` — schema → acceptance criteria → seeded spot check.
* :class:`HierarchicalOrchestrator` — decompose → budgeted workers → verify → synthesize.
* :mod:`chimera.economics.receipts` — delegation receipts and the audited net saving.

The ProjectOrchestrator lives in :mod:`chimera.orchestration`, above this package.
Nothing here imports LiteLLM at import time.
"""

from __future__ import annotations

from chimera.call_context import CallContext, call_context, current_context
from chimera.economics.cascade import (
    CascadeBackend,
    CascadeTier,
    CommandGate,
    CriteriaGate,
    Gate,
    GateVerdict,
    SchemaGate,
)
from chimera.economics.effort import EffortBackend, EffortChoice, EffortPolicy, Rung
from chimera.economics.envelope import (
    AcceptanceCriteria,
    Citation,
    Envelope,
    EnvelopeVerifier,
    RepoReader,
    SpotCheck,
)
from chimera.economics.hierarchy import HierarchicalOrchestrator
from chimera.economics.hierarchy_setup import plan_with_hierarchy
from chimera.economics.receipts import ReceiptLog, summarize_delegations
from chimera.economics.workers import WorkerBudgets

__all__ = [
    "AcceptanceCriteria",
    "CallContext",
    "CascadeBackend",
    "CascadeTier",
    "Citation",
    "CommandGate",
    "CriteriaGate",
    "EffortBackend",
    "EffortChoice",
    "EffortPolicy",
    "Envelope",
    "EnvelopeVerifier",
    "Gate",
    "GateVerdict",
    "HierarchicalOrchestrator",
    "ReceiptLog",
    "RepoReader",
    "Rung",
    "SchemaGate",
    "SpotCheck",
    "WorkerBudgets",
    "call_context",
    "current_context",
    "plan_with_hierarchy",
    "summarize_delegations",
]
