"""The replay of ``chimera check``: an unchanged re-check prints the stored output of the last
run, and every change of an input it depends on runs the check again.

Each run is a real process (the replay is keyed on whether stdout is a terminal and on the
interpreter) in a real git repository; a probe file written by the child after ``main``
returns says which heavy modules it imported: a replayed run imports neither the Spec loader
nor pydantic.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chimera.cli._replay import parse_check_argv
from chimera.spec.engine.cache import code_stamp

SPEC = """\
requirements:
  - id: widget-class
    title: The app defines Widget
    defines: {path: src/app.py, symbol: Widget, kind: class}

  - id: no-todo
    title: No TODO is left in the sources
    absent: {pattern: 'TODO', paths: ['src/**/*.py']}

  - id: readme-mentions-app
    contains: {path: README.md, pattern: app}
"""

APP = "class Widget:\n    pass  # TODO\n"

DRIVER = """\
import os, sys
from chimera.cli import main
status = main(sys.argv[1:])
heavy = [m for m in ("pydantic", "yaml", "chimera.spec.loader", "argparse") if m in sys.modules]
with open(os.environ["REPLAY_PROBE"], "w") as probe:
    probe.write(" ".join(heavy) or "replayed")
sys.exit(status)
"""


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


class Run:
    def __init__(self, proc: subprocess.CompletedProcess[str], probe: str) -> None:
        self.status = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.replayed = probe == "replayed"
        self.probe = probe


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(APP, encoding="utf-8")
    (root / "src" / "util.py").write_text("def helper():\n    return 1\n", encoding="utf-8")
    (root / "README.md").write_text("# app\n", encoding="utf-8")
    (root / "specs").mkdir()
    (root / "specs" / "app.yaml").write_text(SPEC, encoding="utf-8")
    (root / "pyproject.toml").write_text("[tool.chimera.check]\nregex_timeout = 5.0\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def check(
    root: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Run:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("CHIMERA_") and k not in ("GITHUB_WORKSPACE", "NO_COLOR")
    }
    probe = root.parent / "probe.txt"
    clean["REPLAY_PROBE"] = str(probe)
    clean.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, "check", *args],
        cwd=cwd or root,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return Run(proc, probe.read_text(encoding="utf-8"))


def normal(text: str) -> str:
    """``text`` with the summary's elapsed seconds and ``--json`` durations normalised."""
    if text.startswith("{"):
        doc = json.loads(text)
        for item in doc.get("results", []):
            item["duration_s"] = 0.0
        return json.dumps(doc)
    return re.sub(r" in \d+\.\d\ds", " in Xs", text)


def replays(root: Path) -> list[Path]:
    return sorted((root / ".chimera" / "cache").glob("replay-*.json"))


def warm_then_replay(root: Path, *args: str, cwd: Path | None = None) -> Run:
    """A first run (stores the replay), then a second one that must replay it."""
    first = check(root, *args, cwd=cwd)
    assert not first.replayed
    second = check(root, *args, cwd=cwd)
    assert second.replayed, second.probe
    assert (second.status, normal(second.out), second.err) == (
        first.status,
        normal(first.out),
        first.err,
    )
    return second


# --------------------------------------------------------------------------- output


@pytest.mark.parametrize("args", [(), ("--json",), ("--format", "github")])
def test_a_replay_prints_what_a_normal_warm_run_prints(repo: Path, args: tuple[str, ...]) -> None:
    replayed = warm_then_replay(repo, *args)
    for path in replays(repo):
        path.unlink()
    warm = check(repo, *args)  # answered by the report cache, through the normal path
    assert not warm.replayed
    assert replayed.status == warm.status == 1
    assert normal(replayed.out) == normal(warm.out)
    assert replayed.err == warm.err
    if args == ("--json",):
        assert all(r["duration_s"] == 0.0 for r in json.loads(replayed.out)["results"])
    else:
        assert re.search(r"1 failed, 2 passed in \d+\.\d\ds\n", replayed.out)


