"""The reasoning core: LLM-Fusion and cost-aware routing.

* :class:`FusionEngine` — a panel of models answers concurrently, a judge maps the answers
  (consensus / contradictions / partial coverage / unique insights / blind spots, a pydantic
  :class:`FusionAnalysis`), a synthesizer writes the final answer grounded in that map. A
  ``SupportsComplete`` backend for turns without tools.
* :class:`RoutedBackend` + :class:`RoutingPolicy` — tool turns to one model, deep or
  high-stakes turns to fusion or a cascade; every decision audited.
* :mod:`chimera.fusion.structured` — robust JSON extraction with one repair round.
* :mod:`chimera.fusion.accounting` — itemised call records and usage sums.

Nothing here imports LiteLLM.
"""

from __future__ import annotations

from chimera.fusion.accounting import CallRecord, sum_records, sum_usage
from chimera.fusion.analysis import FusionAnalysis
from chimera.fusion.engine import FusionEngine, PanelMember
from chimera.fusion.routing import RoutedBackend, RouteDecision, RoutingPolicy
from chimera.fusion.structured import ask_structured, extract_json, parse_structured

__all__ = [
    "CallRecord",
    "FusionAnalysis",
    "FusionEngine",
    "PanelMember",
    "RouteDecision",
    "RoutedBackend",
    "RoutingPolicy",
    "ask_structured",
    "extract_json",
    "parse_structured",
    "sum_records",
    "sum_usage",
]
