"""The project's dependency folder: what the sandbox needs to run a project that has them.

The sandbox has no network, so a project's dependencies are installed before any patch, by a
step the maintainer writes (the Action's set-up step: on the base commit, with network), into
one folder outside the workspace. The sandbox shows that folder read-only and puts its
programs first on ``PATH``; nothing in it can be changed by agent-written code, and a patch
that changes a dependency manifest is held for review by the publish scan.

Layouts recognised inside the folder (any combination):

* a Python virtual environment (``python -m venv DIR`` or ``uv venv DIR``): ``DIR/bin`` first
  on ``PATH`` and ``VIRTUAL_ENV=DIR``, so ``python`` and ``pytest`` are the project's;
* ``DIR/node_modules`` (``npm ci --prefix DIR`` with the manifests copied in):
  ``DIR/node_modules/.bin`` on ``PATH`` and ``NODE_PATH=DIR/node_modules`` (CommonJS
  ``require`` reads ``NODE_PATH``; ES module ``import`` does not);
* ``DIR/bin`` alone: any other tool chain's programs.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["deps_environment", "deps_path_entries"]


def deps_path_entries(deps_dir: Path) -> list[Path]:
    """The folders of ``deps_dir`` put first on ``PATH``, in order: ``bin`` (a virtual
    environment or any tool chain), then ``node_modules/.bin``; only those that exist."""
    found = [deps_dir / "bin", deps_dir / "node_modules" / ".bin"]
    return [p for p in found if p.is_dir()]


def deps_environment(deps_dir: Path, path: str) -> dict[str, str]:
    """The variables a command in the sandbox gets for ``deps_dir`` (an absolute folder).

    Args:
        deps_dir: the dependency folder (see the module docstring for its layouts).
        path: the ``PATH`` the command would otherwise get.

    Returns:
        ``PATH`` with the folder's program folders first, plus ``VIRTUAL_ENV`` for a virtual
        environment and ``NODE_PATH`` for ``node_modules`` (only the keys that apply).
    """
    entries = [str(p) for p in deps_path_entries(deps_dir)]
    env = {"PATH": os.pathsep.join([*entries, *(p for p in path.split(os.pathsep) if p)])}
    if (deps_dir / "pyvenv.cfg").is_file():
        env["VIRTUAL_ENV"] = str(deps_dir)
    if (deps_dir / "node_modules").is_dir():
        env["NODE_PATH"] = str(deps_dir / "node_modules")
    return env