def test_the_default_root_line_is_printed_by_the_replay_too(repo: Path) -> None:
    replayed = warm_then_replay(repo, cwd=repo / "src")
    assert (
        replayed.err
        == f"chimera: checking {repo} (the nearest directory with specs/; --root sets it)\n"
    )


def test_a_replay_imports_neither_pydantic_nor_the_spec(repo: Path) -> None:
    warm_then_replay(repo)
    run = check(repo)
    assert run.probe == "replayed"  # not pydantic, yaml, the loader, nor argparse
    first = check(repo, "--no-cache")
    assert "pydantic" in first.probe.split()  # the probe can see them when they are imported


def test_a_green_tree_replays_status_zero(repo: Path) -> None:
    (repo / "src" / "app.py").write_text("class Widget:\n    pass\n", encoding="utf-8")
    assert warm_then_replay(repo).status == 0


# --------------------------------------------------------------------------- misses


def test_an_edit_is_seen(repo: Path) -> None:
    warm_then_replay(repo)
    (repo / "src" / "app.py").write_text("class Widget:\n    pass  # DONE\n", encoding="utf-8")
    run = check(repo)
    assert not run.replayed and run.status == 0


def test_a_new_untracked_file_is_seen(repo: Path) -> None:
    (repo / "src" / "app.py").write_text("class Widget:\n    pass\n", encoding="utf-8")
    warm_then_replay(repo)
    (repo / "src" / "new.py").write_text("# TODO later\n", encoding="utf-8")
    run = check(repo)
    assert not run.replayed and run.status == 1
    assert "src/new.py:1:3" in run.out


def test_a_deleted_file_is_seen(repo: Path) -> None:
    warm_then_replay(repo)
    (repo / "src" / "app.py").unlink()
    run = check(repo)
    assert not run.replayed and run.status == 1
    assert "failed  widget-class" in run.out


def test_a_renamed_file_is_seen(repo: Path) -> None:
    warm_then_replay(repo)
    (repo / "src" / "app.py").rename(repo / "src" / "app2.py")
    run = check(repo)
    assert not run.replayed
    assert "failed  widget-class" in run.out and "src/app2.py" in run.out


def test_a_touched_but_unchanged_file_still_replays(repo: Path) -> None:
    warm_then_replay(repo)
    path = repo / "src" / "app.py"
    path.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    os.utime(path, (time.time() + 5, time.time() + 5))
    assert check(repo).replayed


def test_a_spec_edit_is_seen(repo: Path) -> None:
    warm_then_replay(repo)
    spec = repo / "specs" / "app.yaml"
    spec.write_text(SPEC.replace("'TODO'", "'FIXME'"), encoding="utf-8")
    run = check(repo)
    assert not run.replayed and run.status == 0


def test_a_new_spec_file_is_seen(repo: Path) -> None:
    warm_then_replay(repo)
    (repo / "specs" / "more.yaml").write_text(
        "requirements:\n  - id: util\n    contains: {path: src/util.py, pattern: nope}\n"
    )
    run = check(repo)
    assert not run.replayed and "failed  util" in run.out


def test_a_config_edit_is_seen_even_a_comment(repo: Path) -> None:
    warm_then_replay(repo)
    (repo / "pyproject.toml").write_text("[tool.chimera.check]\nregex_timeout = 5.0  # x\n")
    assert not check(repo).replayed
    (repo / "chimera.toml").write_text("[check]\nregex_timeout = 5.0\n")
    run = check(repo)  # configuration in both files: an error, never a replay
    assert not run.replayed and run.status == 2


def test_the_environment_that_changes_rendering_is_keyed(repo: Path) -> None:
    warm_then_replay(repo)
    assert not check(repo, env={"NO_COLOR": "1"}).replayed
    assert not check(repo, env={"FORCE_COLOR": "1"}).replayed
    colored = check(repo, env={"FORCE_COLOR": "1"})
    assert colored.replayed and "\x1b[" in colored.out


def test_other_arguments_are_other_replays(repo: Path) -> None:
    warm_then_replay(repo)
    only = check(repo, "--only", "readme-mentions-app")
    assert not only.replayed and only.status == 0
    assert not check(repo, "--max-evidence", "1").replayed
    assert check(repo, "--only", "readme-mentions-app").replayed
    assert len(replays(repo)) == 3


