"""Every shipped workflow keeps the concurrency groups the ChangeQueue assumes.

act cannot show concurrency groups, so nothing but reading catches a workflow that drops
one. The queue's claims stay safe without them (chimera.github.queue.claims), but the groups are
what keeps the common case quiet: one drain at a time (``chimera-queue``), one run per issue
(``chimera-issue-<n>``, shared by the label and the queue's dispatch), one per PR review
(``chimera-pr-<n>``), one tick at a time, and the command job deliberately without a
per-issue lock (``@chimera stop`` must not wait for the run it stops: every comment's run has
a group of its own). Each is pending-safe (``cancel-in-progress: false``): cancelling a
pending trigger run would drop a start. They live in Chimera's one reusable workflow (the
caller holds none), the run's group at its top, the drain's and the tick's on their jobs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted(
    [
        *(ROOT / "examples" / "workflows").glob("*.yml"),
        *(ROOT / ".github" / "workflows").glob("*.yml"),
    ]
)
REUSABLE = ROOT / ".github" / "workflows" / "chimera.yml"
# The pieces each group of the reusable workflow must hold ("" : the run's, at the top;
# otherwise the job's); None: the job holds no group at all.
EXPECTED: dict[str, tuple[str, ...] | None] = {
    "": (
        "format('chimera-issue-{0}'",
        "github.event_name == 'workflow_dispatch'",
        "github.event.inputs.issue-number",
        "github.event.issue.number",
        "format('chimera-pr-{0}'",
        "format('chimera-other-{0}', github.run_id)",
    ),
    "drain": ("chimera-queue",),
    "tick": ("chimera-tick",),
    "decide": None,
    "command": None,
}


def _load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    return data


def _on(data: dict[Any, Any]) -> Any:
    # YAML 1.1 reads a bare `on:` key as True.
    return data.get("on", data.get(True))


def _reusable() -> list[Path]:
    """Workflows other workflows call (``on: workflow_call``): Chimera's one reusable
    workflow, wherever it is shipped."""
    found = []
    for path in SHIPPED:
        on = _on(_load(path))
        if isinstance(on, dict) and "workflow_call" in on:
            found.append(path)
    return found


def test_the_workflow_the_queue_relies_on_is_shipped() -> None:
    assert REUSABLE in _reusable(), f"{REUSABLE} is not a reusable workflow"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_chimera_group_is_the_one_the_queue_assumes(name: str) -> None:
    data = _load(REUSABLE)
    where = name or "the run"
    expected = EXPECTED[name]
    group = data.get("concurrency") if not name else data["jobs"][name].get("concurrency")
    if expected is None:
        assert group is None, f"{where} must not hold a lock of its own: {group!r}"
        return
    assert isinstance(group, dict), f"{where} has no concurrency group"
    text = str(group.get("group", ""))
    for piece in expected:
        assert piece in text, f"{where}: the concurrency group {text!r} lacks {piece!r}"
    assert group.get("cancel-in-progress") is False, f"{where}: a pending run would be cancelled"


def test_the_callers_hold_no_group_of_their_own() -> None:
    """A caller's group around the call would be a second lock over the reusable workflow's
    (and the same name in both deadlocks on GitHub)."""
    for path in SHIPPED:
        data = _load(path)
        calls = [j for j in data.get("jobs", {}).values() if "uses" in j]
        if calls:
            assert data.get("concurrency") is None, path
            assert all("concurrency" not in j for j in calls), path


def test_the_queue_dispatch_input_names_the_claim() -> None:
    """The drain dispatches ``issue-number``, ``labeller`` and ``claim``: GitHub refuses
    inputs a workflow does not declare, so the caller must declare all three."""
    on = _on(_load(ROOT / "examples" / "workflows" / "chimera.yml"))
    inputs = on["workflow_dispatch"]["inputs"]
    assert {"issue-number", "labeller", "claim"} <= set(inputs)


def _modes(data: dict[Any, Any]) -> set[str]:
    """The Chimera action modes a workflow's steps run."""
    found = set()
    for spec in (data.get("jobs") or {}).values():
        for step in spec.get("steps") or []:
            mode = (step.get("with") or {}).get("mode") if isinstance(step, dict) else None
            if isinstance(mode, str):
                found.add(mode)
    return found


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_workflow_that_takes_queue_slots_is_one_the_queue_knows(path: Path) -> None:
    """A workflow running decide, drain, tick or command mode takes or frees ChangeQueue
    slots: it must be one whose groups are pinned above (a copy under another name, or a
    new one, would otherwise ship without them)."""
    data = _load(path)
    on = _on(data)
    reusable = isinstance(on, dict) and "workflow_call" in on
    if _modes(data) & {"decide", "drain", "tick", "command"} and not reusable:
        assert path.name in EXPECTED, (
            f"{path.name} runs {sorted(_modes(data))} with no pinned group"
        )


def test_every_reusable_workflow_keeps_the_callers_groups() -> None:
    """A reusable workflow (``on: workflow_call``) runs inside its caller's concurrency
    group; a fixed group of its own would serialise every caller into one lock, and
    ``cancel-in-progress`` would drop starts."""
    reusable = _reusable()
    if not reusable:
        pytest.skip("no reusable workflow (on: workflow_call) is shipped yet")
    for path in reusable:
        group = _load(path).get("concurrency")
        if group is not None:
            text = str(group.get("group", "")) if isinstance(group, dict) else str(group)
            assert "github.workflow" in text or "inputs." in text, (
                f"{path.name}: a fixed group {text!r} would serialise every caller"
            )
            assert not (isinstance(group, dict) and group.get("cancel-in-progress")), path.name
