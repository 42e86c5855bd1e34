"""Live progress of ``chimera solve``, ``run``, ``resume``, ``approve`` and ``demo``, and the
step bar of long measurements (``bench continuous``, ``meta design``, ``evolve``).

One stderr line per card, step and attempt, rendered from the same events that go to the
audit log (the AutonomousAgent's and the ProjectOrchestrator's), so what a user watches and
what the log records cannot disagree. :class:`StepBar` draws work counted in steps: a Rich
progress bar on a terminal (the ``progress`` extra; imported only then, never on the check or
plugin path), one plain line per step otherwise (a log, a pipe, CI).
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any, TextIO

from chimera.cli._base import err
from chimera.runner import clip_words

CAUSE_CHARS = 200
"""Characters of an attempt's cause shown live (cut on a word boundary, marked with ``…``)."""


def clip(text: str, limit: int = CAUSE_CHARS) -> str:
    """``text`` on one line, cut between words (:func:`chimera.runner.clip_words`)."""
    return clip_words(text, limit)


def progress_line(event: str, f: dict[str, Any], *, nested: bool = False) -> str | None:
    """The line shown for one event, or ``None`` for events not shown live.

    ``nested``: the solve runs inside a project run's card, so its lines are indented under
    the card's instead of starting with ``chimera:``.
    """
    n = f.get("attempt")
    top, sub = ("  ", "    ") if nested else ("chimera: ", "  ")
    if event == "session_opened":
        # The mode only: the sandbox's full description is printed once, in the summary.
        mode = f.get("sandbox_mode") or str(f.get("sandbox", "")).split(":", 1)[0]
        return f"chimera: run {f['run_id']} in {f['run_dir']}; sandbox: {mode}"
    # -- the project run (cards) ----------------------------------------------------------
    if event == "goal":
        return (
            f"chimera: goal ({f['mode']}): {len(f['goal'])} requirement(s); "
            f"to do: {', '.join(f['unmet']) or 'nothing'}"
        )
    if event == "acceptance_rejected":
        return f"chimera: acceptance requirement {f['id']} rejected: {f['reason']}"
    if event == "card_started":
        return f"chimera: card {f['card']}"
    if event == "card_finished":
        return f"chimera: card {f['card']}: {f['status']} ({f['reason']})"
    if event == "resumed":
        card = f" (card {f['card']} redone)" if f.get("card") else ""
        return f"chimera: resumed{card}"
    if event == "approved":
        return f"chimera: approved by {f['by']}: {', '.join(f['cards'])}"
    if event == "run_stopped":
        return f"chimera: stopped: {f['reason']} — {f['detail']}"
    # -- one solve (attempts) -------------------------------------------------------------
    if event == "targets":
        return None if nested else f"chimera: targets: {', '.join(f['targets']) or '(none)'}"
    if event == "plan":
        return f"{top}planned with {f['model']}"
    if event == "replan":
        return f"{top}replanned with {f['model']} (a failure repeated)"
    if event == "escalate":
        return f"{top}escalating to {f['model']} (a failure repeated after a replan)"
    if event == "attempt_started":
        return f"{top}attempt {n} with {f['model']}"
    if event == "step":
        return f"{sub}{f['summary']}"
    if event == "review":
        verdict = "approved" if f["approved"] else f"sent back: {f['reason']}"
        return f"{sub}review: {verdict}"
    if event == "review_unparsed":
        return f"{sub}review: no review (the reviewer's answer could not be parsed)"
    if event == "attempt":
        what = clip(str(f.get("cause", "")))
        if f.get("verdict") == "passed":
            what = (
                f"verified; {f.get('files_changed', 0)} file(s), "
                f"+{f.get('added', 0)} -{f.get('removed', 0)}"
            )
        return f"{top}attempt {f.get('number')}: {f.get('verdict')} — {what}"
    if event == "history_injected":
        return (
            f"{sub}carried forward: {f['records']} record(s), {f['distinct']} distinct, "
            f"{f['collapsed']} collapsed, ~{f['tokens']} tokens"
        )
    if event == "budget_stop":
        return f"chimera: budget refused a call: {f['reason']}"
    return None


class Progress:
    """An event sink that prints :func:`progress_line` to stderr (nothing when quiet)."""

    def __init__(self, quiet: bool, *, nested: bool = False) -> None:
        self.quiet = quiet
        self.nested = nested

    def __call__(self, event: str, fields: dict[str, Any]) -> None:
        if self.quiet:
            return
        line = progress_line(event, fields, nested=self.nested)
        if line:
            err(line)


class StepBar:
    """A :class:`chimera.protocols.StepProgress` for the command line.

    On a terminal with Rich installed (the ``progress`` extra), a progress bar on stderr:
    ``what``, the bar, ``done/total``, the current step's label and the time elapsed.
    Otherwise — stderr is not a terminal, or Rich is missing — one plain line per step,
    ``chimera: WHAT [done/total] LABEL``, never cut. ``quiet`` shows nothing. Use it as a
    context manager so the bar is closed when the work ends or fails.
    """

    def __init__(self, what: str, *, quiet: bool = False, stream: TextIO | None = None) -> None:
        self.what = what
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self._bar: Any = None
        self._task: Any = None
        isatty = getattr(self.stream, "isatty", None)
        if not quiet and isatty is not None and isatty():
            try:
                from rich.console import Console
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    Progress,
                    TextColumn,
                    TimeElapsedColumn,
                )
            except ImportError:
                return
            self._bar = Progress(
                TextColumn(f"[bold]{what}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=Console(file=self.stream),
            )

    @property
    def drawn(self) -> bool:
        """``True`` when a Rich bar is drawn (a terminal and the extra)."""
        return self._bar is not None

    def __call__(self, done: int, total: int, label: str) -> None:
        if self.quiet:
            return
        if self._bar is None:
            self.stream.write(f"chimera: {self.what} [{done}/{total}] {label}\n")
            self.stream.flush()
            return
        if self._task is None:
            self._bar.start()
            self._task = self._bar.add_task(label, total=total)
        self._bar.update(self._task, completed=done, total=total, description=label)

    def close(self) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.stop()
        self._task = None

    def __enter__(self) -> StepBar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
