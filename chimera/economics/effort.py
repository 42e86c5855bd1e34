"""EffortPolicy: how much to spend on one call, from what is known about it.

The policy maps a call's purpose, the requirement's risk, the attempt number and a repeated
failure signature (:class:`~chimera.call_context.CallContext`) to a completion cap
(``max_tokens``), a reasoning effort where the provider supports one, and the rung of the
escalation ladder. Cheap turns stay cheap; plans for risky requirements and replans after a
repeated failure get room to think and, past ``attempts_per_rung`` attempts, a stronger rung
(AURORA-AI's adaptive allocation of budget across heterogeneous models; "carry the failure
forward": a repeated signature forces a structural change, here a stronger rung).

Every choice is logged: an ``effort.choice`` audit event with the inputs, the outputs and the
reason, and :attr:`EffortPolicy.choices` for summaries.

:class:`EffortBackend` applies the policy in front of a ladder of backends, so callers (the
Agent, the AutonomousAgent) stay unchanged: they set :func:`call_context` and call
``complete`` as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chimera.call_context import CallContext, current_context
from chimera.config.economics import (
    DEFAULT_LEVELS,
    DEFAULT_PURPOSE_LEVELS,
    DEFAULT_RISK_LEVELS,
    EffortLevel,
    ReasoningEffort,
)
from chimera.fusion.accounting import SupportsAudit
from chimera.protocols import (
    Completion,
    Message,
    Purpose,
    Risk,
    SupportsComplete,
    SupportsReasoningEffort,
    ToolSchema,
)


@dataclass(frozen=True, slots=True)
class EffortChoice:
    """What the policy chose for one call, and why."""

    level: str
    max_tokens: int
    reasoning_effort: ReasoningEffort | None
    rung: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "max_tokens": self.max_tokens,
            "reasoning_effort": self.reasoning_effort,
            "rung": self.rung,
            "reason": self.reason,
        }


def litellm_supports_reasoning(model: str) -> bool:
    """Whether LiteLLM's model map says ``model`` accepts ``reasoning_effort``."""
    from chimera.providers.lazy_litellm import import_litellm

    litellm = import_litellm("reasoning effort")
    try:
        return bool(litellm.supports_reasoning(model=model))
    except Exception:  # unknown models raise assorted errors: treat as unsupported
        return False


@dataclass
class EffortPolicy:
    """Maps (purpose, risk, attempt, repeated signature) to effort; see the module docstring.

    Attributes:
        levels: level name → :class:`EffortLevel`; levels are ordered by ``max_tokens``.
        purpose_levels: the base level per purpose.
        risk_levels: a floor per risk (a higher base level is kept).
        repeat_level: the floor after a repeated failure signature.
        attempts_per_rung: attempts spent on a rung before the next one is used.
        rungs: how many rungs the ladder has (the chosen rung is capped at ``rungs - 1``).
        repeat_escalates: a repeated signature moves one rung up at once.
        supports_reasoning: whether a model accepts a reasoning effort (default: LiteLLM's
            model map); unsupported or unknown → ``reasoning_effort`` ``None``.
        audit: optional audit log (event ``effort.choice``).

    Raises:
        ValueError: at construction, a level name is used but not defined.
    """

    levels: Mapping[str, EffortLevel] = field(default_factory=lambda: dict(DEFAULT_LEVELS))
    purpose_levels: Mapping[Purpose, str] = field(
        default_factory=lambda: dict(DEFAULT_PURPOSE_LEVELS)
    )
    risk_levels: Mapping[Risk, str] = field(default_factory=lambda: dict(DEFAULT_RISK_LEVELS))
    repeat_level: str = "high"
    attempts_per_rung: int = 2
    rungs: int = 1
    repeat_escalates: bool = True
    supports_reasoning: Callable[[str], bool] = litellm_supports_reasoning
    audit: SupportsAudit | None = None
    choices: list[EffortChoice] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        used = {*self.purpose_levels.values(), *self.risk_levels.values(), self.repeat_level}
        missing = sorted(used - set(self.levels))
        if missing:
            raise ValueError(f"effort level(s) used but not defined: {', '.join(missing)}")
        if self.attempts_per_rung < 1:
            raise ValueError("attempts_per_rung must be >= 1")
        if self.rungs < 1:
            raise ValueError("rungs must be >= 1")

    def _rank(self, level: str) -> int:
        return self.levels[level].max_tokens

    def choose(
        self,
        purpose: Purpose,
        ctx: CallContext | None = None,
        *,
        model: str | None = None,
        model_for_rung: Callable[[int], str] | None = None,
    ) -> EffortChoice:
        """The effort for a call with ``purpose`` under ``ctx`` (default: the current context).

        The model the call goes to decides whether a reasoning effort is passed: ``model``, or
        ``model_for_rung(rung)`` once the rung is chosen (for a ladder of different models).
        """
        ctx = ctx if ctx is not None else current_context()
        level = self.purpose_levels.get(purpose, "standard")
        reasons = [f"purpose {purpose.value} → {level}"]
        floor = self.risk_levels.get(ctx.risk)
        if floor is not None and self._rank(floor) > self._rank(level):
            level = floor
            reasons.append(f"risk {ctx.risk.value} raises it to {floor}")
        if ctx.repeated_signature is not None and self._rank(self.repeat_level) > self._rank(level):
            level = self.repeat_level
            reasons.append(f"repeated failure signature raises it to {self.repeat_level}")
        rung = (ctx.attempt - 1) // self.attempts_per_rung
        if rung:
            reasons.append(f"attempt {ctx.attempt} → rung {rung}")
        if ctx.repeated_signature is not None and self.repeat_escalates:
            rung += 1
            reasons.append("repeated signature → one rung up")
        if rung > self.rungs - 1:
            reasons.append(f"capped at the top rung {self.rungs - 1}")
            rung = self.rungs - 1
        if model_for_rung is not None:
            model = model_for_rung(rung) or model
        chosen = self.levels[level]
        effort = chosen.reasoning_effort
        if effort is not None and (model is None or not self.supports_reasoning(model)):
            reasons.append(f"no reasoning effort: {model or 'the model'} does not support one")
            effort = None
        choice = EffortChoice(level, chosen.max_tokens, effort, rung, "; ".join(reasons))
        with self._lock:
            self.choices.append(choice)
        if self.audit is not None:
            self.audit.append(
                "effort.choice",
                purpose=purpose.value,
                risk=ctx.risk.value,
                attempt=ctx.attempt,
                repeated_signature=ctx.repeated_signature,
                model=model,
                **choice.to_json(),
            )
        return choice


