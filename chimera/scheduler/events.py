"""GitHub webhook payloads → :class:`~chimera.scheduler.model.ObservedEvent` (pure).

The tick workflow also runs on ``pull_request: closed`` and ``issues: labeled``; each such
event becomes at most one observed event with a key unique to the occurrence, so a job runs
once per merge or label however often the workflow is re-run. ``spec-red-on-main`` is not a
webhook: the adapter observes it from the default branch's latest Spec check run
(:func:`spec_red`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from chimera.scheduler.model import ObservedEvent

__all__ = ["from_payload", "spec_red"]


def _get(mapping: Any, *keys: str) -> Any:
    for key in keys:
        mapping = mapping.get(key) if isinstance(mapping, Mapping) else None
    return mapping


def from_payload(event_name: str, payload: Mapping[str, Any], now: datetime) -> list[ObservedEvent]:
    """The observed events in one webhook ``payload`` (``[]`` for a schedule or dispatch)."""
    if event_name in ("pull_request", "pull_request_target"):
        number = _get(payload, "pull_request", "number")
        merged = _get(payload, "pull_request", "merged") is True
        if payload.get("action") == "closed" and merged and isinstance(number, int):
            base = _get(payload, "pull_request", "base", "ref")
            detail = (("branch", base),) if isinstance(base, str) else ()
            return [ObservedEvent("pull-request-merged", f"pr:{number}", now, detail)]
    if event_name == "issues" and payload.get("action") == "labeled":
        number = _get(payload, "issue", "number")
        label = _get(payload, "label", "name")
        if isinstance(number, int) and isinstance(label, str):
            key = f"issue:{number}:label:{label}"
            return [ObservedEvent("issue-labelled", key, now, (("label", label),))]
    return []


def spec_red(head_sha: str, conclusion: str | None, now: datetime) -> list[ObservedEvent]:
    """``spec-red-on-main`` for a finished Spec check run that did not pass (keyed by the
    commit: one event per red head, however many ticks see it)."""
    if conclusion in (None, "success", "neutral", "skipped"):
        return []
    return [ObservedEvent("spec-red-on-main", f"spec-red:{head_sha}", now)]
