"""The scripted-model example for ``chimera ask`` (docs/how-to/scripted-models.md) works as
written."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from chimera.cli import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "scripted-models.md"


def readme_ask_scripts() -> tuple[str, str]:
    section = PAGE.read_text(encoding="utf-8").split("## Scripted models for `chimera ask`")[1]
    blocks = re.findall(r"```yaml\n(.*?)```", section.split("\n## ", 1)[0], re.DOTALL)
    top = next(b for b in blocks if b.startswith("# top.yaml"))
    worker = next(b for b in blocks if b.startswith("# worker.yaml"))
    return top, worker


def test_readme_ask_scripts_answer_with_verified_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "http.py").write_text('"""HTTP client."""\nDEFAULT_TIMEOUT = 30\n')
    (root / "chimera.toml").write_text("[hierarchy]\ninline_max_tokens = 0\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    top, worker = readme_ask_scripts()
    (tmp_path / "top.yaml").write_text(top, encoding="utf-8")
    (tmp_path / "worker.yaml").write_text(worker, encoding="utf-8")
    code = main(
        [
            "ask",
            "What is the default timeout?",
            "--root",
            str(root),
            "--model",
            f"scripted:{tmp_path / 'top.yaml'}",
            "--worker-model",
            f"scripted:{tmp_path / 'worker.yaml'}",
            "--quiet",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.startswith("The default timeout is 30 seconds (src/http.py:2).")
    assert "src/http.py:2: DEFAULT_TIMEOUT = 30" in captured.out
    assert "1 delegation(s), 0 inline, 0 unverified" in captured.out
