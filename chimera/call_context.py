"""What a caller knows about the model calls it is about to make, beyond their purpose.

``SupportsComplete.complete`` carries only ``purpose``; the requirement's risk, the attempt
number and whether the last failure signature repeated are known to the AutonomousAgent, not
to the backend. :func:`call_context` sets them for the calls made inside a ``with`` block
(a :mod:`contextvars` variable, so each thread and task sees its own), and routers and effort
policies read them with :func:`current_context` — callers and the protocol stay unchanged.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from chimera.protocols import Risk


@dataclass(frozen=True, slots=True)
class CallContext:
    """Facts about the current calls.

    Attributes:
        risk: the highest risk among the requirements being worked on (``low`` by default).
        attempt: 1-based attempt number of the current task.
        repeated_signature: the failure signature that repeated, or ``None``.
        worker: the worker name inside a hierarchy, or ``None`` for the top level.
    """

    risk: Risk = Risk.LOW
    attempt: int = 1
    repeated_signature: str | None = None
    worker: str | None = None


_DEFAULT = CallContext()
_CURRENT: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar(
    "chimera_call_context", default=None
)


def current_context() -> CallContext:
    """The :class:`CallContext` in force for this thread / task."""
    return _CURRENT.get() or _DEFAULT


@contextmanager
def call_context(
    *,
    risk: Risk | None = None,
    attempt: int | None = None,
    repeated_signature: str | None = None,
    worker: str | None = None,
) -> Iterator[CallContext]:
    """Override parts of the current context for the calls made inside the block.

    Example::

        with call_context(risk=Risk.HIGH, attempt=3, repeated_signature=sig):
            plan = backend.complete(messages, purpose=Purpose.REPLAN)
    """
    base = current_context()
    changes: dict[str, object] = {}
    if risk is not None:
        changes["risk"] = risk
    if attempt is not None:
        if attempt < 1:
            raise ValueError(f"attempt must be >= 1, got {attempt}")
        changes["attempt"] = attempt
    if repeated_signature is not None:
        changes["repeated_signature"] = repeated_signature
    if worker is not None:
        changes["worker"] = worker
    ctx = replace(base, **changes)  # type: ignore[arg-type]
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)
