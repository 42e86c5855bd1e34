"""Judging a run against an earlier commit than the one its work tree starts from.

A review re-run iterates on a pull request: its work tree starts at the PR's head, which
already holds the earlier rounds' change, but the goal is still the original one. If the
goal were judged on that tree it would already pass (nothing left to do, and the review's
feedback never reaches the model), and "green on the base" would include the PR's own
changes. With a :class:`Basis` the orchestrator judges the goal against ``commit`` instead:
the base report (what was green and red, whether an acceptance requirement tests anything)
comes from a checkout of that commit, the first card makes an attempt even when its
requirement passes on the head, and the patch the caller takes is relative to ``commit``,
so the PR's earlier commits count.

The basis tree is a detached ``git worktree`` under ``.chimera/basis/`` (inside the
workspace, so a sandboxed ``command`` check may run there; never part of a patch), removed
again after each use.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.errors import ChimeraError
from chimera.localstate import make_dirs
from chimera.runner import stderr_line

if TYPE_CHECKING:
    from collections.abc import Callable

    from chimera.runner import CommandRunner
    from chimera.spec.engine import EngineOptions
    from chimera.spec.model import Spec
    from chimera.spec.results import DriftReport

__all__ = ["BASIS_KEY", "Basis", "base_spec", "basis_tree", "block_ids"]

BASIS_KEY = "basis_commit"
"""Where a run records its basis (``RunState.extra``), so a resumed run judges the same way."""

_REV = re.compile(r"[0-9A-Za-z][0-9A-Za-z._/^~-]{0,199}")


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        why = stderr_line(proc.stderr or proc.stdout, exit_code=proc.returncode)
        raise ChimeraError(f"git {args[0]} failed: {why}")
    return proc.stdout.strip()


@dataclass(frozen=True)
class Basis:
    """Judge the run's goal against ``commit`` (a SHA or any revision git resolves in the
    workspace), not against the tree the run starts from.

    Raises:
        ValueError: ``commit`` is empty or not a plain revision (no options, no spaces).
    """

    commit: str

    def __post_init__(self) -> None:
        if not _REV.fullmatch(self.commit) or ".." in self.commit:
            raise ValueError(f"not a commit: {self.commit!r}")

    def report(
        self,
        root: Path,
        spec: Spec,
        *,
        runner: CommandRunner,
        only: Sequence[str] | None = None,
        options: EngineOptions | None = None,
    ) -> DriftReport:
        """``spec`` (as loaded from the work tree) evaluated on a checkout of the commit.

        Raises:
            ChimeraError: the commit is not in the repository at ``root``.
        """
        from chimera.spec.drift import check_drift

        with basis_tree(root, self.commit) as tree:
            return check_drift(spec, tree, runner=runner, only=only, options=options)


@contextmanager
def basis_tree(root: Path, commit: str) -> Iterator[Path]:
    """A detached worktree of ``commit`` under ``root/.chimera/basis/``, removed on exit.

    Raises:
        ChimeraError: ``commit`` does not name a commit in the repository at ``root``.
    """
    sha = _git(root, "rev-parse", "--verify", "-q", f"{commit}^{{commit}}")
    place = root / ".chimera" / "basis" / sha[:12]
    if place.exists():
        _git(root, "worktree", "remove", "--force", str(place))
        shutil.rmtree(place, ignore_errors=True)
    make_dirs(place.parent)
    _git(root, "worktree", "add", "--quiet", "--detach", str(place), sha)
    try:
        yield place
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(place)],
            cwd=root,
            capture_output=True,
            check=False,
        )
        shutil.rmtree(place, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=root, capture_output=True, check=False)


def base_spec(
    basis: Basis, root: Path, spec_paths: Sequence[str], load: Callable[[Sequence[Path]], Spec]
) -> Spec:
    """The Spec as the basis commit has it (``spec_paths`` relative to the root): where a
    tainted run's trusted commands come from, never the head's agent-written requirements.

    Raises:
        ChimeraError / SpecError: the commit is unknown, or its Spec does not load.
    """
    with basis_tree(root, basis.commit) as tree:
        return load([tree / p for p in spec_paths])


def block_ids(blocks: Sequence[str]) -> list[str] | None:
    """The requirement ids of ``chimera`` block bodies, in order; ``None`` when a block is
    not YAML holding a requirements list (the normal acceptance path words that error)."""
    import yaml

    ids: list[str] = []
    for body in blocks:
        try:
            data = yaml.safe_load(body)
        except yaml.YAMLError:
            return None
        items = data.get("requirements") if isinstance(data, dict) else data
        if not isinstance(items, list):
            return None
        ids += [str(item.get("id")) for item in items if isinstance(item, dict)]
    return ids
