"""Run subprocesses: one place for timeouts, process-group kills and capped output.

Every command Chimera causes goes through a :class:`CommandRunner`: ``command`` checks in a
Spec, the agent's tools and verifiers. :func:`chimera.spec.drift.check_drift` takes the
runner as a parameter, so an autonomous run passes its sandbox and CI passes
:class:`LocalRunner`; ``command`` checks use :func:`check_runner` of it (the sandbox's runs
each check in a disposable copy of the tree).

Semantics shared by every runner:

* ``command`` is either a shell string (run with ``/bin/sh -c``) or an argv sequence.
* The child gets its own session (process group); on timeout the **whole group** is sent
  SIGTERM, then SIGKILL after a grace period, so grandchildren (``make`` → ``cc``, a test
  server) cannot outlive the run or keep the output pipe open.
* stdout and stderr are captured interleaved into one stream. At most ``output_limit`` bytes
  are kept: the head and the tail, joined by a truncation marker that says how many bytes were
  dropped. Decoding is UTF-8 with replacement, so output never raises.
* ``exit_code`` is the process's exit status; a child killed by signal N reports ``-N``;
  a timed-out command reports ``timed_out=True`` and ``exit_code=None``.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, cast, runtime_checkable

from chimera.errors import RunnerError

DEFAULT_OUTPUT_LIMIT = 64 * 1024
"""Bytes of combined output kept per command (head + tail)."""

KILL_GRACE_S = 2.0
"""Seconds between SIGTERM and SIGKILL when a command times out."""

TRUNCATION_MARKER = "\n[... {dropped} bytes of output truncated ...]\n"

WORD_SLACK = 128
"""Characters a cut may move back (a head) or forward (a tail) to fall on whitespace."""


def word_safe_head(head: str, slack: int = WORD_SLACK) -> str:
    """``head`` (the start of a longer text, cut at its end) without a trailing run of
    non-whitespace that the cut may have split, when whitespace lies within ``slack``
    characters of the end.

    Why: output is redacted after it is capped (the governance SecretRedactor lives above this
    layer), and a cut through a token keeps a piece of it that no redactor recognises; a
    token is a whitespace-free run, so a cut on whitespace keeps it whole or drops it whole.
    """
    if not head or head[-1].isspace():
        return head
    window = head[-slack:]
    cut = max(window.rfind(c) for c in " \t\n\r")
    return head if cut < 0 else head[: len(head) - len(window) + cut + 1]


def word_safe_tail(tail: str, slack: int = WORD_SLACK) -> str:
    """``tail`` (the end of a longer text, cut at its start) without a leading run of
    non-whitespace the cut may have split (see :func:`word_safe_head`)."""
    if not tail or tail[0].isspace():
        return tail
    found = [i for i in (tail.find(c, 0, slack) for c in " \t\n\r") if i >= 0]
    return tail if not found else tail[min(found) :]


def clip_words(text: str, limit: int) -> str:
    """``text`` on one line (whitespace runs folded), cut after about ``limit`` characters
    between two words and marked `` …`` when longer — never inside a word (a single word
    running past the limit is kept whole up to its end). For progress and summary lines."""
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    cut = flat.rfind(" ", limit // 2, limit + 1)
    if cut < 0:
        cut = flat.find(" ", limit)
        if cut < 0:
            return flat
    return flat[:cut] + " …"


def stderr_line(stderr: bytes | str, *, exit_code: int | None = None) -> str:
    """A failed tool's error output (git's, typically) as one line, whole.

    Git wraps a sentence over several lines (``error: the following file has staged content
    different from both the`` / ``file and the HEAD:`` / ``    .chimera/memory.db``), so
    picking one line cuts it mid-sentence; the lines are joined with single spaces instead,
    and nothing is truncated. Empty output gives ``"exit N"`` (or ``"no output"``).
    """
    text = stderr.decode("utf-8", errors="replace") if isinstance(stderr, bytes) else stderr
    joined = " ".join(text.split())
    if joined:
        return joined
    return f"exit {exit_code}" if exit_code is not None else "no output"


@dataclass(frozen=True, slots=True)
class CommandResult:
    """The outcome of one command.

    Attributes:
        command: the command as given (shell string, or argv joined with spaces).
        exit_code: exit status; ``-N`` when killed by signal N; ``None`` on timeout.
        output: combined stdout+stderr, decoded, capped (see module docstring).
        truncated: whether bytes were dropped from the middle of ``output``.
        timed_out: whether the timeout fired and the process group was killed.
        duration_s: wall-clock seconds from start to exit.
        mode: which runner produced it (``local``, ``bwrap``, ``scrubbed``...), for reports.
    """

    command: str
    exit_code: int | None
    output: str
    truncated: bool = False
    timed_out: bool = False
    duration_s: float = 0.0
    mode: str = "local"

    @property
    def ok(self) -> bool:
        """True when the command exited 0 within its timeout."""
        return self.exit_code == 0 and not self.timed_out

    def tail(self, max_chars: int = 2000, max_lines: int = 40) -> str:
        """The last ``max_lines`` lines of output, at most ``max_chars`` characters."""
        lines = self.output.rstrip("\n").splitlines()[-max_lines:]
        text = "\n".join(lines)
        if len(text) > max_chars:
            text = "…" + word_safe_tail(text[-(max_chars - 1) :])
        return text

    def describe(self) -> str:
        """One line: ``exit 2 after 1.3s`` / ``timed out after 300s``."""
        if self.timed_out:
            return f"timed out after {self.duration_s:.0f}s"
        return f"exit {self.exit_code} after {self.duration_s:.1f}s"


@runtime_checkable
class CommandRunner(Protocol):
    """Anything that runs a command and returns a :class:`CommandResult`.

    Raises:
        RunnerError: the command could not be started at all (missing executable or cwd).
    """

    @property
    def mode(self) -> str:
        """Short name of the isolation this runner gives (``local``, ``bwrap``, ...)."""
        ...

    def run(
        self,
        command: str | Sequence[str],
        *,
        cwd: Path,
        timeout: float,
        env: Mapping[str, str] | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> CommandResult:
        """Run ``command`` in ``cwd`` with a timeout in seconds."""
        ...


@runtime_checkable
class SupportsCheckRunner(Protocol):
    """A runner that gives the Spec's ``command`` checks a runner of their own (the sandbox
    gives one that runs each check in a disposable copy of the tree)."""

    def for_checks(self, root: Path) -> CommandRunner:
        """The runner for ``command`` checks over the tree at ``root``."""
        ...


def check_runner(runner: CommandRunner, root: Path) -> CommandRunner:
    """The runner ``command`` checks over ``root`` use: ``runner.for_checks(root)`` when it
    offers one (:class:`SupportsCheckRunner`), else ``runner`` itself (the trusted
    :class:`LocalRunner` of CI runs checks in the live tree)."""
    if isinstance(runner, SupportsCheckRunner):
        return runner.for_checks(root)
    return runner


class _CappedBuffer:
    """Keeps the first and last ``limit // 2`` bytes of a stream."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    def render(self) -> tuple[str, bool]:
        kept = len(self.head) + len(self.tail)
        dropped = self.total - kept
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if dropped <= 0:
            return head + tail, False
        # Both cuts fall on whitespace where they can (see word_safe_head).
        safe_head, safe_tail = word_safe_head(head), word_safe_tail(tail)
        dropped += len(head.encode()) - len(safe_head.encode())
        dropped += len(tail.encode()) - len(safe_tail.encode())
        return safe_head + TRUNCATION_MARKER.format(dropped=dropped) + safe_tail, True


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None,
    output_limit: int,
    display: str,
    mode: str,
) -> CommandResult:
    """Run ``argv`` in its own process group with a timeout and capped, combined output.

    The building block for every runner (the sandbox wraps ``argv`` in ``bwrap ...``).

    Raises:
        RunnerError: the executable or ``cwd`` does not exist, or cannot be executed.
    """
    if not cwd.is_dir():
        raise RunnerError(f"cannot run {display!r}: working directory {cwd} does not exist")
    buffer = _CappedBuffer(output_limit)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        raise RunnerError(f"cannot run {display!r}: {exc.strerror or exc}") from exc

    assert proc.stdout is not None
    stream = cast(io.BufferedReader, proc.stdout)

    def pump() -> None:
        while True:
            chunk = stream.read1(65536)
            if not chunk:
                return
            buffer.feed(chunk)

    reader = threading.Thread(target=pump, name="chimera-runner-output", daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid, signal.SIGKILL)
            proc.wait()
    duration = time.monotonic() - start
    # Background children may still hold the pipe open; they belong to the command's group,
    # which must not outlive it.
    reader.join(timeout=0.5)
    if reader.is_alive():
        _kill_group(proc.pid, signal.SIGKILL)
        reader.join(timeout=KILL_GRACE_S)
    stream.close()
    output, truncated = buffer.render()
    return CommandResult(
        command=display,
        exit_code=None if timed_out else proc.returncode,
        output=output,
        truncated=truncated,
        timed_out=timed_out,
        duration_s=duration,
        mode=mode,
    )


def to_argv(command: str | Sequence[str]) -> tuple[list[str], str]:
    """Normalise a command to ``(argv, display)``; strings run through ``/bin/sh -c``."""
    if isinstance(command, str):
        return ["/bin/sh", "-c", command], command
    argv = list(command)
    if not argv:
        raise RunnerError("cannot run an empty command")
    return argv, " ".join(argv)


@dataclass(frozen=True)
class LocalRunner:
    """Runs commands directly on this machine with the caller's environment.

    This is the trusted runner: ``chimera check`` and the pytest plugin use it, because a
    Spec is trusted like the tests beside it. Autonomous runs pass a sandbox runner instead.
    """

    extra_env: Mapping[str, str] = field(default_factory=dict)

    @property
    def mode(self) -> str:
        return "local"

    def run(
        self,
        command: str | Sequence[str],
        *,
        cwd: Path,
        timeout: float,
        env: Mapping[str, str] | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> CommandResult:
        argv, display = to_argv(command)
        merged = dict(os.environ if env is None else env)
        merged.update(self.extra_env)
        return run_process(
            argv,
            cwd=cwd,
            timeout=timeout,
            env=merged,
            output_limit=output_limit,
            display=display,
            mode=self.mode,
        )
