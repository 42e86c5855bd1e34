"""Token and USD budgets enforced at the backend: a call that could cross one is never sent.

A :class:`TokenBudget` counts what was spent and what is *reserved* by calls in flight. A
caller reserves its worst case (prompt tokens + ``max_tokens``, priced from LiteLLM's cost
map) before sending and settles the actual usage after, so N concurrent callers can never
jointly overrun a budget: the check and the reservation happen under one lock (the classic
reserve/commit of admission control, as in database connection or quota pools). Budgets
nest: a per-worker budget with ``parent=run_budget`` must fit both its own ceiling and every
ancestor's, checked atomically across the whole chain.

:class:`BudgetedBackend` wraps any :class:`~chimera.protocols.SupportsComplete` with that
discipline; a refusal raises :class:`~chimera.errors.BudgetExceeded` and is an audit event.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chimera.errors import BudgetExceeded, ChimeraError, ConfigError, ProviderTimeout
from chimera.protocols import (
    AuditSink,
    Completion,
    Message,
    Purpose,
    SupportsComplete,
    SupportsCredentialCheck,
    SupportsMetering,
    SupportsReasoningEffort,
    ToolSchema,
    Usage,
)
from chimera.providers import pricing

if TYPE_CHECKING:
    from chimera.config import BudgetConfig

__all__ = ["BudgetedBackend", "Remaining", "Reservation", "TokenBudget"]

_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Reservation:
    """A worst-case hold on a budget (and its ancestors) for one call in flight.

    ``usd`` is ``None`` when the call's price is unknown (only allowed where a token budget
    bounds the call).
    """

    id: int
    tokens: int
    usd: float | None
    budget: TokenBudget


@dataclass(frozen=True, slots=True)
class Remaining:
    """What can still be reserved: the tightest of a budget and its ancestors.

    ``None`` means unlimited (tokens) or unlimited/unknown (USD; see ``usd_known``).
    """

    tokens: int | None
    usd: float | None
    usd_known: bool = True


class TokenBudget:
    """A thread-safe token and USD budget, optionally nested under a parent budget.

    Args:
        max_tokens: ceiling on prompt + completion tokens; ``None`` is unlimited.
        max_usd: ceiling in US dollars; ``None`` is unlimited.
        parent: an enclosing budget (the run's) that every reservation must also fit.
        name: used in refusal messages and audit events (``run``, ``worker-3``).

    A budget tree shares one lock, so a reservation is checked and recorded against the
    whole chain atomically.
    """

    def __init__(
        self,
        max_tokens: int | None = None,
        max_usd: float | None = None,
        *,
        parent: TokenBudget | None = None,
        name: str = "run",
    ) -> None:
        if max_tokens is not None and max_tokens < 0:
            raise ValueError("max_tokens must be >= 0")
        if max_usd is not None and max_usd < 0:
            raise ValueError("max_usd must be >= 0")
        self.max_tokens = max_tokens
        self.max_usd = max_usd
        self.parent = parent
        self.name = name
        self._lock: threading.RLock = parent._lock if parent is not None else threading.RLock()
        self._spent_tokens = 0
        self._spent_usd = 0.0
        self._usd_unknown = False
        self._reserved_tokens = 0
        self._reserved_usd = 0.0
        self._open: dict[int, Reservation] = {}

    @classmethod
    def from_config(cls, config: BudgetConfig, *, name: str = "run") -> TokenBudget:
        """The run budget described by ``[tool.chimera.budget]``."""
        return cls(config.tokens, config.usd, name=name)

    def child(
        self, name: str, max_tokens: int | None = None, max_usd: float | None = None
    ) -> TokenBudget:
        """A nested budget (a worker's) whose reservations also count against this one."""
        return TokenBudget(max_tokens, max_usd, parent=self, name=name)

    def chain(self) -> list[TokenBudget]:
        """This budget followed by its ancestors, innermost first."""
        out: list[TokenBudget] = []
        node: TokenBudget | None = self
        while node is not None:
            out.append(node)
            node = node.parent
        return out

    @property
    def limits_tokens(self) -> bool:
        """True when this budget or an ancestor has a token ceiling."""
        return any(b.max_tokens is not None for b in self.chain())

    @property
    def limits_usd(self) -> bool:
        """True when this budget or an ancestor has a USD ceiling."""
        return any(b.max_usd is not None for b in self.chain())

    @property
    def spent_tokens(self) -> int:
        """Tokens settled against this budget (its children's included)."""
        with self._lock:
            return self._spent_tokens

    @property
    def spent_usd(self) -> float | None:
        """USD settled against this budget; ``None`` once any settled call's cost was unknown."""
        with self._lock:
            return None if self._usd_unknown else self._spent_usd

    @property
    def reserved_tokens(self) -> int:
        """Tokens held by calls in flight."""
        with self._lock:
            return self._reserved_tokens

    def remaining(self) -> Remaining:
        """What a new reservation may still take (the tightest over the chain)."""
        with self._lock:
            tokens: int | None = None
            usd: float | None = None
            usd_known = True
            for b in self.chain():
                if b.max_tokens is not None:
                    left = max(0, b.max_tokens - b._spent_tokens - b._reserved_tokens)
                    tokens = left if tokens is None else min(tokens, left)
                if b.max_usd is not None:
                    if b._usd_unknown:
                        usd_known = False
                        continue
                    left_usd = max(0.0, b.max_usd - b._spent_usd - b._reserved_usd)
                    usd = left_usd if usd is None else min(usd, left_usd)
            return Remaining(tokens, usd, usd_known)

    def reserve(self, tokens: int, usd: float | None) -> Reservation:
        """Hold ``tokens`` (and ``usd``) on this budget and every ancestor, or refuse.

        A call of unknown price (``usd=None``) under a USD ceiling is admitted only when a
        token ceiling in the chain bounds it; the USD total then becomes unknown.

        Raises:
            BudgetExceeded: the reservation would cross a ceiling; nothing is held.
        """
        if tokens < 0:
            raise ValueError("tokens must be >= 0")
        with self._lock:
            chain = self.chain()
            for b in chain:
                if b.max_tokens is not None:
                    used = b._spent_tokens + b._reserved_tokens
                    if used + tokens > b.max_tokens:
                        raise BudgetExceeded(
                            f"budget '{b.name}': the call may use up to {tokens} tokens but "
                            f"only {max(0, b.max_tokens - used)} of {b.max_tokens} remain",
                            limit="tokens",
                        )
                if b.max_usd is not None:
                    if usd is None or b._usd_unknown:
                        if not any(x.max_tokens is not None for x in chain):
                            what = "the call's cost" if usd is None else "the USD spent so far"
                            raise BudgetExceeded(
                                f"budget '{b.name}': {what} is unknown and no token budget "
                                "bounds it",
                                limit="usd",
                            )
                        continue
                    used_usd = b._spent_usd + b._reserved_usd
                    if used_usd + usd > b.max_usd + 1e-12:
                        raise BudgetExceeded(
                            f"budget '{b.name}': the call may cost up to ${usd:.6f} but only "
                            f"${max(0.0, b.max_usd - used_usd):.6f} of ${b.max_usd:.6f} remain",
                            limit="usd",
                        )
            reservation = Reservation(next(_ids), tokens, usd, self)
            for b in chain:
                b._reserved_tokens += tokens
                if usd is not None:
                    b._reserved_usd += usd
            self._open[reservation.id] = reservation
            return reservation

    def _close(self, reservation: Reservation) -> list[TokenBudget]:
        if reservation.budget is not self or self._open.pop(reservation.id, None) is None:
            raise ChimeraError(f"reservation {reservation.id} is not open on '{self.name}'")
        chain = self.chain()
        for b in chain:
            b._reserved_tokens -= reservation.tokens
            if reservation.usd is not None:
                b._reserved_usd -= reservation.usd
        return chain

    def settle(self, reservation: Reservation, usage: Usage) -> None:
        """Replace a reservation with the call's actual usage (on this budget and ancestors).

        ``usage.cost_usd`` of ``None`` makes the chain's USD totals unknown.

        Raises:
            ChimeraError: the reservation was already settled or released, or is another's.
        """
        with self._lock:
            for b in self._close(reservation):
                b._spent_tokens += usage.total_tokens
                if usage.cost_usd is None:
                    b._usd_unknown = True
                else:
                    b._spent_usd += usage.cost_usd

    def release(self, reservation: Reservation) -> None:
        """Drop a reservation whose call spent nothing (it failed before being processed)."""
        with self._lock:
            self._close(reservation)

    def __repr__(self) -> str:
        return (
            f"TokenBudget(name={self.name!r}, max_tokens={self.max_tokens}, "
            f"max_usd={self.max_usd}, spent_tokens={self.spent_tokens}, "
            f"spent_usd={self.spent_usd})"
        )


class BudgetedBackend:
    """A backend that reserves a call's worst case on a budget before sending it.

    The estimate is the prompt's tokens plus ``max_tokens``, counted and priced by the inner
    backend's :class:`~chimera.protocols.SupportsMetering` when it is for ``model``, else by
    LiteLLM's tokenizer and cost map for ``model``
    (:class:`~chimera.providers.pricing.LiteLLMMeter`). ``max_tokens`` (the caller's, else
    ``default_max_tokens``) is passed to the inner backend so the provider enforces it.
    Settlement uses the completion's usage (its cost, or the model's price when the inner
    backend reports none). A call that times out is charged its full reservation, since the
    provider may have billed work it never returned; other provider errors release it.

    Args:
        inner: the backend that sends calls.
        budget: the (possibly nested) budget to enforce.
        model: the model name whose tokenizer and price apply.
        default_max_tokens: the completion cap when a caller passes none.
        audit: refusals are ``budget_refused`` events; under-estimates ``budget_overrun``.

    Raises:
        ConfigError: at construction, a USD ceiling applies, ``model`` has no known price
            and no token ceiling bounds the spending.
    """

    def __init__(
        self,
        inner: SupportsComplete,
        budget: TokenBudget,
        *,
        model: str,
        default_max_tokens: int = 4096,
        audit: AuditSink | None = None,
    ) -> None:
        if default_max_tokens <= 0:
            raise ValueError("default_max_tokens must be > 0")
        self.inner = inner
        self.budget = budget
        self.model = model
        self.default_max_tokens = default_max_tokens
        self.audit = audit
        # The inner backend's own meter when it is for this model; LiteLLM's by name otherwise
        # (a script standing in for a priced model, a backend that declares no meter).
        self.meter: SupportsMetering = (
            inner
            if isinstance(inner, SupportsMetering) and inner.model == model
            else pricing.LiteLLMMeter(model)
        )
        if budget.limits_usd and not budget.limits_tokens and self.meter.cost_usd(1, 1) is None:
            raise ConfigError(
                f"budget: a USD budget is set but model '{model}' has no known price; add "
                "its price under [tool.chimera.models.prices] or also set a token budget"
            )

    def with_reasoning_effort(self, effort: str) -> BudgetedBackend | None:
        """A copy on the same budget whose inner backend sends ``effort``; ``None`` when the
        inner backend has no such knob."""
        if not isinstance(self.inner, SupportsReasoningEffort):
            return None
        tuned = self.inner.with_reasoning_effort(effort)
        if tuned is None:
            return None
        clone = copy.copy(self)
        clone.inner = tuned
        if isinstance(tuned, SupportsMetering) and tuned.model == self.model:
            clone.meter = tuned
        return clone

    def check_credentials(self) -> None:
        """The inner backend's check, when it has one.

        Raises:
            AuthenticationError: the inner backend's key is missing.
        """
        if isinstance(self.inner, SupportsCredentialCheck):
            self.inner.check_credentials()

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        """Reserve, send through the inner backend, settle. See the class docstring.

        Raises:
            BudgetExceeded: refused before sending (nothing reached the provider).
            ProviderError: from the inner backend.
        """
        cap = max_tokens if max_tokens is not None else self.default_max_tokens
        prompt = self.meter.count_tokens(messages, tools)
        est_tokens = prompt + cap
        est_usd = self.meter.cost_usd(prompt, cap)
        try:
            reservation = self.budget.reserve(est_tokens, est_usd)
        except BudgetExceeded as exc:
            if self.audit is not None:
                remaining = self.budget.remaining()
                self.audit.append(
                    "budget_refused",
                    budget=self.budget.name,
                    model=self.model,
                    purpose=str(purpose),
                    estimate_tokens=est_tokens,
                    estimate_prompt_tokens=prompt,
                    max_tokens=cap,
                    estimate_usd=est_usd,
                    remaining_tokens=remaining.tokens,
                    remaining_usd=remaining.usd,
                    reason=str(exc),
                )
            raise
        try:
            completion = self.inner.complete(messages, tools=tools, purpose=purpose, max_tokens=cap)
        except ProviderTimeout:
            self.budget.settle(reservation, Usage(0, est_tokens, est_usd))
            raise
        except BaseException:
            self.budget.release(reservation)
            raise
        usage = completion.usage
        if usage.cost_usd is None:
            priced = self.meter.cost_usd(usage.prompt_tokens, usage.completion_tokens)
            if priced is not None:
                usage = dataclasses.replace(usage, cost_usd=priced)
                completion = dataclasses.replace(completion, usage=usage)
        self.budget.settle(reservation, usage)
        over_usd = usage.cost_usd is not None and est_usd is not None and usage.cost_usd > est_usd
        if (usage.total_tokens > est_tokens or over_usd) and self.audit is not None:
            self.audit.append(
                "budget_overrun",
                budget=self.budget.name,
                model=self.model,
                estimate_tokens=est_tokens,
                actual_tokens=usage.total_tokens,
                estimate_usd=est_usd,
                actual_usd=usage.cost_usd,
            )
        return completion
