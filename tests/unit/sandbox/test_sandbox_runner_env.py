"""The GitHub runner's tokens and command files never reach the sandbox (the trust chain)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from chimera.errors import SandboxError
from chimera.sandbox import Sandbox, build_env, bwrap_available, probe_bwrap
from chimera.sandbox.layout import RUNNER_FILE_VARS

RUNNER_VARS = {
    "GITHUB_TOKEN": "ghs_runnertoken0001",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-request-token-0002",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.example/0003",
    "ACTIONS_RUNTIME_TOKEN": "runtime-token-0004",
    "GITHUB_REPOSITORY": "owner/repo",
    "RUNNER_NAME": "hosted-0005",
}

OPEN_EACH = textwrap.dedent(
    """
    import json, os, sys
    paths = json.loads(sys.argv[1])
    for name, path in paths.items():
        try:
            with open(path, "rb") as handle:
                handle.read(1)
            print(name, "OPENED")
        except IsADirectoryError:
            try:
                os.listdir(path)
                print(name, "LISTED")
            except OSError as exc:
                print(name, "REFUSED", exc.errno)
        except OSError as exc:
            print(name, "REFUSED", exc.errno)
    print("ENV", json.dumps(sorted(k for k in os.environ
                                   if k.startswith(("GITHUB_", "ACTIONS_", "RUNNER_")))))
    """
)


def test_runner_names_cannot_be_allowlisted() -> None:
    for name in ("GITHUB_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "RUNNER_TEMP", "github_x"):
        with pytest.raises(SandboxError, match="cannot be passed into the sandbox"):
            build_env([name], source={})


def test_no_runner_variable_reaches_the_scrubbed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in RUNNER_VARS.items():
        monkeypatch.setenv(name, value)
    sandbox = Sandbox(tmp_path, mode="scrubbed")
    # Not even as a per-command override.
    env = sandbox.environment({"GITHUB_TOKEN": "x", "PATH": "/usr/bin:/bin"})
    assert not [k for k in env if k.startswith(("GITHUB_", "ACTIONS_", "RUNNER_"))]
    res = sandbox.run(
        [sys.executable, "-c", "import os; print(dict(os.environ))"], cwd=tmp_path, timeout=30
    )
    for value in RUNNER_VARS.values():
        assert value not in res.output


def _runner_files(base: Path) -> dict[str, Path]:
    temp = base / "_temp"
    commands = temp / "_runner_file_commands"
    commands.mkdir(parents=True)
    paths = {"RUNNER_TEMP": temp}
    for name in RUNNER_FILE_VARS:
        if name != "RUNNER_TEMP":
            paths[name] = commands / f"{name.lower()}_0001"
            paths[name].write_text("runner command file\n", encoding="utf-8")
    return paths


@pytest.mark.bwrap
@pytest.mark.skipif(not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}")
@pytest.mark.parametrize("where", ["beside", "inside"])
def test_runner_files_cannot_be_opened_even_for_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """``beside``: the runner's layout (``_temp`` next to the checkout, under the home
    folder); ``inside``: the files lie under the workspace itself, so they must be masked."""
    ws = tmp_path / "work" / "repo"
    ws.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    paths = _runner_files(ws if where == "inside" else tmp_path / "work")
    for name, path in paths.items():
        monkeypatch.setenv(name, str(path))
    for name, value in RUNNER_VARS.items():
        monkeypatch.setenv(name, value)
    (ws / "open.py").write_text(OPEN_EACH, encoding="utf-8")
    arg = json.dumps({k: str(v) for k, v in paths.items()})
    res = Sandbox(ws).run([sys.executable, "open.py", arg], cwd=ws, timeout=30)
    assert res.ok, res.output
    for name in RUNNER_FILE_VARS:
        assert f"{name} REFUSED" in res.output, res.output
    assert "ENV []" in res.output, res.output
    for value in RUNNER_VARS.values():
        assert value not in res.output
    # Untouched on the host, and really there (the probe is not vacuous).
    for name, path in paths.items():
        if name != "RUNNER_TEMP":
            assert path.read_text(encoding="utf-8") == "runner command file\n"
