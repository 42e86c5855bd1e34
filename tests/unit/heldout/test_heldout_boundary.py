"""Every way the agent could reach the held-out folder fails closed.

The tools refuse it (by name, through a symlink, by listing and searching), the sandbox
masks it (and ``.chimera/runs``, where verdicts are recorded) whatever name a command builds,
the visible checks' copies leave it out, the Spec engine will not read it for a visible
check, the Spine never packs it, and snapshots never record it. These tests need bubblewrap
and never skip: without it they fail.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.core.spine import Spine
from chimera.core.workspace import WorkspaceGuard
from chimera.errors import SandboxError
from chimera.sandbox import Sandbox
from chimera.spec.drift import check_drift
from chimera.spec.engine.options import EngineOptions
from chimera.spec.loader import load_spec
from chimera.tools import native_tools

CANARY = "HELDOUT-CANARY-5e1d"
VISIBLE = """\
requirements:
  - id: reads-it
    owner: ['**']
    contains: {path: specs-heldout/hidden.yaml, pattern: CANARY}
  - id: globs-it
    absent: {pattern: 'CANARY', paths: ['**/*.yaml'], exclude: ['specs/**']}
  - id: copies-it
    command: {run: 'cat specs-heldout/hidden.yaml'}
"""


def _workspace(tmp_path: Path) -> Path:
    """A tree with no git repository: only the hidden-path rules keep the folder out."""
    root = tmp_path / "ws"
    (root / "specs-heldout").mkdir(parents=True)
    (root / "specs-heldout" / "hidden.yaml").write_text(f"# {CANARY}\nrequirements: []\n")
    (root / "specs").mkdir()
    (root / "specs" / "v.yaml").write_text(VISIBLE)
    (root / "link.yaml").symlink_to(root / "specs-heldout" / "hidden.yaml")
    (root / "calc.py").write_text("x = 1\n")
    return root


def _hidden(root: Path) -> list[Path]:
    return [root / "specs-heldout"]


def test_every_native_tool_refuses_the_folder(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    tools = native_tools(
        root, Sandbox(root, mode="bwrap", hidden=_hidden(root)), hidden=_hidden(root)
    )
    calls = [
        ("read_file", {"path": "specs-heldout/hidden.yaml"}),
        ("read_file", {"path": "./specs-heldout/../specs-heldout/hidden.yaml"}),
        ("read_file", {"path": "link.yaml"}),
        ("list_dir", {"path": "specs-heldout"}),
        ("search", {"pattern": "CANARY", "path": "specs-heldout"}),
        ("write_file", {"path": "specs-heldout/new.yaml", "content": "requirements: []\n"}),
        ("edit_file", {"path": "specs-heldout/hidden.yaml", "old_text": "#", "new_text": "x"}),
        ("run_command", {"command": "cat specs-heldout/hidden.yaml"}),
        ("run_command", {"command": "ls", "cwd": "specs-heldout"}),
    ]
    for name, args in calls:
        result = tools.call(name, args)
        assert not result.ok, (name, args, result.output)
        assert CANARY not in result.output
        assert "held out" in result.output, (name, result.output)
    listing = tools.call("list_dir", {"path": ".", "recursive": True})
    flat = tools.call("list_dir", {"path": "."})
    for result in (listing, flat):
        assert result.ok and "specs-heldout" not in result.output
    found = tools.call("search", {"pattern": "5e1d"})
    assert found.ok and found.output == "no matches"
    assert not (root / "specs-heldout" / "new.yaml").exists()


@pytest.mark.bwrap
def test_the_sandbox_masks_it_whatever_name_a_command_builds(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    runs = root / ".chimera" / "runs" / "r1"
    runs.mkdir(parents=True)
    (runs / "heldout.jsonl").write_text(f'{{"evidence": "{CANARY}"}}\n')
    command = (
        "d=$(printf 'specs-held'; printf 'out'); cat $d/hidden.yaml; ls -la $d; cat link.yaml;"
        " cat .chimera/runs/r1/heldout.jsonl; grep -r 5e1d . ; rm -rf $d;"
        " echo planted > $d/x.yaml; echo done"
    )
    plain = Sandbox(root, mode="bwrap").run(
        "cat link.yaml .chimera/runs/r1/*", cwd=root, timeout=60
    )
    assert plain.output.count(CANARY) == 2  # the control: without the masks both are readable
    sandbox = Sandbox(root, mode="bwrap", hidden=[*_hidden(root), root / ".chimera" / "runs"])
    result = sandbox.run(command, cwd=root, timeout=60)
    assert "done" in result.output
    assert CANARY not in result.output
    assert (root / "specs-heldout" / "hidden.yaml").read_text().startswith(f"# {CANARY}")
    assert not (root / "specs-heldout" / "x.yaml").exists()


def test_held_out_paths_need_the_strict_sandbox(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    with pytest.raises(SandboxError, match="need the strict sandbox"):
        Sandbox(root, mode="scrubbed", hidden=_hidden(root))


@pytest.mark.bwrap
def test_visible_checks_never_read_it(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    spec = load_spec([root / "specs"])
    sandbox = Sandbox(root, mode="bwrap", hidden=_hidden(root))
    options = EngineOptions(hidden=(str((root / "specs-heldout").resolve()),))
    report = check_drift(spec, root, runner=sandbox, options=options).by_id()
    assert report["reads-it"].status.value == "error"
    assert "held out" in report["reads-it"].message
    # The glob never selects it; the symlink to it is refused, so `absent` fails closed.
    assert not report["globs-it"].passed and "held out" in report["globs-it"].render()
    # The visible command's copy of the tree does not hold the folder at all.
    assert not report["copies-it"].passed
    for r in report.values():
        assert CANARY not in r.render()
    # Without the option the same checks read it: the option is what keeps it out.
    plain = check_drift(spec, root, runner=Sandbox(root, mode="bwrap")).by_id()
    assert plain["reads-it"].passed


def test_the_spine_never_packs_it(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    spec = load_spec([root / "specs"])
    context = Spine(root, hidden=_hidden(root)).build(spec, None, ["reads-it"])
    assert CANARY not in context.text
    assert all("specs-heldout" not in f.path and f.path != "link.yaml" for f in context.files)
    assert CANARY in Spine(root).build(spec, None, ["reads-it"]).text


def test_snapshots_never_record_it(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    store = root / ".chimera" / "runs" / "r" / "snapshots"
    guard = WorkspaceGuard(root, store, private=_hidden(root))
    snap = guard.snapshot("before")
    (root / "calc.py").write_text("x = 2\n")
    diff = guard.diff(snap)
    assert "calc.py" in diff.text and "specs-heldout" not in diff.text
    guard.restore(snap)
    assert (root / "calc.py").read_text() == "x = 1\n"
    assert (root / "specs-heldout" / "hidden.yaml").exists()
    objects = subprocess.run(
        ["grep", "-r", "-c", CANARY, str(store)], capture_output=True, text=True, check=False
    )
    assert objects.returncode == 1, objects.stdout  # git stores blobs zlib-compressed, so also
    listed = subprocess.run(
        ["git", "--git-dir", str(store / "git"), "rev-list", "--all", "--objects"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "specs-heldout" not in listed.stdout and "hidden.yaml" not in listed.stdout
