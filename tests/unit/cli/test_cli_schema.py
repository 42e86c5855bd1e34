"""``chimera schema``: the JSON Schema of spec files on stdout or in a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.cli import main


def test_schema_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert "requirements" in schema["properties"]
    text = json.dumps(schema)
    for kind in ("defines", "contains", "absent", "command"):
        assert f'"{kind}"' in text


def test_schema_to_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out" / "spec.schema.json"
    assert main(["schema", "-o", str(target)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"wrote {target}\n"
    assert json.loads(target.read_text(encoding="utf-8"))["type"] == "object"
    assert [p.name for p in target.parent.iterdir()] == ["spec.schema.json"]


def test_schema_to_unwritable_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    assert main(["schema", "-o", str(blocker / "spec.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"chimera: error: cannot write {blocker / 'spec.json'}: ")
    assert err.count("\n") == 1
