"""The hidden markers that keep Chimera's state on GitHub, inert code spans, and the outcome
titles. The PR body and the outcome comment are rendered by
:mod:`chimera.github.conversation.render` (:mod:`chimera.github.conversation.documents` builds
them).

Markers are HTML comments holding one JSON object (``<`` and ``>`` escaped, so a value can
never close the comment):

* ``<!-- chimera:pr {...} -->`` in a Chimera PR body: issue, run id, the workflow run and
  artifact holding the run folder, status, who started the run, risk. An approval locates the
  paused run's state through it.
* ``<!-- chimera:queued {...} -->`` in the "queued" comment on an issue: the original labeller
  and the time it was queued (the ChangeQueue's FIFO order).
* ``<!-- chimera:outcome {...} -->`` in every outcome comment: its key makes a retried or
  re-run publish step post it once.

Markers are read only from PR bodies and comments written by Chimera's own identities (the
caller checks the author), and only from their bot-written trailer (the last line), so a
marker pasted into an issue, or forged inside untrusted text, counts for nothing. Every
string that came from a model, a tool or an issue is shown inside a code span
with backticks, pipes and angle brackets neutralised and chat-template tokens stripped
(:func:`chimera.governance.sanitize.sanitize`), so a summary cannot inject links, images or
HTML into a PR body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from chimera.governance.sanitize import sanitize

__all__ = [
    "OUTCOME_TITLES",
    "artifact_link",
    "code",
    "parse_marker",
    "render_marker",
]

_MARKER = re.compile(r"<!-- chimera:(?P<kind>[a-z]+) (?P<json>\{[^\n]*\}) -->")

OUTCOME_TITLES: Mapping[str, str] = {
    "pr_opened": "Pull request opened",
    "pr_updated": "Pull request updated",
    "awaiting_approval": "Draft pull request opened: a risky change awaits approval",
    "resumed": "Approved change resumed",
    "spec_not_met": "Spec not met",
    "budget_exhausted": "Budget exhausted",
    "rate_limited": "Rate-limited by GitHub",
    "blocked": "Blocked by governance",
    "hollow": "Hollow success: nothing to publish",
    "held": "Held: a held-out check failed",
    "queued": "Queued",
    "running": "Started",
    "cancelled": "Cancelled",
    "crashed": "Crashed",
    "refused": "Not started",
}


def render_marker(kind: str, data: Mapping[str, Any]) -> str:
    """``<!-- chimera:KIND {json} -->`` with ``<``, ``>`` and ``&`` escaped."""
    text = json.dumps(dict(data), sort_keys=True, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"<!-- chimera:{kind} {text} -->"


def parse_marker(text: str, kind: str) -> dict[str, Any] | None:
    """The ``kind`` marker's object in the bot-written trailer of ``text``, or ``None``.

    The trailer is the last non-blank line, and it must be exactly one marker: Chimera writes
    every marker last, after any untrusted text (which is fenced with its markers removed),
    so a marker anywhere else — forged in an agent's summary, pasted into evidence — is never
    read, and neither is one that an unterminated comment earlier in the body swallowed.
    """
    lines = [line for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return None
    match = _MARKER.fullmatch(lines[-1].strip())
    if match is None or match.group("kind") != kind:
        return None
    try:
        data = json.loads(match.group("json"))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def code(value: Any, limit: int = 200) -> str:
    """``value`` as an inert Markdown code span (sanitized, one line, at most ``limit``)."""
    text = sanitize(str(value)).replace("\r", " ").replace("\n", " ")
    text = text.replace("`", "'").replace("|", "\\|").replace("<", "‹").replace(">", "›")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"`{text}`" if text else "` `"


def artifact_link(server_url: str, repository: str, workflow_run: int | str | None) -> str:
    """A link to the workflow run whose artifacts hold the audit log and run state."""
    if not workflow_run:
        return "(no workflow run: a local run)"
    return f"{server_url.rstrip('/')}/{repository}/actions/runs/{workflow_run}"
