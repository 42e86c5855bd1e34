"""pytest-xdist: which spec items this worker holds, so it checks only those."""

from __future__ import annotations

from collections.abc import Callable

import pytest

__all__ = ["worker_queue"]


def worker_queue(
    session: pytest.Session, requirement_id: Callable[[pytest.Item], str | None]
) -> Callable[[], list[str]] | None:
    """Under xdist, a view of the requirement ids queued for this worker.

    Every worker collects every item but runs only those the controller sends it; reading
    the worker's queue lets a worker check only its own. The queue is xdist's internal
    state (``WorkerInteractor.torun``, a deque of item indices behind a lock); when it is
    not found as expected, ``None`` keeps the serial behaviour (plan the whole selection)
    — slower, never wrong.

    Args:
        session: the worker's session, collection finished.
        requirement_id: the requirement id of a spec item, ``None`` for any other item.

    Returns:
        A function returning, each time it is called, the ids of the spec items queued
        here and not yet run (the one running first), in queue order; or ``None``.
    """
    interactor = next(
        (
            p
            for p in session.config.pluginmanager.get_plugins()
            if hasattr(p, "torun") and hasattr(p, "nextitem_index")
        ),
        None,
    )
    lock = getattr(getattr(interactor, "torun", None), "lock", None)
    if interactor is None or not callable(lock):
        return None
    ids = [requirement_id(item) for item in session.items]

    def upcoming() -> list[str]:
        indices: list[object] = [getattr(interactor, "nextitem_index", None)]
        with lock() as queued:
            indices.extend(queued)
        out: list[str] = []
        for index in indices:
            if isinstance(index, int) and 0 <= index < len(ids):
                rid = ids[index]
                if rid is not None:
                    out.append(rid)
        return out

    return upcoming