@dataclass(frozen=True, slots=True)
class Rung:
    """One rung of the ladder: a backend and the model whose capabilities apply."""

    backend: SupportsComplete
    model: str = ""


def with_reasoning_effort(backend: SupportsComplete, effort: ReasoningEffort) -> SupportsComplete:
    """A copy of ``backend`` that sends ``reasoning_effort`` with every request.

    The backend's own :class:`~chimera.protocols.SupportsReasoningEffort` makes the copy (a
    budgeted backend asks the one it wraps; LiteLLM's carries it in ``extra``); a backend that
    does not implement it, or declines (a script), is returned unchanged.
    """
    if isinstance(backend, SupportsReasoningEffort):
        tuned = backend.with_reasoning_effort(effort)
        if tuned is not None:
            return tuned
    return backend


class EffortBackend:
    """A ``SupportsComplete`` that applies an :class:`EffortPolicy` in front of a ladder.

    For each call: the policy chooses (from the call's purpose and :func:`current_context`);
    the call goes to ``rungs[choice.rung]`` with ``max_tokens`` = the caller's cap if given
    (never raised above it) else the level's, and the reasoning effort when the rung's model
    supports it. The returned completion carries ``raw["effort"]`` = the choice.

    Raises:
        ValueError: no rungs, or the policy's ``rungs`` differs from the ladder's length.
    """

    def __init__(self, rungs: Sequence[Rung], policy: EffortPolicy) -> None:
        if not rungs:
            raise ValueError("an effort ladder needs at least one rung")
        if policy.rungs != len(rungs):
            raise ValueError(f"policy.rungs is {policy.rungs} but the ladder has {len(rungs)}")
        self.rungs = tuple(rungs)
        self.policy = policy
        self.model = rungs[0].model or "effort-ladder"
        self._variants: dict[tuple[int, str], SupportsComplete] = {}
        self._lock = threading.Lock()

    def _backend(self, rung: int, effort: ReasoningEffort | None) -> SupportsComplete:
        base = self.rungs[rung].backend
        if effort is None:
            return base
        with self._lock:
            key = (rung, effort)
            if key not in self._variants:
                self._variants[key] = with_reasoning_effort(base, effort)
            return self._variants[key]

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        """Choose the effort, then delegate to the chosen rung."""
        choice = self.policy.choose(purpose, model_for_rung=lambda i: self.rungs[i].model)
        cap = choice.max_tokens if max_tokens is None else min(max_tokens, choice.max_tokens)
        out = self._backend(choice.rung, choice.reasoning_effort).complete(
            messages, tools=tools, purpose=purpose, max_tokens=cap
        )
        raw: dict[str, Any] = dict(out.raw or {})
        raw["effort"] = choice.to_json()
        return Completion(
            text=out.text, tool_calls=out.tool_calls, usage=out.usage, model=out.model, raw=raw
        )
