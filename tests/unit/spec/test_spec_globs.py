"""Glob validation: globs that cannot name files are problems at their place; the rest load.

Comments (``#x``), the root itself (``./``, ``.``, ``/``), a lone ``!`` and ``..`` segments
would select nothing; every other spelling loads verbatim (the engine reads ``./`` as the
root anchor, see tests/unit/engine/test_engine_glob_spellings.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.spec.kinds import Absent
from chimera.spec.loader import load_spec_files
from chimera.spec.model import Requirement


def load(tmp_path: Path, body: str) -> tuple[list[str], list[Requirement]]:
    path = tmp_path / "spec.yaml"
    path.write_text(f"requirements:\n  - id: a\n{body}", encoding="utf-8")
    loaded = load_spec_files([path])
    reqs = [r for f in loaded.spec.files for r in f.requirements]
    return [str(p).replace(str(tmp_path) + "/", "") for p in loaded.all_problems()], reqs


@pytest.mark.parametrize(
    "glob", ["./#x", "/#x", "./!x", "!x", "!./gen/**", ".//x", ".gitignore", "a/..b", "..x"]
)
def test_globs_naming_files_load_verbatim(tmp_path: Path, glob: str) -> None:
    scope = f"{{paths: ['{glob}'], exclude: ['{glob}'], pattern: x}}"
    body = f"    owner: ['{glob}']\n    absent: {scope}\n"
    problems, reqs = load(tmp_path, body)
    assert problems == []
    (req,) = reqs
    assert isinstance(req.check, Absent)
    assert req.check.paths == [glob]
    assert req.check.exclude == [glob]
    assert list(req.owner) == [glob]


@pytest.mark.parametrize(
    ("glob", "message"),
    [
        ("#x", "'#x' is a comment in gitignore syntax and selects nothing"),
        ("././", "'././' names the root directory, not files; write '**' for every file"),
        ("/.", "'/.' names the root directory"),
        ("! ", "'! ' negates nothing"),
        ("a/../b", "'..' in 'a/../b' never matches: globs select files inside the root"),
    ],
)
def test_owner_globs_that_cannot_name_files_are_problems(
    tmp_path: Path, glob: str, message: str
) -> None:
    problems, _ = load(tmp_path, f"    owner: ['src/**', '{glob}']\n    command: {{run: x}}\n")
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"spec.yaml:3:23: owner[1]: {message}"), problems
