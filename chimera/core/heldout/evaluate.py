"""Evaluating held-out requirements against a tree, their commands in a disposable copy.

Held-out spec files are loaded together with the visible ones (ids are unique across both,
and a held-out requirement may ``depends_on`` a visible one) and split again by file. A
held-out requirement **applies** once every visible requirement it depends on passes; one
without visible dependencies always applies. Every applicable one must pass.

``command`` checks run in a fresh copy of the tree with the held-out folder copied in (at its
path from the root, or at its name when it lies outside), under the runner's sandbox; the
copy is deleted afterwards, so nothing they write or print reaches the live tree. Their
output goes only into the private record of the verdict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from pathlib import Path

from chimera.core.heldout.place import HeldOutDir
from chimera.core.heldout.verdict import EVIDENCE_CHARS, HeldOutResult, HeldOutVerdict
from chimera.errors import ChimeraError
from chimera.governance.redactor import cut_redacted
from chimera.runner import CommandRunner
from chimera.sandbox.disposable import DisposableRunner
from chimera.spec.drift import check_drift
from chimera.spec.engine.options import EngineOptions
from chimera.spec.loader import discover_spec_files, load_spec
from chimera.spec.model import Spec


class _Fixed:
    """A runner without ``clone`` (the trusted LocalRunner) used as is over each copy."""

    def __init__(self, runner: CommandRunner) -> None:
        self.runner = runner

    def clone(self, workspace: Path, carried: Sequence[tuple[Path, Path]] = ()) -> CommandRunner:
        return self.runner


def heldout_runner(runner: CommandRunner, place: HeldOutDir) -> CommandRunner:
    """The runner of held-out ``command`` checks over ``place.root``: each command in a fresh
    copy of the tree holding the held-out folder, through ``runner``'s sandbox."""
    clone = getattr(runner, "clone", None)
    inner = runner if callable(clone) else _Fixed(runner)
    return DisposableRunner(
        inner,  # type: ignore[arg-type]
        place.root,
        exclude=[place.path] if place.inside else [],
        add=[(place.path, place.rel_in_copy)],
    )


def load_heldout(visible: Spec, place: HeldOutDir) -> tuple[Spec, list[str]]:
    """The visible and held-out requirements as one Spec, and the held-out ids in order.

    Raises:
        SpecError: a file is invalid (ids collide, a dependency is unknown...).
        UsageError: the held-out folder holds no spec file.
    """
    files = place.files()
    combined = load_spec([*(f.path for f in visible.files), *files])
    ids = [
        r.id
        for f in combined.files
        if Path(f.path).resolve().is_relative_to(place.path)
        for r in f.requirements
    ]
    return combined, ids


def check_heldout(
    visible: Spec,
    place: HeldOutDir,
    runner: CommandRunner,
    *,
    passed: Collection[str] | None,
    options: EngineOptions | None = None,
    base: dict[str, str] | None = None,
) -> HeldOutVerdict:
    """Check the held-out requirements of ``place`` against the tree at ``place.root``.

    Args:
        visible: the visible Spec the change was checked against.
        place: the held-out folder and the tree to check.
        runner: the sandbox (or, for trusted trees, a local runner).
        passed: the visible ids that pass after the change (``None``: treat every held-out
            requirement as applicable).
        options: the engine's limits (hidden paths are dropped: these checks may read them).
        base: each held-out id's status on the base tree, recorded beside its result.

    Returns:
        The verdict; never raises for a held-out spec that does not load (the verdict then
        fails closed with the reason in its private ``problem``).
    """
    try:
        combined, ids = load_heldout(visible, place)
    except ChimeraError as exc:
        return HeldOutVerdict(problem=f"the held-out spec does not load: {exc}")
    by_id = combined.by_id()
    known = set(visible.by_id())
    applicable: list[str] = []
    skipped: list[str] = []
    for rid in ids:
        deps = [d for d in by_id[rid].depends_on if d in known]
        if passed is None or all(d in passed for d in deps):
            applicable.append(rid)
        else:
            skipped.append(rid)
    if not applicable:
        return HeldOutVerdict(skipped=tuple(skipped))
    opts = dataclasses.replace(options, hidden=()) if options is not None else None
    try:
        checks = heldout_runner(runner, place)
        report = check_drift(combined, place.root, runner=checks, only=applicable, options=opts)
    except ChimeraError as exc:
        return HeldOutVerdict(skipped=tuple(skipped), problem=f"held-out checks failed: {exc}")
    results = tuple(
        HeldOutResult(
            id=r.id,
            status=r.status.value,
            evidence="" if r.passed else _cap(r.render(max_evidence=5)),
            base=(base or {}).get(r.id, ""),
        )
        for r in report
    )
    return HeldOutVerdict(results=results, skipped=tuple(skipped))


