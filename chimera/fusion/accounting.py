"""Itemised cost accounting shared by fusion, cascades and the delegation hierarchy.

Every composite backend (a fusion panel, a cascade, an orchestrator) makes several model calls
for one answer; each is a :class:`CallRecord`, and the answer's usage is the sum over all of
them (:func:`sum_usage`), escalations and failed members included. A price that is unknown
for any priced call makes the total cost unknown (``None``) rather than an undercount.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from chimera.errors import BudgetExceeded, ProviderError
from chimera.protocols import AuditSink, Completion, Usage

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
            **usage_fields(self.usage),
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


def usage_fields(usage: Usage) -> dict[str, Any]:
    """``prompt_tokens``, ``completion_tokens`` and ``cost_usd`` (``None``: unknown) of
    ``usage``, as records and audit events carry them."""
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cost_usd": usage.cost_usd,
    }


def spent_calls(exc: BaseException) -> tuple[CallRecord, ...]:
    """The calls a failed composite backend already paid for (its error's ``calls``)."""
    return tuple(c for c in getattr(exc, "calls", ()) if isinstance(c, CallRecord))


def recorded_call(
    call: Callable[[], Completion],
    *,
    role: str,
    name: str,
    model: str,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[CallRecord, Completion | None, ProviderError | BudgetExceeded | None]:
    """Make one model call of a composite answer and account for it.

    Args:
        call: the call (``backend.complete(...)`` bound to its arguments).
        role, name: the record's role and member, tier or worker name.
        model: the model asked (the record names the answer's own model when it has one).
        clock: seconds, monotonic (``elapsed_s`` of the record).

    Returns:
        ``(record, answer, None)``, or for a provider failure or budget refusal
        ``(record, None, error)``: the error is returned, not raised, so each caller decides
        whether it ends the answer; its record is ``ok=False`` with the usage of the calls
        the error says were spent (:func:`spent_calls`), else :data:`FAILED_USAGE`.
    """
    started = clock()
    try:
        answer = call()
    except (ProviderError, BudgetExceeded) as exc:
        spent = spent_calls(exc)
        usage = sum_records(spent) if spent else FAILED_USAGE
        error = describe_error(exc)
        return CallRecord(role, name, model, usage, False, error, clock() - started), None, exc
    usage, used = answer.usage, answer.model or model
    return CallRecord(role, name, used, usage, elapsed_s=clock() - started), answer, None


def require_distinct(names: Sequence[str], what: str) -> None:
    """Raise ``ValueError`` unless ``names`` (of ``what``: tiers, panel members) are distinct."""
    if len(set(names)) != len(names):
        raise ValueError(f"{what} names must be distinct: {list(names)}")
