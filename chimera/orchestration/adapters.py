"""Adapters that plug the engine's parts into the ProjectOrchestrator's small protocols."""

from __future__ import annotations

from dataclasses import replace

from chimera.core.workspace import Snapshot, WorkspaceGuard
from chimera.errors import WorkspaceError
from chimera.orchestration.collaborators import ChangeSummary


class GuardSnapshots:
    """:class:`~chimera.orchestration.project.Snapshots` over a :class:`WorkspaceGuard`.

    Snapshots live in the guard's store (the run folder's ``snapshots/``), so a card in flight
    at a crash can be reverted by a later process — on this machine or, with the run folder
    carried along, on another checkout of the same tree. The guard is the session's one guard
    on that folder, shared with the cards' agents.
    """

    def __init__(self, guard: WorkspaceGuard) -> None:
        self.guard = guard
        self.store = guard.store

    def _load(self, snapshot_id: str) -> Snapshot:
        snap = WorkspaceGuard.load(self.store, snapshot_id)
        # A run folder carried to another machine records the old checkout's path.
        return snap if snap.root == self.guard.root else replace(snap, root=self.guard.root)

    def snapshot(self, label: str) -> str:
        return self.guard.snapshot(label).id

    def restore(self, snapshot_id: str) -> None:
        self.guard.restore(self._load(snapshot_id))

    def changes(self, snapshot_id: str) -> ChangeSummary:
        diff = self.guard.diff(self._load(snapshot_id))
        touched: list[str] = []
        deleted: list[str] = []
        for change in diff.files:
            touched.append(change.path)
            if change.source:
                touched.append(change.source)
            if change.status == "removed":
                deleted.append(change.path)
        return ChangeSummary(touched=tuple(touched), deleted=tuple(deleted))

    def recover(self) -> list[str]:
        """Remove stale git locks and half-written snapshots of a killed process.

        Only for the run lock's holder (see :meth:`WorkspaceGuard.clear_stale_locks`).
        """
        return self.guard.clear_stale_locks()

    def discard(self, snapshot_id: str) -> None:
        try:
            snap = self._load(snapshot_id)
        except WorkspaceError:  # already gone: discarding is idempotent
            return
        self.guard.discard(snap)
