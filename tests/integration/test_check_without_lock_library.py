"""``chimera check`` with the report cache's lock library unimportable (a broken or trimmed
install): the check passes and says once why its report was not stored, never an internal
error. The cache only saves work; a check must not depend on it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BLOCKED = (
    "import sys; sys.modules['filelock'] = None; "
    "from chimera.cli import main; sys.exit(main(sys.argv[1:]))"
)


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def test_a_check_with_caches_on_passes_when_the_lock_library_is_missing(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "cart.yaml").write_text(
        "requirements:\n"
        "  - id: total\n"
        "    defines: {path: cart.py, symbol: total}\n"
        "  - id: no-floats\n"
        "    absent: {paths: ['**/*.py'], pattern: 'float\\('}\n",
        encoding="utf-8",
    )
    (tmp_path / "cart.py").write_text("def total(c: list[int]) -> int:\n    return sum(c)\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "init")
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED, "check", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "internal error" not in done.stderr
    assert "lock library is missing" in done.stderr
    # The same run with the library present stores its report (the cache is on by default).
    stored = subprocess.run(
        [sys.executable, "-m", "chimera", "check", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert stored.returncode == 0, stored.stdout + stored.stderr
    assert "lock library" not in stored.stderr
