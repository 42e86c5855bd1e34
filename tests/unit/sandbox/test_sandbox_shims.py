"""Commands behind version-manager shims run inside the real bubblewrap sandbox, and a
command missing inside but present outside is explained in one line (issue 38, row 3).

A fake home holds fake managers shaped like the real ones: a pyenv-like one (``shims/`` of
scripts that exec the manager in ``libexec/``, which reads ``version`` and runs
``versions/V/bin/TOOL``) and a mise-like one (``shims/`` of symlinks to a ``mise`` binary
outside ``PATH``, reading the global ``~/.tool-versions``). These are boundary tests: they
need bubblewrap and never skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chimera.sandbox import Sandbox
from chimera.sandbox.shims import manager_paths, missing_program_note

pytestmark = pytest.mark.bwrap

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)
    return path


def pyenv_like(home: Path) -> Path:
    """``~/.fakeenv``: shims/greet -> libexec/fakeenv exec greet -> versions/1.0/bin/greet."""
    root = home / ".fakeenv"
    script(
        root / "versions" / "1.0" / "bin" / "greet",
        'echo "greet 1.0 says $*"\n',
    )
    (root / "version").write_text("1.0\n")
    script(
        root / "libexec" / "fakeenv",
        f'v=$(cat "{root}/version")\nshift\nprog="$1"\nshift\n'
        f'exec "{root}/versions/$v/bin/$prog" "$@"\n',
    )
    script(root / "shims" / "greet", f'exec "{root}/libexec/fakeenv" exec greet "$@"\n')
    return root / "shims"


def mise_like(home: Path) -> Path:
    """``~/.local/share/mise/shims/hello`` -> ``~/.local/bin/mise`` (not on PATH), which reads
    ``~/.tool-versions`` and runs ``installs/hello/V/bin/hello``."""
    data = home / ".local" / "share" / "mise"
    script(data / "installs" / "hello" / "2.5" / "bin" / "hello", 'echo "hello 2.5"\n')
    binary = script(
        home / ".local" / "bin" / "mise",
        'tool="${0##*/}"\n'
        'v=$(sed -n "s/^$tool //p" "$HOME/.tool-versions")\n'
        f'exec "{data}/installs/$tool/$v/bin/$tool" "$@"\n',
    )
    (home / ".tool-versions").write_text("hello 2.5\n")
    (data / "shims").mkdir(parents=True)
    (data / "shims" / "hello").symlink_to(binary)
    # The global mise configuration may hold [env] secrets: never shown.
    (home / ".config" / "mise").mkdir(parents=True)
    (home / ".config" / "mise" / "config.toml").write_text('[env]\nTOKEN = "s3cret"\n')
    return data / "shims"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home" / "me"
    home.mkdir(parents=True)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def test_a_pyenv_like_shim_runs_inside_the_sandbox(
    home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shims = pyenv_like(home)
    monkeypatch.setenv("PATH", f"{shims}:{SYSTEM_PATH}")
    result = Sandbox(workspace, mode="bwrap").run("greet -q", cwd=workspace, timeout=60)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "greet 1.0 says -q"


def test_a_mise_like_shim_runs_inside_the_sandbox_without_its_configuration(
    home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shims = mise_like(home)
    monkeypatch.setenv("PATH", f"{shims}:{SYSTEM_PATH}")
    sandbox = Sandbox(workspace, mode="bwrap")
    result = sandbox.run("hello", cwd=workspace, timeout=60)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "hello 2.5"
    # Shown read-only, and nothing else of the home folder is.
    probe = sandbox.run(
        "echo x >> ~/.tool-versions; echo x > ~/.local/share/mise/new; "
        "cat ~/.config/mise/config.toml; cat ~/.ssh/id_ed25519; echo $(ls -A ~)",
        cwd=workspace,
        timeout=60,
    )
    assert "s3cret" not in probe.output and "PRIVATE" not in probe.output
    assert "Read-only file system" in probe.output
    assert (home / ".tool-versions").read_text() == "hello 2.5\n"
    assert not (home / ".local" / "share" / "mise" / "new").exists()
    listed = probe.output.strip().splitlines()[-1].split()
    assert sorted(listed) == [".local", ".tool-versions"], probe.output


def test_a_program_missing_inside_but_present_outside_is_explained_in_one_line(
    home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ~/bin is on PATH (shown), but its program is a link into ~/opt (not shown).
    real = script(home / "opt" / "tool" / "bin" / "tool", "echo tool\n")
    (home / "bin").mkdir()
    (home / "bin" / "tool").symlink_to(real)
    monkeypatch.setenv("PATH", f"{home / 'bin'}:{SYSTEM_PATH}")
    result = Sandbox(workspace, mode="bwrap").run("tool --version", cwd=workspace, timeout=60)
    assert result.exit_code == 127
    notes = [line for line in result.output.splitlines() if line.startswith("chimera: ")]
    assert notes == [
        f"chimera: 'tool' is not found inside the sandbox but is outside ({home}/bin/tool "
        f"-> {real}): it lies under the home folder, which is empty inside the sandbox (only "
        "PATH's bin folders and version managers' shims folders are shown); put the folder "
        "that holds it on PATH (PATH's folders are shown read-only), or install it outside "
        "the home folder"
    ]


def test_a_program_missing_everywhere_gets_no_note(
    home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    result = Sandbox(workspace, mode="bwrap").run("no-such-tool-xyz", cwd=workspace, timeout=60)
    assert result.exit_code == 127
    assert "chimera:" not in result.output


def test_manager_paths_show_the_managers_never_the_home_or_the_workspace(
    home: Path, tmp_path: Path
) -> None:
    shims = pyenv_like(home)
    mise = mise_like(home)
    workspace = home / "code" / "proj"
    workspace.mkdir(parents=True)
    (home / "code" / "shims").mkdir()  # a folder above the workspace named shims
    path_env = os.pathsep.join([str(shims), str(mise), str(home / "code" / "shims"), "/usr/bin"])
    found = manager_paths(home=home, workspace=workspace, path_env=path_env)
    assert found == (
        home / ".fakeenv",
        home / ".local" / "share" / "mise",
        home / ".local" / "bin",
        home / ".tool-versions",
    )
    assert manager_paths(home=None, workspace=workspace, path_env=path_env) == ()


def test_the_note_names_a_missing_path_a_shim_reported(home: Path) -> None:
    manager = script(home / ".pyenv" / "libexec" / "pyenv", "exit 0\n")
    output = f"{home}/.pyenv/shims/python3: line 12: {manager}: No such file or directory\n"
    note = missing_program_note(
        "python3 -m unittest -q", output, home=home, shown=[], path_env="/usr/bin"
    )
    assert note is not None
    assert note.startswith(f"chimera: '{manager}' is not found inside the sandbox but is outside")
