"""The ``chimera`` dispatcher: subcommand discovery, --version, one-line errors, light imports."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from chimera import __version__
from chimera.cli import EXIT_INTERNAL, build_parser, main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"chimera {__version__}\n"


def test_subcommands_register_themselves() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {"check", "init", "schema"} <= set(sub.choices)


def test_help_lists_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("check", "init", "schema"):
        assert name in out


def test_no_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("chimera: error: a command is required (")
    listed = captured.err.split("(", 1)[1].split(")", 1)[0].split(", ")
    assert {"check", "init", "schema"} <= set(listed)
    assert listed == sorted(listed)
    assert captured.err.count("\n") == 1


@pytest.mark.parametrize(
    "argv",
    [["frobnicate"], ["check", "--no-such-option"], ["check", "--max-evidence", "many"]],
)
def test_usage_errors_are_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("chimera: error: ")
    assert captured.err.count("\n") == 1
    assert "Traceback" not in captured.err


def test_internal_error_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import chimera.spec.drift as drift

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("engine exploded")

    monkeypatch.delenv("CHIMERA_DEBUG", raising=False)
    monkeypatch.setattr(drift.DriftSession, "report", explode)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(
        "requirements:\n  - id: a\n    contains: {path: README.md, pattern: x}\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err == (
        "chimera: internal error: RuntimeError: engine exploded "
        "(set CHIMERA_DEBUG=1 for the traceback)\n"
    )


def test_console_script_runs(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "chimera"
    if not script.exists():
        pytest.skip("the chimera console script is not installed next to this interpreter")
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    assert proc.stdout == f"chimera {__version__}\n"


def test_cli_imports_nothing_heavy() -> None:
    code = (
        "import json, sys\n"
        "from chimera.cli import build_parser\n"
        "build_parser()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    modules = set(json.loads(out))
    heavy = {"litellm", "github", "openai", "httpx", "pydantic", "yaml", "regex", "pathspec"}
    assert {m.split(".")[0] for m in modules} & heavy == set()


def test_every_json_flag_promises_one_json_object() -> None:
    # One convention (issue 38, row 9): `--json` prints one JSON object, never JSON Lines.
    import argparse

    from chimera.cli import build_parser

    def walk(parser: argparse.ArgumentParser, prog: str) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += walk(sub, f"{prog} {name}")
            elif "--json" in action.option_strings:
                found.append((prog, str(action.help or "")))
        return found

    flags = walk(build_parser(), "chimera")
    assert len(flags) > 10
    lines = [(prog, text) for prog, text in flags if "per line" in text or "lines" in text]
    assert lines == []
