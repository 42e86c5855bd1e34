"""Shared fixtures of the benchmarks: a git copy of the standard library and a spec for it.

``stdlib_tree(dest)`` copies the running interpreter's standard library (without
``site-packages`` and byte-code caches) to ``dest`` and commits it, so ``paths`` scopes
list files through git as in a real project. ``write_spec(root, jobs, path)`` writes the
requirements of :func:`spec_check.build_jobs` as one spec file.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import yaml

from chimera.spec.model import Check

NO_LITERAL_PATTERNS = [r"^ {40,}\S", r"[A-Z]{30,}", r"^\s+print\b"]
"""Patterns with no literal a prefilter can use (the costly case)."""


def stdlib_tree(dest: Path) -> Path:
    """A committed git copy of the standard library at ``dest`` (reused when present)."""
    if (dest / ".git").is_dir():
        return dest
    src = Path(sysconfig.get_paths()["stdlib"]).resolve()
    shutil.copytree(
        src,
        dest,
        symlinks=True,
        ignore=shutil.ignore_patterns("site-packages", "__pycache__", "*.pyc"),
    )
    git = ["git", "-c", "user.email=bench@example.invalid", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q"], cwd=dest, check=True)
    subprocess.run([*git, "add", "-A"], cwd=dest, check=True)
    subprocess.run([*git, "commit", "-qm", "stdlib"], cwd=dest, check=True)
    return dest


def check_entry(rid: str, check: Check) -> dict[str, Any]:
    """One requirement mapping for ``check``."""
    body = check.model_dump(mode="json", exclude_defaults=True)
    return {"id": rid, check.kind_name: body}


def write_spec(checks: list[Check], path: Path) -> Path:
    """Write ``checks`` as one spec file (ids ``r0000``...)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = [check_entry(f"r{i:04d}", c) for i, c in enumerate(checks)]
    path.write_text(yaml.safe_dump({"requirements": entries}, sort_keys=False), encoding="utf-8")
    return path


def stdlib_checks(root: Path, seed: int = 2026) -> list[Check]:
    """The ~650 requirements of ``spec_check.build_jobs`` plus the no-literal patterns."""
    from spec_check import build_jobs  # the bench folder is on sys.path when run as a script

    from chimera.spec.kinds import Absent

    checks = [job.check for job in build_jobs(root, random.Random(seed))]
    checks += [Absent(paths=["**/*.py"], pattern=p) for p in NO_LITERAL_PATTERNS]
    return checks
