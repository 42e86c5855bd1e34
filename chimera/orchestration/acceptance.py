"""Acceptance requirements written by the model when a task brings none (DESIGN.md step 2).

A task run's goal is its acceptance requirements. An issue may carry them in a fenced
``chimera`` block; when it does not, the agent writes them as its first card: one tool-less
call (``Purpose.PLAN``) that answers with such a block. What comes back is untrusted like the
task itself: the orchestrator validates it as a spec file, rejects any requirement that does
not fail on the base (it would test nothing) or that errors for a reason other than a missing
target, and lets the TrustKernel veto every ``command`` check before anything runs.
"""

from __future__ import annotations

from chimera.errors import ChimeraError
from chimera.governance.sanitize import fence_untrusted
from chimera.orchestration.goal import extract_spec_blocks
from chimera.protocols import Message, Purpose, SupportsComplete
from chimera.spec.model import Spec

ACCEPTANCE_SYSTEM = """\
You write acceptance requirements for a software task: executable checks that fail on the \
repository as it is now and pass once the task is done. Reply with exactly one fenced block \
whose info string is `chimera`, holding YAML:

```chimera
requirements:
  - id: short-kebab-id            # new ids only; never reuse or change an existing one
    title: What must hold, in words
    defines: {path: pkg/mod.py, symbol: Class.method, kind: method}
```

Each requirement has exactly one check:
- defines: {path or module, symbol, kind: class|function|method|variable|any}
- contains: {path or paths: [globs], pattern, regex: true|false}
- absent: {path or paths: [globs], pattern, regex: true|false}
- command: {run: 'a test command', timeout: seconds}

Prefer defines/contains/absent; use a command only to run the project's own tests. Write \
two to five requirements that pin down the task's observable outcome, nothing else."""


class ModelAcceptanceWriter:
    """An :class:`~chimera.orchestration.project.AcceptanceWriter` over one backend.

    Args:
        backend: the model (the run's first rung).
        max_tokens: completion cap of the call.
    """

    def __init__(self, backend: SupportsComplete, *, max_tokens: int = 1500) -> None:
        self.backend = backend
        self.max_tokens = max_tokens

    def write_acceptance(self, task: str, spec: Spec) -> str:
        """The body of the ``chimera`` block the model wrote.

        Raises:
            ChimeraError: the answer holds no ``chimera`` block.
            ProviderError / BudgetExceeded: from the backend.
        """
        existing = (
            "\n".join(f"- {r.id}: {r.check.describe()}" for r in spec.requirements) or "(none)"
        )
        messages: list[Message] = [
            {"role": "system", "content": ACCEPTANCE_SYSTEM},
            {
                "role": "user",
                "content": (
                    f"# Task\n{fence_untrusted(task, 'task')}\n\n"
                    f"# Existing requirements (keep their ids unused)\n{existing}"
                ),
            },
        ]
        answer = self.backend.complete(messages, purpose=Purpose.PLAN, max_tokens=self.max_tokens)
        blocks = extract_spec_blocks(answer.text)
        if not blocks:
            raise ChimeraError("the model's answer held no ```chimera block of requirements")
        return blocks[0]