def _cap(text: str) -> str:
    # Redacted before the cut: a cut through a token keeps a piece no redactor finds.
    return text if len(text) <= EVIDENCE_CHARS else cut_redacted(text, EVIDENCE_CHARS - 1) + "…"


def evaluate_heldout(
    spec_dir: Path,
    base_tree: Path,
    patched_tree: Path,
    runner: CommandRunner,
    *,
    visible_spec: Sequence[str] = ("specs",),
    visible_passed: Collection[str] | None = None,
    options: EngineOptions | None = None,
) -> HeldOutVerdict:
    """The verify side: held-out requirements of ``spec_dir`` on the base and patched trees.

    The visible Spec is read from ``base_tree`` (``visible_spec`` paths relative to it), as
    verify reads everything from the base commit. Every held-out requirement is evaluated on
    the base (its status is recorded beside the result); on the patched tree those whose
    visible dependencies pass there (``visible_passed``, or computed here through ``runner``)
    must pass.

    Args:
        spec_dir: the held-out folder (written by verify outside the sandbox's allowlist).
        base_tree, patched_tree: the base commit's tree and the same tree with the patch.
        runner: the strict sandbox (:class:`chimera.sandbox.Sandbox`); commands of both
            trees run in disposable copies through it.
        visible_spec: the visible spec paths, relative to the trees.
        visible_passed: visible ids passing on the patched tree, when the caller has them.
        options: the engine's limits.

    Returns:
        The verdict of the patched tree (``public()`` for every published surface,
        ``private()`` only sealed to the maintainer). Fails closed (``passed`` false) when
        the held-out spec does not load.
    """
    base_root = Path(base_tree).resolve()
    patched_root = Path(patched_tree).resolve()
    folder = Path(spec_dir).resolve()
    files = discover_spec_files([base_root / p for p in visible_spec])
    try:
        visible = load_spec(files) if files else Spec(files=())
    except ChimeraError as exc:
        return HeldOutVerdict(problem=f"the visible spec does not load on the base: {exc}")
    before = check_heldout(
        visible, HeldOutDir(folder, base_root), runner, passed=None, options=options
    )
    statuses = {r.id: r.status for r in before.results}
    if visible_passed is None:
        visible_passed = _visible_passing(visible, folder, patched_root, runner, options)
    return check_heldout(
        visible,
        HeldOutDir(folder, patched_root),
        runner,
        passed=visible_passed,
        options=options,
        base=statuses,
    )


def _visible_passing(
    visible: Spec,
    folder: Path,
    tree: Path,
    runner: CommandRunner,
    options: EngineOptions | None,
) -> set[str]:
    try:
        combined, ids = load_heldout(visible, HeldOutDir(folder, tree))
    except ChimeraError:
        return set()
    by_id = combined.by_id()
    known = visible.by_id()
    wanted = sorted({d for rid in ids for d in by_id[rid].depends_on if d in known})
    if not wanted:
        return set()
    report = check_drift(visible, tree, runner=runner, only=wanted, options=options)
    return set(report.green_ids)


__all__ = ["check_heldout", "evaluate_heldout", "heldout_runner", "load_heldout"]
