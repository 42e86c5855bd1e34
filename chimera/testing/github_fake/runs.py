"""Arranging workflow runs and their artifacts, as GitHub Actions keeps them.

* a run has attempts: "Re-run jobs" (:meth:`RunsMixin.rerun`) starts attempt ``n + 1`` of the
  same run id, and the run's jobs see ``GITHUB_RUN_ATTEMPT`` change;
* an artifact's name is unique within a run, across all its attempts: uploading a name an
  earlier attempt used fails with GitHub's 409 (``actions/upload-artifact`` v4), which is why a
  re-run's artifact needs a name of its own;
* ``actions/download-artifact`` takes exactly one name (:meth:`RunsMixin.download_artifact`);
* a repository may have an artifact store attached (``FakeRepo.artifact_store``: the folder
  of act's artifact server, ``<run id>/<name>/<name>.zip``): what a workflow run executed by
  act uploaded there is listed and downloaded through the REST endpoints like the artifacts
  added here, read when asked for (:meth:`RunsMixin.artifacts_of`).
"""

from __future__ import annotations

import io
import itertools
import threading
import zipfile
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from chimera.testing.github_fake.routing import HttpError
from chimera.testing.github_fake.state import FakeRepo, now

__all__ = ["ARTIFACT_CONFLICT", "RunsMixin"]

ARTIFACT_CONFLICT = "Conflict: an artifact with this name already exists on the workflow run"


class RunsMixin:
    """The run and artifact helpers of :class:`~chimera.testing.github_fake.GitHubFake`."""

    repos: dict[str, FakeRepo]
    _lock: threading.RLock
    _ids: itertools.count[int]
    # (repository, run, name) → the id an artifact of an attached store is listed under.
    _store_ids: dict[tuple[str, int, str], int]

    def stored_runs(self, repo: FakeRepo) -> set[int]:
        """The runs that have a folder in the repository's attached artifact store."""
        store = repo.artifact_store
        if store is None or not store.is_dir():
            return set()
        return {int(p.name) for p in store.iterdir() if p.is_dir() and p.name.isdigit()}

    def artifacts_of(self, repo: FakeRepo, run_id: int) -> list[dict[str, Any]]:
        """Run ``run_id``'s artifacts, oldest first: those added with :meth:`add_artifact`,
        then those in the repository's attached store (each ``{"id", "name", "data",
        "created_at", "run_attempt"}``; a stored one's ``data`` is its zip as it is now)."""
        with self._lock:
            found = list(repo.artifacts.get(run_id, []))
            store = repo.artifact_store
        if store is None:
            return found
        folder = store / str(run_id)
        stored = list(folder.iterdir()) if folder.is_dir() else []
        for entry in sorted(stored, key=lambda p: p.stat().st_mtime):
            archive = entry / f"{entry.name}.zip"
            if not archive.is_file():
                continue
            with self._lock:
                key = (repo.full_name, run_id, entry.name)
                art_id = self._store_ids.setdefault(key, next(self._ids))
            stamp = datetime.fromtimestamp(archive.stat().st_mtime, UTC)
            found.append(
                {
                    "id": art_id,
                    "name": entry.name,
                    "data": archive.read_bytes(),
                    "created_at": stamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "run_attempt": int(repo.workflow_runs.get(run_id, {}).get("run_attempt", 1)),
                }
            )
        return found

    def add_workflow_run(
        self,
        full_name: str,
        run_id: int,
        *,
        status: str = "in_progress",
        conclusion: str | None = None,
    ) -> dict[str, Any]:
        """Arrange a workflow run (``status``: ``queued``, ``in_progress``, ``completed``), at
        its first attempt."""
        run = {"id": run_id, "status": status, "conclusion": conclusion, "run_attempt": 1}
        with self._lock:
            self.repos[full_name].workflow_runs[run_id] = run
        return run

    def rerun(self, full_name: str, run_id: int) -> int:
        """ "Re-run jobs" on run ``run_id``: its next attempt starts; returns the attempt number.

        Raises:
            KeyError: no such run.
        """
        with self._lock:
            run = self.repos[full_name].workflow_runs[run_id]
            run.update(
                status="in_progress", conclusion=None, run_attempt=int(run["run_attempt"]) + 1
            )
            return int(run["run_attempt"])

    def settle_cancels(self, full_name: str) -> list[int]:
        """Finish the cancels GitHub was asked for (they are asynchronous); returns the runs."""
        done = []
        with self._lock:
            for run in self.repos[full_name].workflow_runs.values():
                if run.get("cancel_requested") and run["status"] != "completed":
                    run.update(status="completed", conclusion="cancelled")
                    done.append(int(run["id"]))
        return done

    def add_artifact(self, full_name: str, run_id: int, name: str, folder: Path) -> int:
        """Store ``folder`` zipped as artifact ``name`` of workflow run ``run_id`` (what
        upload-artifact does, in the run's current attempt); returns the artifact id.

        Raises:
            HttpError: 409 when the run already holds an artifact ``name`` (from any attempt).
        """
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    zf.write(path, path.relative_to(folder).as_posix())
        repo = self.repos[full_name]
        taken = {a["name"] for a in self.artifacts_of(repo, run_id)}
        with self._lock:
            arts = repo.artifacts.setdefault(run_id, [])
            if name in taken:
                raise HttpError(409, ARTIFACT_CONFLICT)
            run = repo.workflow_runs.get(run_id) or {}
            art_id = next(self._ids)
            arts.append(
                {
                    "id": art_id,
                    "name": name,
                    "data": buf.getvalue(),
                    "created_at": now(),
                    "run_attempt": int(run.get("run_attempt", 1)),
                }
            )
            return art_id

    def download_artifact(self, full_name: str, run_id: int, name: str, dest: Path) -> Path:
        """Unzip artifact ``name`` of run ``run_id`` into ``dest`` (download-artifact by name).

        Raises:
            HttpError: 404 when the run holds no artifact ``name``.
        """
        found = [a for a in self.artifacts_of(self.repos[full_name], run_id) if a["name"] == name]
        if not found:
            raise HttpError(404, f"Artifact not found for name: {name}")
        dest.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(io.BytesIO(found[0]["data"])) as zf:
            for member in zf.namelist():
                if PurePosixPath(member).is_absolute() or ".." in PurePosixPath(member).parts:
                    raise HttpError(400, f"artifact {name!r} holds a path outside its folder")
            zf.extractall(dest)
        return dest
