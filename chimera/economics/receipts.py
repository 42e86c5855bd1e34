"""Delegation receipts: delegation pays only when it is cheaper than doing the work inline.

Each delegation writes one JSONL line with its measured tokens and cost and, on the same line,
the inline counterfactual: the same work (the worker's measured prompt and completion tokens,
call by call) priced at the top model's own rate from LiteLLM's cost map. An unknown price is
``None``, never invented. The orchestrator's own overhead (decompose, synthesize, spot-check
judging) is a receipt too, so :func:`summarize_delegations` (``chimera delegations``) reports
an auditable net saving::

    net_saving = Σ inline counterfactual − Σ delegated cost − Σ overhead

and says it cannot when any price in the sum is unknown. Subproblems answered inline by the
top model are receipted (``kind: inline``) but cancel out of the saving: the counterfactual
would have paid them too.

Receipts are append-only (one ``write`` + flush + fsync per line, under a lock, so threads
never interleave) and are mirrored into the audit log as ``delegation.receipt`` events.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from chimera.errors import ChimeraError
from chimera.fusion.accounting import CallRecord, SupportsAudit, sum_records
from chimera.localstate import make_dirs

if TYPE_CHECKING:
    from chimera.governance.redactor import SecretRedactor

RECEIPTS_FILE = "delegations.jsonl"
Kind = Literal["delegation", "inline", "overhead"]
Pricer = Callable[[str, int, int], float | None]


def _default_pricer(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    from chimera.providers import cost_usd

    return cost_usd(model, prompt_tokens, completion_tokens)


def counterfactual_usd(calls: Iterable[CallRecord], top_model: str, price: Pricer) -> float | None:
    """The calls' tokens priced at ``top_model``'s rate, call by call; ``None`` if unpriced."""
    total = 0.0
    for call in calls:
        cost = price(top_model, call.usage.prompt_tokens, call.usage.completion_tokens)
        if cost is None:
            return None
        total += cost
    return total


class ReceiptLog:
    """Appends receipts for one run to ``path`` (``<run dir>/delegations.jsonl``).

    Args:
        path: the JSONL file (created with its parents).
        run_id: written on every line.
        top_model: the trusted top model whose rate prices the counterfactual.
        audit: optional audit log; each receipt is also a ``delegation.receipt`` event.
        price: ``(model, prompt_tokens, completion_tokens) -> USD | None`` (default: LiteLLM's
            cost map through :func:`chimera.providers.cost_usd`).
        redactor: every line passes it before the write (a subtask quotes the question, and
            the run folder is uploaded); default: the process environment's.
    """

    def __init__(
        self,
        path: Path,
        run_id: str,
        top_model: str,
        *,
        audit: SupportsAudit | None = None,
        price: Pricer = _default_pricer,
        redactor: SecretRedactor | None = None,
    ) -> None:
        from chimera.governance.redactor import SecretRedactor

        self.redactor = redactor or SecretRedactor.from_environment()
        self.path = path
        self.run_id = run_id
        self.top_model = top_model
        self.audit = audit
        self.price = price
        self._lock = threading.Lock()
        make_dirs(path.parent)

    def delegation(
        self,
        ident: str,
        subtask: str,
        calls: Sequence[CallRecord],
        *,
        worker_model: str,
        verified: bool,
    ) -> dict[str, Any]:
        """Receipt of one delegated subproblem (every worker call, re-asks included)."""
        return self._write(
            "delegation",
            ident,
            subtask,
            calls,
            model=worker_model,
            verified=verified,
            inline_cost=counterfactual_usd(calls, self.top_model, self.price),
        )

    def inline(
        self, ident: str, subtask: str, calls: Sequence[CallRecord], *, verified: bool
    ) -> dict[str, Any]:
        """Receipt of a subproblem the top model answered itself."""
        return self._write("inline", ident, subtask, calls, model=self.top_model, verified=verified)

    def overhead(self, phase: str, calls: Sequence[CallRecord], *, model: str) -> dict[str, Any]:
        """Receipt of the orchestrator's own work (``decompose``, ``synthesize``, ``verify``)."""
        return self._write("overhead", phase, phase, calls, model=model)

    def _write(
        self,
        kind: Kind,
        ident: str,
        subtask: str,
        calls: Sequence[CallRecord],
        *,
        model: str,
        verified: bool | None = None,
        inline_cost: float | None = None,
    ) -> dict[str, Any]:
        usage = sum_records(calls)
        line: dict[str, Any] = {
            "ts": time.time(),
            "run_id": self.run_id,
            "kind": kind,
            "id": ident,
            "subtask": subtask,
            "model": model,
            "calls": len(calls),
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "cost_usd": usage.cost_usd,
            "verified": verified,
        }
        if kind == "delegation":
            line["inline_model"] = self.top_model
            line["inline_cost_usd"] = inline_cost
            line["inline_basis"] = "worker's measured tokens, call by call, at inline_model's rate"
        line, _ = self.redactor.redact_json(line)
        data = (json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        if self.audit is not None:
            self.audit.append("delegation.receipt", **{k: v for k, v in line.items() if k != "ts"})
        return line


def read_receipts(path: Path) -> list[dict[str, Any]]:
    """Every receipt line of ``path``.

    Raises:
        ChimeraError: the file cannot be read, or a line is not a JSON object
            (``file:line: message``); a torn last line (a crash mid-write) is ignored.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ChimeraError(f"{path}: cannot read receipts: {exc.strerror or exc}") from exc
    out: list[dict[str, Any]] = []
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            if number == len(lines) and not text.endswith("\n"):
                break  # torn final write
            raise ChimeraError(f"{path}:{number}: not a JSON receipt: {exc.msg}") from exc
        if not isinstance(value, dict):
            raise ChimeraError(f"{path}:{number}: a receipt must be a JSON object")
        out.append(value)
    return out


def _add(total: float | None, value: Any) -> float | None:
    if total is None or value is None:
        return None
    return total + float(value)


@dataclass
class DelegationSummary:
    """The audited account of one run's delegations (USD; ``None`` = unknown)."""

    run_id: str
    delegations: int = 0
    inline: int = 0
    unverified: int = 0
    delegated_tokens: int = 0
    delegated_usd: float | None = 0.0
    counterfactual_usd: float | None = 0.0
    overhead_tokens: int = 0
    overhead_usd: float | None = 0.0
    inline_usd: float | None = 0.0
    unknown_prices: list[str] = field(default_factory=list)

    @property
    def net_saving_usd(self) -> float | None:
        """counterfactual − delegated − overhead, or ``None`` when any part is unknown."""
        if None in (self.counterfactual_usd, self.delegated_usd, self.overhead_usd):
            return None
        assert self.counterfactual_usd is not None
        assert self.delegated_usd is not None
        assert self.overhead_usd is not None
        return self.counterfactual_usd - self.delegated_usd - self.overhead_usd

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "delegations": self.delegations,
            "inline": self.inline,
            "unverified": self.unverified,
            "delegated_tokens": self.delegated_tokens,
            "delegated_usd": self.delegated_usd,
            "counterfactual_usd": self.counterfactual_usd,
            "overhead_tokens": self.overhead_tokens,
            "overhead_usd": self.overhead_usd,
            "inline_usd": self.inline_usd,
            "net_saving_usd": self.net_saving_usd,
            "unknown_prices": self.unknown_prices,
        }

    def render(self) -> str:
        """A short human report; says plainly when the saving cannot be computed."""

        def usd(v: float | None) -> str:
            return "unknown" if v is None else f"${v:.6f}"

        lines = [
            f"run {self.run_id}: {self.delegations} delegation(s), {self.inline} inline, "
            f"{self.unverified} unverified",
            f"  delegated:      {self.delegated_tokens} tokens, {usd(self.delegated_usd)}",
            f"  inline would have cost: {usd(self.counterfactual_usd)}",
            f"  orchestrator overhead:  {self.overhead_tokens} tokens, {usd(self.overhead_usd)}",
            f"  answered inline by the top model: {usd(self.inline_usd)} (in both accounts)",
        ]
        net = self.net_saving_usd
        if net is None:
            names = ", ".join(self.unknown_prices) or "a model"
            lines.append(
                f"  net saving: cannot be computed: no price is known for {names} "
                "(add it under [tool.chimera.models.prices])"
            )
        else:
            word = "saving" if net >= 0 else "LOSS"
            lines.append(f"  net {word}: {usd(abs(net))}")
        return "\n".join(lines)


