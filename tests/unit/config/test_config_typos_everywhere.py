"""A configuration typo is a one-line error naming the file and the key, with "did you mean",
on every surface that reads the project — ``chimera check``, the pytest plugin, ``chimera
memory``, ``skills``, ``connectors`` — not only the agent commands (issue 38, row 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.cli import main

# (file, text, the error after "chimera: error: ")
TYPOS = [
    (
        "chimera.toml",
        "[chek]\nregex_timeout = 1.0\n",
        "chimera.toml: chek: unknown key (did you mean 'check'?)",
    ),
    (
        "chimera.toml",
        '[modles]\ndefault = "openai/gpt-4o"\n',
        "chimera.toml: modles: unknown key (did you mean 'models'?)",
    ),
    (
        "chimera.toml",
        '[models]\ndefualt = "openai/gpt-4o"\n',
        "chimera.toml: models.defualt: unknown key (did you mean 'default'?)",
    ),
    (
        "pyproject.toml",
        "[tool.chimera.chek]\nregex_timeout = 1.0\n",
        "pyproject.toml: tool.chimera.chek: unknown key (did you mean 'check'?)",
    ),
    (
        # A key with no close match is refused as well, without a guess.
        "pyproject.toml",
        "[tool.chimera]\nfoo = 1\n",
        "pyproject.toml: tool.chimera.foo: unknown key",
    ),
    (
        "pyproject.toml",
        "[tool.chimera.check]\nregex_timout = 1.0\n",
        "pyproject.toml: tool.chimera.check.regex_timout: unknown key "
        "(did you mean 'regex_timeout'?)",
    ),
]
IDS = [
    "chek",
    "modles",
    "models-defualt",
    "tool-chimera-chek",
    "tool-chimera-foo",
    "check-regex_timout",
]

SPEC = "requirements:\n  - id: r\n    contains: {path: README.md, pattern: proj}\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "README.md").write_text("# proj\n")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "s.yaml").write_text(SPEC)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path


@pytest.mark.parametrize(("file", "text", "message"), TYPOS, ids=IDS)
@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--no-cache"],
        ["memory", "list"],
        ["memory", "add", "a note"],
        ["skills", "list"],
        ["playbook", "show"],
        ["connectors", "check"],
    ],
    ids=lambda a: " ".join(a),
)
def test_every_command_refuses_a_typo_in_one_line(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    file: str,
    text: str,
    message: str,
) -> None:
    (project / file).write_text(text)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == f"chimera: error: {message}\n"
    assert captured.out == ""
    assert not (project / ".chimera" / "memory.db").exists()  # refused before any write


def test_a_valid_configuration_still_runs_everywhere(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "chimera.toml").write_text(
        '[models]\ndefault = "openai/gpt-4o"\n[check]\nregex_timeout = 1.0\n'
    )
    assert main(["check", "--no-cache", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["passed"] == 1
    assert main(["memory", "list"]) == 0


@pytest.mark.parametrize(("file", "text", "message"), TYPOS, ids=IDS)
def test_the_pytest_plugin_refuses_a_typo_naming_file_and_key(
    pytester: pytest.Pytester, file: str, text: str, message: str
) -> None:
    (pytester.path / "README.md").write_text("# proj\n")
    (pytester.path / "specs").mkdir()
    (pytester.path / "specs" / "s.yaml").write_text(SPEC)
    if file == "pyproject.toml":
        text = "[tool.pytest.ini_options]\naddopts = ''\n\n" + text
    (pytester.path / file).write_text(text)
    result = pytester.runpytest_subprocess("--chimera-spec", "specs", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if "chimera" in line]
    assert errors == [f"ERROR: chimera: {message}"], result.errlines


HEAVY = ("litellm", "github", "openai", "httpx", "aiohttp", "tiktoken", "unidiff", "dotenv", "rich")
CONFTEST = """
import json, sys
from pathlib import Path

def pytest_sessionfinish(session):
    Path("modules.json").write_text(json.dumps(sorted(sys.modules)))
"""


def test_validating_every_section_on_the_plugin_path_imports_nothing_heavy(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "README.md").write_text("# proj\n")
    (pytester.path / "specs").mkdir()
    (pytester.path / "specs" / "s.yaml").write_text(SPEC)
    (pytester.path / "conftest.py").write_text(CONFTEST)
    (pytester.path / "chimera.toml").write_text(
        '[models]\ndefault = "openai/gpt-4o"\n[budget]\nusd = 1.0\n[sandbox]\nmode = "auto"\n'
    )
    result = pytester.runpytest_subprocess("--chimera-spec", "specs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    modules = json.loads((pytester.path / "modules.json").read_text())
    assert "chimera.config.model" in modules  # the whole schema was validated
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []
