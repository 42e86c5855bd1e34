"""The verify side: ``evaluate_heldout`` on a base and a patched tree, in the real sandbox."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from chimera.core.heldout import PUBLIC_MESSAGE, evaluate_heldout, verify_digest
from chimera.sandbox import Sandbox

CANARY = "HELDOUT-CANARY-77b0"
PY = sys.executable
VISIBLE = f"""\
requirements:
  - id: double-two
    command: {{run: '{PY} -c "import calc; assert calc.double(2) == 4"'}}
  - id: triple-defined
    defines: {{path: calc.py, symbol: triple}}
"""
HIDDEN = f"""\
requirements:
  - id: double-general
    depends_on: [double-two]
    command: {{run: '{PY} heldout/check_double.py'}}
  - id: no-magic-number
    absent: {{pattern: '== 2:', paths: ['calc.py']}}
  - id: triple-general
    depends_on: [triple-defined]
    command: {{run: 'false'}}
"""
CHECK = f"""\
import sys
sys.path.insert(0, ".")
import calc
open("planted.txt", "w").write("written by a held-out check")
print("{CANARY}", calc.double(5))
assert calc.double(5) == 10
"""
BASE = "def double(x):\n    return 0\n"
CHEAT = "def double(x):\n    if x == 2:\n        return 4\n    return 0\n"
REAL = "def double(x):\n    return 2 * x\n"


def _tree(path: Path, calc: str) -> Path:
    (path / "specs").mkdir(parents=True)
    (path / "specs" / "v.yaml").write_text(VISIBLE)
    (path / "calc.py").write_text(calc)
    return path


def _heldout(tmp_path: Path, text: str = HIDDEN) -> Path:
    folder = tmp_path / "private" / "heldout"
    folder.mkdir(parents=True)
    (folder / "hidden.yaml").write_text(text)
    (folder / "check_double.py").write_text(CHECK)
    return folder


def test_a_special_cased_visible_check_is_caught(tmp_path: Path) -> None:
    base = _tree(tmp_path / "base", BASE)
    patched = _tree(tmp_path / "patched", CHEAT)
    folder = _heldout(tmp_path)
    verdict = evaluate_heldout(folder, base, patched, Sandbox(patched, mode="bwrap"))
    assert not verdict.passed
    by_id = {r.id: r for r in verdict.results}
    assert set(by_id) == {"double-general", "no-magic-number"}
    assert verdict.skipped == ("triple-general",)  # triple-defined does not pass: not yet due
    assert by_id["double-general"].status == "failed" and by_id["double-general"].base == "failed"
    assert CANARY in by_id["double-general"].evidence  # the maintainer sees the output
    assert by_id["no-magic-number"].status == "failed" and by_id["no-magic-number"].base == "passed"
    assert "calc.py:2" in by_id["no-magic-number"].evidence
    public = json.dumps(verdict.public())
    assert PUBLIC_MESSAGE in public
    for secret in (CANARY, "double-general", "no-magic-number", "calc.py"):
        assert secret not in public
    assert verify_digest(verdict.private())
    # The checks ran in throwaway copies: nothing they wrote reached either tree.
    assert not (patched / "planted.txt").exists() and not (base / "planted.txt").exists()
    assert not (patched / "heldout").exists()


def test_the_real_fix_passes(tmp_path: Path) -> None:
    base = _tree(tmp_path / "base", BASE)
    patched = _tree(tmp_path / "patched", REAL)
    verdict = evaluate_heldout(_heldout(tmp_path), base, patched, Sandbox(patched, mode="bwrap"))
    assert verdict.passed, verdict.maintainer_lines()
    assert [r.id for r in verdict.results] == ["double-general", "no-magic-number"]
    assert verdict.public() == {"verdict": "passed", "message": "", "digest": verdict.digest}


def test_applicability_follows_the_visible_results_given(tmp_path: Path) -> None:
    base = _tree(tmp_path / "base", BASE)
    patched = _tree(tmp_path / "patched", REAL)
    verdict = evaluate_heldout(
        _heldout(tmp_path), base, patched, Sandbox(patched, mode="bwrap"), visible_passed=()
    )
    assert [r.id for r in verdict.results] == ["no-magic-number"]
    assert set(verdict.skipped) == {"double-general", "triple-general"}


def test_a_held_out_spec_that_does_not_load_fails_closed(tmp_path: Path) -> None:
    base = _tree(tmp_path / "base", BASE)
    patched = _tree(tmp_path / "patched", REAL)
    clash = "requirements:\n  - id: double-two\n    defines: {path: calc.py, symbol: double}\n"
    verdict = evaluate_heldout(
        _heldout(tmp_path, clash), base, patched, Sandbox(patched, mode="bwrap")
    )
    assert not verdict.passed and "does not load" in verdict.problem
    assert verdict.public()["verdict"] == "failed"
