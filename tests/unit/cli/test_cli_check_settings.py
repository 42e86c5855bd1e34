"""``[tool.chimera.check]``: the file-size and regex time limits are settings, honoured by
``chimera check`` and the pytest plugin alike, with the documented defaults."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.config import load_config
from chimera.errors import ConfigError
from chimera.spec.engine import EngineOptions
from chimera.spec.settings import CheckSettings, engine_options, load_check_settings

BIG_SPEC = """\
requirements:
  - id: no-secret
    absent: {path: data.txt, pattern: secret}
"""

SLOW_SPEC = """\
requirements:
  - id: no-runaway
    absent: {path: evil.txt, pattern: '(a+)+(?=$)'}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "specs").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path


def test_defaults_are_the_documented_limits(tmp_path: Path) -> None:
    settings = load_check_settings(tmp_path)
    assert settings == CheckSettings(max_file_bytes=8 * 1024 * 1024, regex_timeout=2.0)
    options = engine_options(settings)
    assert (options.max_file_bytes, options.pattern_timeout_s) == (8 * 1024 * 1024, 2.0)
    assert options == EngineOptions()
    docs = Path(__file__).resolve().parents[3] / "docs"
    guide = (docs / "how-to" / "configure.md").read_text(encoding="utf-8")
    assert "[tool.chimera.check]" in guide
    assert "max_file_bytes = 8388608" in guide and "regex_timeout = 2.0" in guide
    reference = (docs / "reference" / "configuration.md").read_text(encoding="utf-8")
    assert "| `max_file_bytes` | `int` | `8388608` |" in reference
    assert "| `regex_timeout` | `float` | `2.0` |" in reference


def test_max_file_bytes_is_applied(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "specs" / "s.yaml").write_text(BIG_SPEC, encoding="utf-8")
    (project / "data.txt").write_text("x" * 2000 + "\n", encoding="utf-8")
    assert run(capsys, "check")[0] == 0
    (project / "pyproject.toml").write_text(
        "[tool.chimera.check]\nmax_file_bytes = 1024\n", encoding="utf-8"
    )
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "data.txt (over the size limit (2.0 KiB > 1.0 KiB))" in out


def test_regex_timeout_is_applied(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "specs" / "s.yaml").write_text(SLOW_SPEC, encoding="utf-8")
    (project / "evil.txt").write_text("a" * 30000 + "b\n", encoding="utf-8")
    (project / "chimera.toml").write_text("[check]\nregex_timeout = 0.05\n", encoding="utf-8")
    started = time.monotonic()
    code, out, _ = run(capsys, "check")
    elapsed = time.monotonic() - started
    assert code == 1
    assert "timed out" in out
    assert elapsed < 1.5, elapsed  # the default (2 s) could not finish this fast


def test_a_bad_setting_is_one_line_with_file_and_key(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "specs" / "s.yaml").write_text(BIG_SPEC, encoding="utf-8")
    (project / "pyproject.toml").write_text(
        "[tool.chimera.check]\nregex_timeout = 0\n", encoding="utf-8"
    )
    code, out, err = run(capsys, "check")
    assert (code, out) == (2, "")
    assert err == (
        "chimera: error: pyproject.toml: tool.chimera.check.regex_timeout: "
        "Input should be greater than 0\n"
    )
    code, out, _ = run(capsys, "check", "--json")
    assert code == 2
    assert json.loads(out)["errors"][0]["message"].startswith("pyproject.toml: tool.chimera")
    (project / "pyproject.toml").write_text(
        "[tool.chimera.check]\nmax_bytes = 1\n", encoding="utf-8"
    )
    assert run(capsys, "check")[2] == (
        "chimera: error: pyproject.toml: tool.chimera.check.max_bytes: unknown key "
        "(did you mean 'max_file_bytes'?)\n"
    )


def test_the_whole_configuration_knows_the_section(tmp_path: Path) -> None:
    (tmp_path / "chimera.toml").write_text("[check]\nmax_file_bytes = 4096\n", encoding="utf-8")
    assert load_config(tmp_path).check.max_file_bytes == 4096
    (tmp_path / "chimera.toml").write_text("[check]\nmax_file_byte = 4096\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"check\.max_file_byte: unknown key"):
        load_config(tmp_path)


def test_the_plugin_applies_the_same_settings(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", **{"specs/s": BIG_SPEC})
    pytester.makefile(".txt", data="x" * 2000)
    pytester.makefile(".toml", chimera="[check]\nmax_file_bytes = 1024\n")
    result = pytester.runpytest("--chimera-spec", "specs", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*data.txt (over the size limit (2.0 KiB > 1.0 KiB))*"])
    pytester.makefile(".toml", chimera="[check]\nmax_file_bytes = -1\n")
    bad = pytester.runpytest("--chimera-spec", "specs", "-p", "no:cacheprovider")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*chimera.toml: check.max_file_bytes: Input should be greater*"])


def test_the_configuration_guide_example_is_a_valid_chimera_toml(tmp_path: Path) -> None:
    page = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "configure.md"
    section = page.read_text(encoding="utf-8")
    block = section.split("```toml\n", 1)[1].split("```", 1)[0]
    assert block.startswith("# chimera.toml\n")
    (tmp_path / "chimera.toml").write_text(block, encoding="utf-8")
    config = load_config(tmp_path)
    assert config.check == CheckSettings()  # the example shows the defaults
    assert load_check_settings(tmp_path) == config.check
    assert config.models.default == "anthropic/claude-sonnet-4-5"
