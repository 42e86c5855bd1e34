"""CommandVerifier: a command's exit status as evidence (exit 0 passes, anything else fails).

Success is judged by running a check, never by a model's opinion of its own work. The command
runs through the given :class:`chimera.runner.CommandRunner` — the run's sandbox during an
autonomous run — with a timeout, and the verdict keeps the tail of the output as evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chimera.errors import RunnerError, SandboxError
from chimera.runner import CommandRunner

TAIL_CHARS = 2000
TAIL_LINES = 40


@dataclass(frozen=True, slots=True)
class Verification:
    """The outcome of one verification.

    Attributes:
        ok: the command exited 0 within its timeout.
        exit_code: the exit status (``-N`` if killed by signal N); ``None`` on timeout or
            when the command could not start.
        output_tail: the last lines of combined output (or why it could not start).
        duration_s: wall-clock seconds.
        timed_out: the timeout fired and the command's process group was killed.
    """

    ok: bool
    exit_code: int | None
    output_tail: str
    duration_s: float
    timed_out: bool = False

    def describe(self) -> str:
        """One line: ``passed (exit 0 after 1.2s)`` / ``failed (timed out after 300s)``."""
        verdict = "passed" if self.ok else "failed"
        if self.timed_out:
            return f"{verdict} (timed out after {self.duration_s:.0f}s)"
        if self.exit_code is None:
            return f"{verdict} (could not start)"
        return f"{verdict} (exit {self.exit_code} after {self.duration_s:.1f}s)"


class CommandVerifier:
    """Runs ``command`` in ``cwd`` through ``runner``; exit 0 == evidence of success.

    Args:
        command: a shell command line.
        runner: the runner to use (the sandbox in autonomous runs).
        cwd: working directory.
        timeout: seconds before the command's process group is killed (a failure).
    """

    def __init__(
        self, command: str, *, runner: CommandRunner, cwd: Path, timeout: float = 300
    ) -> None:
        if not command.strip():
            raise ValueError("CommandVerifier needs a non-empty command")
        self.command = command
        self.runner = runner
        self.cwd = cwd
        self.timeout = timeout

    def verify(self) -> Verification:
        """Run the command once. Never raises for a failing or unstartable command."""
        try:
            result = self.runner.run(self.command, cwd=self.cwd, timeout=self.timeout)
        except (RunnerError, SandboxError) as exc:
            return Verification(
                ok=False, exit_code=None, output_tail=str(exc), duration_s=0.0, timed_out=False
            )
        return Verification(
            ok=result.ok,
            exit_code=result.exit_code,
            output_tail=result.tail(TAIL_CHARS, TAIL_LINES),
            duration_s=result.duration_s,
            timed_out=result.timed_out,
        )
