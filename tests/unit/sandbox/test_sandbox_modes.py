"""Sandbox modes, fallback and the scrubbed (weaker) mode's guarantees."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chimera.errors import RunnerError, SandboxError
from chimera.runner import CommandRunner
from chimera.sandbox import Sandbox, probe_bwrap

SECRET = "s3cr3t-value-scrubbed-77e1"


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A PATH without bubblewrap (the probe is cached per process, so reset it around)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    probe_bwrap.cache_clear()
    yield
    probe_bwrap.cache_clear()


def test_bwrap_mode_without_bubblewrap_is_an_error(no_bwrap: None, tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="bubblewrap not found"):
        Sandbox(tmp_path, mode="bwrap")


def test_auto_fails_closed_without_bubblewrap(no_bwrap: None, tmp_path: Path) -> None:
    with pytest.raises(SandboxError) as caught:
        Sandbox(tmp_path, mode="auto")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("the strict sandbox cannot start: bubblewrap not found;")
    assert 'mode = "scrubbed"' in message  # the loud opt-out is named


def test_scrubbed_is_the_opt_out_and_says_weaker(no_bwrap: None, tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path, mode="scrubbed")
    assert sandbox.mode == "scrubbed"
    assert sandbox.weaker
    assert sandbox.describe().startswith("scrubbed environment only (requested): weaker")
    assert isinstance(sandbox, CommandRunner)
    info = sandbox.info()
    assert not info.strict
    assert "not isolated" in info.markdown()


def test_scrubbed_child_does_not_inherit_a_secret(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CHIMERA_TEST_SECRET_scrub", SECRET)
    monkeypatch.setenv("PYTHONHASHSEED", "7")
    sandbox = Sandbox(tmp_path, mode="scrubbed")
    result = sandbox.run(
        [sys.executable, "-c", "import os, json; print(json.dumps(dict(os.environ)))"],
        cwd=tmp_path,
        timeout=30,
    )
    assert result.ok, result.output
    assert result.mode == "scrubbed"
    assert SECRET not in result.output
    assert '"PYTHONHASHSEED": "7"' in result.output


def test_scrubbed_mode_is_really_weaker_parent_environ_is_readable(
    tmp_path: Path, secret_probe: Callable[[Path, str], str]
) -> None:
    """The reason the scrubbed mode is reported as weaker, shown rather than asserted."""
    result = secret_probe(tmp_path, "scrubbed")
    assert "FOUND" in result, result


def test_cwd_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sandbox = Sandbox(workspace, mode="scrubbed")
    with pytest.raises(SandboxError, match="outside the workspace"):
        sandbox.run("true", cwd=tmp_path, timeout=5)
    with pytest.raises(SandboxError, match="outside the workspace"):
        sandbox.run("true", cwd=workspace / "..", timeout=5)


def test_missing_executable_is_a_runner_error(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path, mode="scrubbed")
    with pytest.raises(RunnerError):
        sandbox.run(["/nonexistent/binary"], cwd=tmp_path, timeout=5)


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="not a directory"):
        Sandbox(tmp_path / "missing")
    with pytest.raises(SandboxError, match="filesystem root"):
        Sandbox(Path("/"))
    with pytest.raises(SandboxError, match="unknown sandbox mode"):
        Sandbox(tmp_path, mode="docker")  # type: ignore[arg-type]  # deliberately unknown
    with pytest.raises(SandboxError, match="outside the workspace"):
        Sandbox(tmp_path / ".", mode="scrubbed", read_only_paths=[Path("..")])
    with pytest.raises(SandboxError, match="does not exist"):
        Sandbox(tmp_path, mode="scrubbed", read_only_paths=[Path("nope")])
    with pytest.raises(SandboxError, match="not a directory"):
        Sandbox(tmp_path, mode="scrubbed", extra_writable=[tmp_path / "nope"])