def summarize_delegations(
    receipts: Iterable[dict[str, Any]], run_id: str = ""
) -> DelegationSummary:
    """Sum receipts into a :class:`DelegationSummary` (see the module docstring)."""
    summary = DelegationSummary(run_id=run_id)
    unknown: set[str] = set()
    for r in receipts:
        if not summary.run_id:
            summary.run_id = str(r.get("run_id", ""))
        kind = r.get("kind")
        tokens = int(r.get("prompt_tokens", 0)) + int(r.get("completion_tokens", 0))
        cost = r.get("cost_usd")
        if cost is None and int(r.get("calls", 0)):
            unknown.add(str(r.get("model")))
        if kind == "delegation":
            summary.delegations += 1
            summary.unverified += 0 if r.get("verified") else 1
            summary.delegated_tokens += tokens
            summary.delegated_usd = _add(summary.delegated_usd, cost)
            inline_cost = r.get("inline_cost_usd")
            if inline_cost is None:
                unknown.add(str(r.get("inline_model")))
            summary.counterfactual_usd = _add(summary.counterfactual_usd, inline_cost)
        elif kind == "inline":
            summary.inline += 1
            summary.inline_usd = _add(summary.inline_usd, cost)
        elif kind == "overhead":
            summary.overhead_tokens += tokens
            summary.overhead_usd = _add(summary.overhead_usd, cost)
    summary.unknown_prices = sorted(unknown)
    return summary
