"""Itemised cost accounting shared by fusion, cascades and the delegation hierarchy.

Every composite backend (a fusion panel, a cascade, an orchestrator) makes several model calls
for one answer; each is a :class:`CallRecord`, and the answer's usage is the sum over all of
them (:func:`sum_usage`), escalations and failed members included. A price that is unknown
for any priced call makes the total cost unknown (``None``) rather than an undercount.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from chimera.protocols import AuditSink, Usage

SupportsAudit = AuditSink
"""Alias kept for this layer's callers: :class:`chimera.protocols.AuditSink`."""


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One model call made on behalf of a composite answer.

    Attributes:
        role: what the call was for (``panel``, ``judge``, ``judge-repair``, ``synthesizer``,
            ``tier``, ``worker``, ``reask``, ``decompose``, ``synthesize``, ``inline``).
        name: the panel member, tier or worker name.
        model: the model that answered (or was asked, when the call failed).
        usage: tokens and cost in USD (``cost_usd`` ``None`` when the price is unknown). A
            failed call that returned no usage counts as zero tokens and zero cost: the
            provider reported nothing billable.
        ok: ``False`` when the call raised.
        error: ``"ErrorType: message"`` for a failed call.
        elapsed_s: wall-clock seconds.
    """

    role: str
    name: str
    model: str
    usage: Usage
    ok: bool = True
    error: str = ""
    elapsed_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "name": self.name,
            "model": self.model,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "cost_usd": self.usage.cost_usd,
            "ok": self.ok,
            "error": self.error,
            "elapsed_s": round(self.elapsed_s, 4),
        }


FAILED_USAGE = Usage(0, 0, 0.0)
"""Usage recorded for a call that raised before any usage was reported."""


def sum_usage(usages: Iterable[Usage]) -> Usage:
    """Sum token counts and costs; the cost is ``None`` when any part's cost is unknown."""
    prompt = completion = 0
    cost: float | None = 0.0
    for usage in usages:
        prompt += usage.prompt_tokens
        completion += usage.completion_tokens
        if cost is not None:
            cost = None if usage.cost_usd is None else cost + usage.cost_usd
    return Usage(prompt_tokens=prompt, completion_tokens=completion, cost_usd=cost)


def sum_records(records: Iterable[CallRecord]) -> Usage:
    """The total usage of ``records`` (see :func:`sum_usage`)."""
    return sum_usage(r.usage for r in records)


def describe_error(exc: BaseException) -> str:
    """``"ErrorType: message"`` on one line, for records and audit events."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