def test_no_cache_never_replays(repo: Path) -> None:
    warm_then_replay(repo)
    assert not check(repo, "--no-cache").replayed
    assert not check(repo, env={"CHIMERA_NO_CACHE": "1"}).replayed


def test_a_command_requirement_is_never_replayed(repo: Path) -> None:
    log = repo.parent / "ran.log"
    with (repo / "specs" / "app.yaml").open("a", encoding="utf-8") as handle:
        handle.write(f"\n  - id: logs\n    command: {{run: 'echo ran >> {log}'}}\n")
    for _ in range(3):
        run = check(repo)
        assert not run.replayed and "passed  logs" in run.out
    assert log.read_text(encoding="utf-8") == "ran\n" * 3
    assert replays(repo) == []


# --------------------------------------------------------------------------- trust


def _forge(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["record"] = {"taken": 0, "listing": None, "resolved": {}, "files": {}}
    doc["stdout"] = ["all green in ", "s\n"]
    doc["status"] = 0
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_a_committed_forged_replay_is_refused(repo: Path) -> None:
    assert check(repo).status == 1
    (entry,) = replays(repo)
    _forge(entry)
    forged = check(repo)  # uncommitted: the forgery works, so the refusal below is what matters
    assert forged.replayed and forged.status == 0
    git(repo, "add", "-f", str(entry.relative_to(repo)))
    git(repo, "commit", "-qm", "forged cache entry")
    run = check(repo)
    assert not run.replayed and run.status == 1
    assert "FAILED no-todo" in run.out


def _project_in(outer: Path, folder: str, *, top_files: bool = True) -> Path:
    """The fixture's project copied into ``outer/folder`` (the repository ``outer`` tracks
    ``README.md`` only); ``top_files=False`` leaves out the files directly in the folder."""
    root = outer / folder
    files = {"src/app.py": APP, "src/util.py": "def helper():\n    return 1\n"}
    files["specs/app.yaml"] = SPEC
    if top_files:
        files["README.md"] = "# app\n"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def outer(tmp_path: Path) -> Path:
    root = tmp_path / "outer"
    root.mkdir()
    (root / "README.md").write_text("outer\n", encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "outer")
    return root


def test_a_forged_replay_in_an_untracked_folder_is_refused(outer: Path) -> None:
    """``tar xf third-party.tgz; chimera check --root third-party/``: the archive's own replay
    entry is not believed (the folder is not the repository's tracked content)."""
    root = _project_in(outer, "third-party")
    git(outer, "add", "third-party")
    git(outer, "commit", "-qm", "vendored")
    assert check(root, "--root", str(root)).status == 1
    (entry,) = replays(root)
    _forge(entry)
    forged = check(root, "--root", str(root))  # tracked: the forgery is live
    assert forged.replayed and forged.status == 0
    git(outer, "rm", "-r", "-q", "--cached", "third-party")
    git(outer, "commit", "-qm", "unvendored: the files stay, untracked")
    run = check(root, "--root", str(root))
    assert not run.replayed and run.status == 1
    assert "FAILED no-todo" in run.out


@pytest.mark.parametrize("top_files", [True, False], ids=["nested-project", "subdirs-only"])
def test_a_tracked_nested_folder_replays(outer: Path, top_files: bool) -> None:
    root = _project_in(outer, "proj", top_files=top_files)
    git(outer, "add", "-A")
    git(outer, "commit", "-qm", "project")
    warm_then_replay(root, "--root", str(root))


def test_a_corrupt_replay_falls_through_with_one_warning(repo: Path) -> None:
    first = check(repo)
    (entry,) = replays(repo)
    entry.write_text("{not json", encoding="utf-8")
    run = check(repo)
    assert not run.replayed
    assert (run.status, normal(run.out)) == (first.status, normal(first.out))
    assert len(run.err.splitlines()) == 1 and "replay" in run.err
    assert check(repo).replayed  # the normal run wrote it again


def test_a_racy_mtime_is_hashed_again(repo: Path) -> None:
    path = repo / "src" / "app.py"
    check(repo)
    (entry,) = replays(repo)
    path.write_text(APP.replace("TODO", "DONE"), encoding="utf-8")  # same size
    # As if the write had kept the stat data (same timestamp granularity): only the racy
    # rule (mtime within RACY_S of the recorded run's start) makes the replay hash it again.
    st = path.stat()
    doc = json.loads(entry.read_text(encoding="utf-8"))
    doc["record"]["files"][os.path.realpath(path)][:4] = [
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_ino,
    ]
    entry.write_text(json.dumps(doc), encoding="utf-8")
    run = check(repo)
    assert not run.replayed and run.status == 0
    # The control: once the recorded start is long after the mtime, stat data is trusted
    # and the same forged record replays (so the miss above was the racy rule's).
    doc["record"]["taken"] = time.time() + 3600
    entry.write_text(json.dumps(doc), encoding="utf-8")
    (repo / "src" / "app.py").write_text(APP.replace("TODO", "DONE"), encoding="utf-8")
    st = path.stat()
    doc["record"]["files"][os.path.realpath(path)][:4] = [
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_ino,
    ]
    for stale in replays(repo):
        stale.unlink()
    entry.write_text(json.dumps(doc), encoding="utf-8")
    stale_run = check(repo)
    assert stale_run.replayed and stale_run.status == 1


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("argv", "root", "specs"),
    [
        ([], None, []),
        (["--root", "r", "a.yaml"], "r", ["a.yaml"]),
        (["--root=r", "--json", "--only", "x", "y"], "r", []),
        (["s", "--format", "github", "--max-evidence=2", "--all-evidence"], None, ["s"]),
    ],
)
def test_the_small_parser_reads_what_argparse_reads(
    argv: list[str], root: str | None, specs: list[str]
) -> None:
    parsed = parse_check_argv(argv)
    assert parsed is not None and (parsed.root, parsed.spec_paths) == (root, specs)


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["-h"], ["--no-cache"], ["--all"], ["--root"], ["--only"], ["--", "x"]],
)
def test_anything_unusual_goes_to_the_normal_path(argv: list[str]) -> None:
    assert parse_check_argv(argv) is None


