"""Progress of the agent job while its child runs: one line per attempt, from Chimera's own
counters (the run's audit log), never from model output.

The agent job's token is read-only, so it cannot edit the issue's "working on it" comment; what
it can do is print to its job log, which GitHub shows live: :func:`watch_child` polls the run's
``audit.jsonl`` while the child process runs and hands each finished attempt
(:class:`AttemptProgress`: its number, card, verdict, tokens and cost, and the run's totals so
far) to a callback. Only numbers and Chimera's own identifiers are taken from a line; a card
label is clipped and reduced to a safe character set, so nothing the model wrote reaches the
log through it. The poll interval is a parameter (tests poll every few milliseconds).
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.core.attempts import Verdict

__all__ = ["AttemptProgress", "ProgressTail", "attempts_table", "progress_line", "watch_child"]

_LABEL = re.compile(r"[^A-Za-z0-9._:#-]")


@dataclass(frozen=True)
class AttemptProgress:
    """One finished attempt and the run's totals so far.

    Attributes:
        attempt: the attempt's number within its card (1-based).
        card: the card's label (safe characters only, at most 60).
        verdict: the attempt's :class:`~chimera.core.attempts.Verdict` value (``passed``,
            ``verify_failed``, ...; ``other`` if unknown).
        tokens / cost_usd: the attempt's own spend (``None``: a model without a price).
        total_tokens / total_cost_usd: every attempt so far in this process (``None``: some
            attempt had no price).
        attempts: attempts finished so far, over all cards.
    """

    attempt: int
    card: str
    verdict: str
    tokens: int
    cost_usd: float | None
    total_tokens: int
    total_cost_usd: float | None
    attempts: int


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _usd(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    return float(value)


class ProgressTail:
    """Reads new ``attempt`` events from an audit log as it grows (whole lines only)."""

    def __init__(self, audit: Path) -> None:
        self.audit = audit
        self._offset = 0
        self._tokens = 0
        self._cost: float | None = 0.0
        self._count = 0
        self._label = ""

    def poll(self) -> list[AttemptProgress]:
        """The attempts finished since the last poll (``[]`` before the log exists)."""
        try:
            with self.audit.open("rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except OSError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self._offset += end + 1
        found: list[AttemptProgress] = []
        for raw in data[: end + 1].splitlines():
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(entry, dict) or not isinstance(entry.get("fields"), dict):
                continue
            if entry.get("event") == "attempt_started":
                # The card's label is on the start event (Chimera's own "card-id" form).
                self._label = _LABEL.sub("", str(entry["fields"].get("label") or ""))[:60]
            elif entry.get("event") == "attempt":
                found.append(self._add(entry["fields"]))
        return found

    def _add(self, fields: dict[str, Any]) -> AttemptProgress:
        tokens, cost = _int(fields.get("tokens")), _usd(fields.get("cost_usd"))
        self._tokens += tokens
        self._cost = None if self._cost is None or cost is None else self._cost + cost
        self._count += 1
        verdict = str(fields.get("verdict") or "")
        return AttemptProgress(
            attempt=_int(fields.get("number")),
            card=self._label or "?",
            verdict=verdict if verdict in {v.value for v in Verdict} else "other",
            tokens=tokens,
            cost_usd=cost,
            total_tokens=self._tokens,
            total_cost_usd=self._cost,
            attempts=self._count,
        )


def _money(value: float | None) -> str:
    return "cost unknown" if value is None else f"${value:.4f}"


def progress_line(p: AttemptProgress) -> str:
    """The job-log line of an attempt: ``chimera: attempt 2 of card total: failed (812
    tokens, $0.0031); so far 3 attempts, 2,411 tokens, $0.0102``."""
    return (
        f"chimera: attempt {p.attempt} of card {p.card}: {p.verdict} ({p.tokens} tokens, "
        f"{_money(p.cost_usd)}); so far {p.attempts} attempt(s), {p.total_tokens:,} tokens, "
        f"{_money(p.total_cost_usd)}"
    )


def attempts_table(attempts: list[AttemptProgress]) -> str:
    """The job summary's attempt table (Markdown; ``""`` for none): one row per attempt."""
    if not attempts:
        return ""
    rows = ["| # | Card | Verdict | Tokens | Cost |", "|---|---|---|---|---|"]
    for p in attempts:
        rows.append(
            f"| {p.attempt} | `{p.card}` | {p.verdict} | {p.tokens:,} | {_money(p.cost_usd)} |"
        )
    last = attempts[-1]
    rows.append(
        f"\n**{last.attempts} attempt(s), {last.total_tokens:,} tokens, "
        f"{_money(last.total_cost_usd)}** in attempts (Chimera's own counters; the run's "
        "total also counts its planning).\n\n"
    )
    return "\n".join(rows)


def watch_child(
    proc: subprocess.Popen[str],
    audit: Path,
    on_attempt: Callable[[AttemptProgress], None],
    *,
    interval_s: float = 5.0,
) -> tuple[str, str, list[AttemptProgress]]:
    """Wait for ``proc`` (started with ``stdout``/``stderr`` pipes), calling ``on_attempt``
    for each attempt the run's ``audit`` log records meanwhile, at least every ``interval_s``
    seconds. It waits on the process itself between polls, so it returns as soon as the child
    exits (no trailing sleep).

    Returns:
        The child's captured stdout, stderr, and every attempt seen (in order).
    """
    tail = ProgressTail(audit)
    seen: list[AttemptProgress] = []

    def drain() -> None:
        for progress in tail.poll():
            seen.append(progress)
            on_attempt(progress)

    # The pipes are read by threads so a chatty child never blocks on a full pipe.
    chunks: dict[str, list[str]] = {"out": [], "err": []}

    def reader(name: str, stream: Any) -> None:
        if stream is not None:
            with stream:
                chunks[name].append(stream.read())

    threads = [
        threading.Thread(target=reader, args=("out", proc.stdout), daemon=True),
        threading.Thread(target=reader, args=("err", proc.stderr), daemon=True),
    ]
    for thread in threads:
        thread.start()
    while True:
        drain()
        try:
            proc.wait(timeout=interval_s)
            break
        except subprocess.TimeoutExpired:
            continue
    for thread in threads:
        thread.join()
    drain()
    return "".join(chunks["out"]), "".join(chunks["err"]), seen
