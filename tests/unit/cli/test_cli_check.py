"""``chimera check``: human output, exit codes, --json, --format github, --only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.github.action.annotations import escape_data, escape_property, workflow_command

BROKEN = """\
requirements:
  - id: good
    contains: {path: README.md, pattern: app}
  - id: bad
    contians: {path: README.md, pattern: app}
    risk: extreme
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_human_output(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check")
    assert code == 1
    assert err == ""
    lines = out.splitlines()
    assert lines[:4] == [
        "passed  widget-class         defines class Widget in src/app.py",
        "failed  no-todo              absent /TODO/ from src/**/*.py",
        "passed  readme-mentions-app  contains /app/ in README.md",
        'failed  exit-three           command `echo "50% done"; echo boom >&2; exit 3`',
    ]
    assert "FAILED no-todo: No TODO is left in the sources  [specs/app.yaml:6:5]" in out
    assert "    src/app.py:3:28:" in out
    assert "FAILED exit-three: A command that fails  [specs/app.yaml:14:5]" in out
    assert "boom" in out
    assert lines[-1].startswith("2 failed, 2 passed in ")


def test_all_green_exits_zero(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--only", "widget-class", "readme-mentions-app")
    assert code == 0
    assert [line.split()[1] for line in out.splitlines()[:2]] == [
        "widget-class",
        "readme-mentions-app",
    ]
    assert out.splitlines()[-1].startswith("2 passed in ")


def test_unknown_only_id_suggests(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", "--only", "widget-clas")
    assert code == 2
    assert out == ""
    assert err == (
        "chimera: error: --only: unknown requirement id 'widget-clas' "
        "(did you mean 'widget-class'?)\n"
    )


def test_a_spec_path_after_only_is_named_as_the_mistake(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "check", "--only", "widget-class", "specs/")
    assert code == 2
    assert out == ""
    assert err == (
        "chimera: error: --only: unknown requirement id 'specs/' "
        "(--only takes several ids: put SPEC_PATHs before it)\n"
    )


def test_json_document(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--json")
    assert code == 1
    doc = json.loads(out)  # exactly one object: json.loads rejects trailing data
    assert doc["version"] == 1
    assert doc["ok"] is False
    assert doc["counts"] == {"passed": 2, "failed": 2, "error": 0}
    by_id = {r["id"]: r for r in doc["results"]}
    assert list(by_id) == ["widget-class", "no-todo", "readme-mentions-app", "exit-three"]
    todo = by_id["no-todo"]
    assert todo["status"] == "failed"
    assert set(todo) == {"id", "status", "message", "evidence", "duration_s"}
    assert {(e["file"], e["line"]) for e in todo["evidence"]} == {
        ("src/app.py", 3),
        ("src/app.py", 6),
    }
    assert isinstance(todo["duration_s"], float)


def test_json_all_green(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--format", "json", "--only", "widget-class")
    assert code == 0
    doc = json.loads(out)
    assert doc["ok"] is True
    assert [r["id"] for r in doc["results"]] == ["widget-class"]


def test_invalid_spec_runs_nothing(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "specs" / "touch.yaml").write_text(
        "requirements:\n  - id: touch\n    command: {run: 'touch ran', timeout: 30}\n",
        encoding="utf-8",
    )
    (repo / "specs" / "broken.yaml").write_text(BROKEN, encoding="utf-8")
    code, out, err = run(capsys, "check")
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith("specs/broken.yaml:5:5: unknown field 'contians'")
    assert lines[1].startswith("specs/broken.yaml:6:11: ")
    assert lines[-1] == "chimera: error: invalid spec (2 problems); nothing ran"
    assert not (repo / "ran").exists()


def test_invalid_spec_json(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "specs" / "broken.yaml").write_text(BROKEN, encoding="utf-8")
    code, out, _ = run(capsys, "check", "--json")
    assert code == 2
    doc = json.loads(out)
    assert doc["version"] == 1
    assert doc["ok"] is False
    assert set(doc) == {"version", "ok", "errors"}
    assert [(e["file"], e["line"], e["col"]) for e in doc["errors"]] == [
        ("specs/broken.yaml", 5, 5),
        ("specs/broken.yaml", 6, 11),
    ]
    assert "contians" in doc["errors"][0]["message"]


def test_invalid_spec_github(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "specs" / "broken.yaml").write_text(BROKEN, encoding="utf-8")
    code, out, _ = run(capsys, "check", "--format", "github")
    assert code == 2
    assert out.splitlines()[0].startswith(
        "::error file=specs/broken.yaml,line=5,col=5,title=invalid Chimera spec::unknown field"
    )


def test_missing_default_spec_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "check")
    assert code == 2
    assert out == ""
    assert err == (
        "chimera: error: specs: no such directory; pass SPEC_PATH, "
        "run 'chimera init' to write a starter spec, or write one (docs: the Spec format)\n"
    )


def test_missing_spec_path_json(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", "nope.yaml", "--json")
    assert code == 2
    doc = json.loads(out)
    assert doc["ok"] is False
    assert "nope.yaml" in doc["errors"][0]["message"]
    assert err.count("\n") == 1


def test_root_option_defaults_specs_under_root(
    repo: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    monkeypatch.chdir(elsewhere)
    code, out, _ = run(capsys, "check", "--root", str(repo), "--only", "widget-class")
    assert code == 0
    assert "widget-class" in out


def test_bad_root(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check", "--root", "missing")
    assert code == 2
    assert err == "chimera: error: --root missing: not a directory\n"


def test_json_and_format_are_exclusive(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", "--json", "--format", "github")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "not allowed with argument" in err


def test_github_annotations(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--format", "github")
    assert code == 1
    commands = [line for line in out.splitlines() if line.startswith("::")]
    assert len(commands) == 2
    todo, cmd = commands
    # Evidence in a repository file: the annotation lands on the match.
    assert todo.startswith(
        "::error file=src/app.py,line=3,col=28,title=Chimera requirement no-todo failed::"
        "No TODO is left in the sources%0Aabsent /TODO/ from src/**/*.py%0A"
    )
    # A command has no file evidence: the annotation lands on the requirement's YAML line.
    assert cmd.startswith(
        "::error file=specs/app.yaml,line=14,col=5,title=Chimera requirement exit-three failed::"
    )
    assert "50%25 done" in cmd
    assert "\n" not in cmd
    # The human report is there too, for people reading the log.
    assert "2 failed, 2 passed in " in out


def test_github_paths_are_relative_to_the_workspace(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sub = repo / "sub"
    sub.mkdir()
    for name in ("src", "specs", "README.md"):
        (repo / name).rename(sub / name)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    code, out, _ = run(capsys, "check", "--root", "sub", "--format", "github", "--only", "no-todo")
    assert code == 1
    assert "::error file=sub/src/app.py,line=3,col=28," in out


def test_escaping() -> None:
    assert escape_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert workflow_command("error", "x\ny", {"file": "a,b.py", "title": "t: 1"}) == (
        "::error file=a%2Cb.py,title=t%3A 1::x%0Ay"
    )
    assert workflow_command("error", "100%", {}) == "::error::100%25"


def test_error_status_is_red_and_counted(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "specs" / "zero.yaml").write_text(
        "requirements:\n"
        "  - id: nothing-selected\n"
        "    absent: {pattern: x, paths: ['nowhere/**/*.py']}\n"
        "  - id: unparsable\n"
        "    defines: {path: src/bad.py, symbol: X}\n",
        encoding="utf-8",
    )
    (repo / "src" / "bad.py").write_text("def broken(:\n", encoding="utf-8")
    code, out, _ = run(capsys, "check", "--only", "nothing-selected", "unparsable", "widget-class")
    assert code == 1
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[:3]] == ["passed", "error", "error"]
    assert any(line.startswith("ERROR nothing-selected  [specs/zero.yaml:2:5]") for line in lines)
    assert lines[-1].startswith("2 errors, 1 passed in ")
    code, out, _ = run(capsys, "check", "--json", "--only", "unparsable")
    doc = json.loads(out)
    assert doc["counts"] == {"passed": 0, "failed": 0, "error": 1}
    assert "src/bad.py:1:12" in doc["results"][0]["message"]


def test_error_document_version_matches_the_report_version() -> None:
    from chimera.cli.check import JSON_VERSION
    from chimera.spec.results import JSON_SCHEMA_VERSION

    assert JSON_VERSION == JSON_SCHEMA_VERSION