def test_an_edit_of_chimeras_own_code_is_a_different_key(tmp_path: Path) -> None:
    """An editable install's code change (same version) must not replay stale output."""
    import chimera
    from chimera.cli import _replay

    spec = tmp_path / "s.yaml"
    spec.write_text("requirements: []\n", encoding="utf-8")
    before = _replay.replay_key(["check"], tmp_path, tmp_path, [spec])
    module = Path(chimera.__file__).resolve().parent / "cli" / "_root.py"
    st = module.stat()
    try:
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        code_stamp.cache_clear()  # taken once per process: this is the next process
        after = _replay.replay_key(["check"], tmp_path, tmp_path, [spec])
    finally:
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns))
        code_stamp.cache_clear()
    assert before is not None and after is not None
    assert before != after
    assert _replay.replay_key(["check"], tmp_path, tmp_path, [spec]) == before


def test_a_config_edited_after_the_run_read_it_stores_no_replay(repo: Path) -> None:
    """The run reads the configuration before the replay's key is taken: an edit landing in
    between would store the old configuration's output under the new bytes' key."""
    from chimera.cli import _replay
    from chimera.spec.engine.reports import TreeRecord

    read = _replay.config_digests(repo)  # what the run read ...
    (repo / "pyproject.toml").write_text("[tool.chimera.check]\nmax_file_bytes = 4\n")
    spec = repo / "specs" / "app.yaml"
    recorder = _replay.Recorder(["check"], repo, repo, [spec], max_bytes=1 << 20, configs_read=read)
    assert not recorder.save(TreeRecord(taken=0.0), ["passed in ", "s\n"], 0)
    assert replays(repo) == []
    fresh = _replay.Recorder(
        ["check"], repo, repo, [spec], max_bytes=1 << 20, configs_read=_replay.config_digests(repo)
    )
    assert fresh.save(TreeRecord(taken=0.0), ["passed in ", "s\n"], 0)
    assert len(replays(repo)) == 1
