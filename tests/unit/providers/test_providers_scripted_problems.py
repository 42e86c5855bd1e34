"""A scripted-model file reports every problem in one pass, each at file:line:col, an unknown
key with "did you mean" (issue 38, row 10), and the CLI prints one line per problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.cli import main
from chimera.errors import ConfigError
from chimera.providers.scripted import ScriptedBackend

SCRIPT = """\
turns:
  - purpose: plann
    txt: hello
  - tool_calls:
      - nme: write_file
        arguments: {}
    usage: {prompt_token: 3}
"""

PROBLEMS = [
    "2:14: turns.0.purpose: Input should be 'act', 'plan', 'review', 'replan', 'summarize' "
    "or 'memory'",
    "3:5: turns.0.txt: unknown field; did you mean 'text'?",
    "5:9: turns.1.tool_calls.0.nme: unknown field; did you mean 'name'?",
    "7:13: turns.1.usage.prompt_token: unknown field; did you mean 'prompt_tokens'?",
]


def test_every_problem_of_a_script_in_one_pass(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(SCRIPT)
    with pytest.raises(ConfigError) as info:
        ScriptedBackend.from_file(path)
    problems = getattr(info.value, "problems", None)
    assert problems is not None
    assert [str(p) for p in problems] == [f"{path}:{p}" for p in PROBLEMS]
    assert str(info.value) == f"{path}:{PROBLEMS[0]} (and 3 more)"


def test_a_bare_list_script_is_located_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text("- text: a\n- txt: b\n  purpose: acts\n")
    with pytest.raises(ConfigError) as info:
        ScriptedBackend.from_file(path)
    assert [str(p) for p in getattr(info.value, "problems", [])] == [
        f"{path}:2:3: turns.1.txt: unknown field; did you mean 'text'?",
        f"{path}:3:12: turns.1.purpose: Input should be 'act', 'plan', 'review', 'replan', "
        "'summarize' or 'memory'",
    ]


def test_the_cli_prints_one_line_per_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "s.yaml").write_text(
        "requirements:\n  - id: r\n    contains: {path: script.yaml, pattern: turns}\n"
    )
    path = tmp_path / "script.yaml"
    path.write_text(SCRIPT)
    code = main(["solve", "x", "--root", str(tmp_path), "--model", f"scripted:{path}"])
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [f"chimera: error: {path}:{p}" for p in PROBLEMS]
