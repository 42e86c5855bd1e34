"""``chimera connectors check``: every problem with "did you mean", a missing OpenAPI
document found without starting anything, and a server that fails to start explained by its
own words first — never ``ExceptionGroup: unhandled errors in a TaskGroup`` (issue 38, row 10)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chimera.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["connectors", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def declare(root: Path, text: str) -> None:
    folder = root / ".chimera.d" / "connectors"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.yaml").write_text(text, encoding="utf-8")


def test_every_problem_with_did_you_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    declare(
        tmp_path,
        "connectors:\n"
        "  - name: files\n"
        "    descripton: reads files\n"
        "    mcp:\n"
        "      comand: npx\n"
        "  - nme: x\n"
        "    mcpp: {command: y}\n",
    )
    code, out, _ = run(capsys, "check", "--root", str(tmp_path))
    assert code == 2
    where = ".chimera.d/connectors/a.yaml"
    assert out.splitlines() == [
        f"{where}:3:5: unknown field or connector kind 'descripton'; did you mean 'description'?",
        f"{where}:5:7: unknown field 'mcp.comand'; did you mean 'command'?",
        f"{where}:6:5: unknown field or connector kind 'nme'; did you mean 'name'?",
        f"{where}:7:5: unknown field or connector kind 'mcpp'; did you mean 'mcp'?",
    ]


OPENAPI = "connectors:\n  - name: api\n    openapi:\n      document: {doc}\n      base_url: http://127.0.0.1:9/\n"


def test_a_missing_openapi_document_is_flagged_without_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    declare(tmp_path, OPENAPI.format(doc="docs/api.yaml"))
    code, out, _ = run(capsys, "check", "--root", str(tmp_path))
    assert code == 2
    assert out.splitlines()[-1] == (
        ".chimera.d/connectors/a.yaml:2:5: connector 'api': openapi.document: docs/api.yaml: "
        "no such file in the project"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "api.yaml").write_text("openapi: 3.0.3\n")
    code, out, _ = run(capsys, "check", "--root", str(tmp_path))
    assert code == 0, out


def test_a_missing_openapi_document_at_a_commit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid", "-C", str(tmp_path)]
    declare(tmp_path, OPENAPI.format(doc="api.yaml"))
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    (tmp_path / "api.yaml").write_text("openapi: 3.0.3\n")  # only in the working tree
    code, out, _ = run(capsys, "check", "--root", str(tmp_path), "--rev", "HEAD")
    assert code == 2
    assert out.splitlines()[-1].endswith("openapi.document: api.yaml: no such file at HEAD")


def test_a_server_that_fails_to_start_shows_its_own_words_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = tmp_path / "server.py"
    server.write_text(
        "import sys\nsys.stderr.write('fatal: API_TOKEN is not set\\n')\nsys.exit(1)\n"
    )
    declare(
        tmp_path,
        f"connectors:\n  - name: broken\n    mcp:\n      command: {sys.executable}\n"
        f"      args: [{server}]\n",
    )
    code, out, _ = run(capsys, "check", "--start", "--root", str(tmp_path), "--sandbox", "scrubbed")
    assert code == 1
    line = out.splitlines()[-1]
    assert "ExceptionGroup" not in line and "TaskGroup" not in line
    assert line.startswith(
        "connector 'broken' (.chimera.d/connectors/a.yaml:2:5): mcp: cannot connect: "
        "the server said: fatal: API_TOKEN is not set ("
    ), line
