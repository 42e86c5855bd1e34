"""Per-worker budgets under a run's shared budget.

Each worker of a hierarchy gets its own :class:`~chimera.providers.TokenBudget` with a hard
ceiling, nested under the run budget (``parent``): a worker's call is refused in advance when
it could cross either, and because a budget tree shares one lock and every call reserves its
worst case before sending and settles after, the run budget holds however many workers call at
once. A worker that hits its ceiling stops; the others go on.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chimera.protocols import SupportsComplete

if TYPE_CHECKING:
    from chimera.governance.audit import AuditLog
    from chimera.providers import BudgetedBackend, TokenBudget


@dataclass(frozen=True, slots=True)
class WorkerSpend:
    """What one worker spent (``cost_usd`` ``None`` when a price was unknown)."""

    worker: str
    tokens: int
    cost_usd: float | None
    max_tokens: int | None
    max_usd: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "worker": self.worker,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "max_tokens": self.max_tokens,
            "max_usd": self.max_usd,
        }


class WorkerBudgets:
    """Hands out one nested budget per worker name, all under ``run_budget``.

    Args:
        run_budget: the run's shared budget (the parent of every worker budget).
        per_worker_tokens: each worker's token ceiling (``None``: only the run's applies).
        per_worker_usd: each worker's USD ceiling (``None``: only the run's applies).
        default_max_tokens: the completion cap of a worker call whose caller passes none.
        audit: passed to each :class:`~chimera.providers.BudgetedBackend` (refusals logged).
    """

    def __init__(
        self,
        run_budget: TokenBudget,
        *,
        per_worker_tokens: int | None = None,
        per_worker_usd: float | None = None,
        default_max_tokens: int = 2048,
        audit: AuditLog | None = None,
    ) -> None:
        self.run_budget = run_budget
        self.per_worker_tokens = per_worker_tokens
        self.per_worker_usd = per_worker_usd
        self.default_max_tokens = default_max_tokens
        self.audit = audit
        self._lock = threading.Lock()
        self._budgets: dict[str, TokenBudget] = {}

    def budget(self, worker: str) -> TokenBudget:
        """The worker's budget (created on first use; the same object afterwards)."""
        with self._lock:
            if worker not in self._budgets:
                self._budgets[worker] = self.run_budget.child(
                    f"worker:{worker}", self.per_worker_tokens, self.per_worker_usd
                )
            return self._budgets[worker]

    def backend(self, worker: str, inner: SupportsComplete, *, model: str) -> BudgetedBackend:
        """``inner`` wrapped so every call reserves on the worker's budget (and the run's).

        Raises:
            ConfigError: a USD ceiling applies, ``model`` is unpriced and no token ceiling
                bounds it (from :class:`~chimera.providers.BudgetedBackend`).
        """
        from chimera.providers import BudgetedBackend

        return BudgetedBackend(
            inner,
            self.budget(worker),
            model=model,
            default_max_tokens=self.default_max_tokens,
            audit=self.audit,
        )

    def spend(self) -> list[WorkerSpend]:
        """Each worker's settled spend, in the order workers were first seen."""
        with self._lock:
            items = list(self._budgets.items())
        return [
            WorkerSpend(name, b.spent_tokens, b.spent_usd, b.max_tokens, b.max_usd)
            for name, b in items
        ]
