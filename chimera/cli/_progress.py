"""Live progress of ``chimera solve``, ``run``, ``resume``, ``approve`` and ``demo``.

One stderr line per card, step and attempt, rendered from the same events that go to the
audit log (the AutonomousAgent's and the ProjectOrchestrator's), so what a user watches and
what the log records cannot disagree.
"""

from __future__ import annotations

from typing import Any

from chimera.cli._base import err


def progress_line(event: str, f: dict[str, Any], *, nested: bool = False) -> str | None:
    """The line shown for one event, or ``None`` for events not shown live.

    ``nested``: the solve runs inside a project run's card, so its lines are indented under
    the card's instead of starting with ``chimera:``.
    """
    n = f.get("attempt")
    top, sub = ("  ", "    ") if nested else ("chimera: ", "  ")
    if event == "session_opened":
        return f"chimera: run {f['run_id']} in {f['run_dir']}; sandbox: {f['sandbox']}"
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
        what = str(f.get("cause", ""))[:200]
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
