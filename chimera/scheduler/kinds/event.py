"""``event: {kind: issue-labelled, label: triage}`` — a standard operating procedure: when this
happens on GitHub, run this task (or check)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import model_validator

from chimera.scheduler.model import ObservedEvent, Trigger

__all__ = ["EVENT_KINDS", "EventTrigger"]

EventKind = Literal["spec-red-on-main", "pull-request-merged", "issue-labelled"]
EVENT_KINDS: tuple[str, ...] = ("spec-red-on-main", "pull-request-merged", "issue-labelled")


class EventTrigger(Trigger):
    """Starts the job once per occurrence (the event's ``key``) of ``kind``.

    The key is ``kind``, not ``on``: YAML 1.1 reads a bare ``on`` as ``true``.

    ``label`` narrows ``issue-labelled`` to one label (required there, refused elsewhere);
    ``branch`` narrows ``pull-request-merged`` to one base branch.
    """

    kind_name: ClassVar[str] = "event"

    kind: EventKind
    label: str | None = None
    branch: str | None = None

    @model_validator(mode="after")
    def _narrowing(self) -> EventTrigger:
        if self.kind == "issue-labelled" and not self.label:
            raise ValueError("'issue-labelled' needs the label it waits for ('label: NAME')")
        if self.label is not None and self.kind != "issue-labelled":
            raise ValueError(f"'label' applies to 'issue-labelled' only, not {self.kind!r}")
        if self.branch is not None and self.kind != "pull-request-merged":
            raise ValueError(f"'branch' applies to 'pull-request-merged' only, not {self.kind!r}")
        return self

    def matches(self, event: ObservedEvent) -> bool:
        if event.kind != self.kind:
            return False
        if self.label is not None and event.get("label") != self.label:
            return False
        return self.branch is None or event.get("branch") == self.branch

    def describe(self) -> str:
        narrow = self.label or self.branch
        return f"on {self.kind}" + (f" ({narrow})" if narrow else "")
