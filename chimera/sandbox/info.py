"""The sandbox mode as data: what the PR body, the job summary and the outcome comment show."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class SandboxInfo:
    """How the commands of a run were isolated.

    Attributes:
        mode: ``bwrap`` or ``scrubbed``.
        strict: ``True`` for bubblewrap; ``False`` means the weaker, opted-out mode, whose
            verdicts are advisory.
        network: network access was allowed inside.
        description: one line (:meth:`chimera.sandbox.Sandbox.describe`).
        bubblewrap: ``bwrap --version`` (``""`` in scrubbed mode).
        fresh_proc: a fresh ``/proc`` was mounted (``False``: an empty one).
        process_limit_enforced: ``False`` as root (the kernel exempts root from the process
            limit; the wall-clock kill of the pid namespace still holds).
        limits: the resource limits, by name (bytes, counts, seconds).
    """

    mode: str
    strict: bool
    network: bool
    description: str
    bubblewrap: str = ""
    fresh_proc: bool = False
    process_limit_enforced: bool = True
    limits: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping of every field."""
        return asdict(self)

    def markdown(self) -> str:
        """One Markdown line: ``Sandbox: `bwrap` (strict) — <description>``, or the warning
        that verdicts were not sandboxed."""
        if self.strict:
            return f"Sandbox: `{self.mode}` (strict) — {self.description}"
        return (
            f"Sandbox: `{self.mode}` — **not isolated**: model-written code ran with only a "
            f"scrubbed environment; treat its verdicts as advisory ({self.description})"
        )
