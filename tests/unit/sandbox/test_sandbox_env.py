"""The sandbox environment is an allowlist: unknown names never pass, whatever they are called."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.errors import SandboxError
from chimera.sandbox import DEFAULT_ALLOW, Sandbox, build_env


def test_build_env_keeps_only_allowlisted_names() -> None:
    source = {
        "PATH": "/usr/bin",
        "HOME": "/home/x",
        "PYTHONHASHSEED": "0",
        "VIRTUAL_ENV": "/venv",
        "GITHUB_TOKEN": "ghp_secret",
        "OPENAI_API_KEY": "sk-secret",
        "CHIMERA_TEST_SECRET_unusual_name": "s3cr3t",
        "PYTHON_API_KEY": "looks-pythonic-but-is-not-allowlisted",
    }
    env = build_env((), source=source)
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/home/x",
        "PYTHONHASHSEED": "0",
        "VIRTUAL_ENV": "/venv",
    }


def test_build_env_adds_configured_names() -> None:
    env = build_env(["MY_TOOL_HOME"], source={"MY_TOOL_HOME": "/opt/t", "OTHER": "x"})
    assert env == {"MY_TOOL_HOME": "/opt/t"}


def test_default_allowlist_names_the_usual_variables() -> None:
    for name in ("PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ", "PYTHONPATH"):
        assert name in DEFAULT_ALLOW
    assert not any("*" in name for name in DEFAULT_ALLOW)


@pytest.mark.parametrize("bad", ["GITHUB_*", "", "A-B", "1ABC", "X Y"])
def test_globs_and_non_names_are_refused(bad: str) -> None:
    with pytest.raises(SandboxError, match="not an environment variable name"):
        build_env([bad], source={})


def test_per_command_env_cannot_widen_the_allowlist(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path, mode="scrubbed")
    env = sandbox.environment({"PYTHONPATH": "/extra", "AWS_SECRET_ACCESS_KEY": "nope"})
    assert env["PYTHONPATH"] == "/extra"
    assert "AWS_SECRET_ACCESS_KEY" not in env
