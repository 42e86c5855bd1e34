"""Hints ``chimera check`` adds to its report about the tree, never about the Spec's verdict.

One so far: a virtual environment inside the project. Scopes select the files git sees,
untracked ones included (``git ls-files --others --exclude-standard``), so a ``.venv`` made in
the project and missing from ``.gitignore`` is thousands of files a ``**/*.py`` scope reads —
and its matches become the project's (``float(`` found 117 times in ``site-packages``). The
engine's selection stays as documented; the report names the folder once. Cost: one listing
of the root's entries and a ``stat`` of ``pyvenv.cfg`` (the marker every ``venv`` and
``virtualenv`` environment holds, PEP 405) in each folder; the scopes are asked only when such
a folder exists.
"""

# ruff: noqa: PTH118, PTH113

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chimera.spec.engine.scopes import Scopes
    from chimera.spec.model import Requirement

VENV_MARKER = "pyvenv.cfg"


def virtual_environments(root: Path) -> list[str]:
    """The names of ``root``'s top-level folders holding ``pyvenv.cfg``, sorted; symlinked
    folders are not followed (as the engine's listing does not). ``[]`` when ``root`` cannot
    be listed."""
    found: list[str] = []
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and os.path.isfile(
                    os.path.join(entry.path, VENV_MARKER)
                ):
                    found.append(entry.name)
    except OSError:
        return []
    return sorted(found)


def venv_hints(root: Path, requirements: Iterable[Requirement], selection: Scopes) -> list[str]:
    """One line per virtual environment folder of ``root`` (:func:`virtual_environments`)
    whose files a ``paths`` scope of ``requirements`` selects: ``"N files under .venv/ (a
    virtual environment) were selected: add it to .gitignore"``; ``[]`` when there is none.

    Only ``contains`` and ``absent`` scopes given as ``paths`` count: a ``path`` naming one
    file there is deliberate.
    """
    folders = virtual_environments(root)
    if not folders:
        return []
    from chimera.spec.kinds import Absent, Contains

    names: set[str] = set()
    for req in requirements:
        check = req.check
        if isinstance(check, Contains | Absent) and check.paths is not None:
            names.update(selection.selected(tuple(check.paths), tuple(check.exclude)))
    lines: list[str] = []
    for folder in folders:
        prefix = folder + "/"
        count = sum(1 for name in names if name.startswith(prefix))
        if count:
            files = "file" if count == 1 else "files"
            was = "was" if count == 1 else "were"
            lines.append(
                f"{count} {files} under {prefix} (a virtual environment) {was} selected: "
                "add it to .gitignore"
            )
    return lines
