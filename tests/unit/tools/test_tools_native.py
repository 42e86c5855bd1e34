"""The six native tools on a real folder, through the registry the agent uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.runner import LocalRunner
from chimera.sandbox import Sandbox
from chimera.tools import ToolRegistry, native_tools


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    (ws / "README.md").write_text("# Demo\nTODO: write docs\n")
    (ws / ".gitignore").write_text("build/\n*.log\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.py").write_text("TODO generated\n")
    (ws / "debug.log").write_text("TODO log\n")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("TODO git\n")
    (ws / ".chimera").mkdir()
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02TODO")
    return ws


@pytest.fixture
def tools(root: Path) -> ToolRegistry:
    return native_tools(root, Sandbox(root, mode="scrubbed"), command_timeout=10, output_limit=4000)


def call(tools: ToolRegistry, name: str, **args: object) -> tuple[bool, str]:
    result = tools.call(name, json.dumps(args))
    return result.ok, result.output


def test_the_usual_names(tools: ToolRegistry) -> None:
    assert tools.names() == [
        "read_file",
        "write_file",
        "edit_file",
        "list_dir",
        "search",
        "run_command",
    ]
    for schema in tools.schemas():
        assert schema["function"]["parameters"]["type"] == "object"


def test_read_file_numbers_lines_and_ranges(tools: ToolRegistry) -> None:
    ok, out = call(tools, "read_file", path="src/app.py")
    assert ok
    assert out.splitlines()[0] == "src/app.py (lines 1-6 of 6)"
    assert "1\tdef add(a, b):" in out
    ok, out = call(tools, "read_file", path="src/app.py", start_line=5, end_line=6)
    assert out.splitlines()[1:] == ["5\tdef sub(a, b):", "6\t    return a - b"]
    ok, out = call(tools, "read_file", path="src/app.py", start_line=50)
    assert not ok and "past the end" in out
    ok, out = call(tools, "read_file", path="src/app.py", start_line=4, end_line=2)
    assert not ok and "before start_line" in out


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("missing.py", "file not found"),
        ("src", "is a directory"),
        ("blob.bin", "binary file"),
        ("../outside", "leaves the workspace"),
        (".git/config", "inside .git/"),
    ],
)
def test_read_file_refusals(tools: ToolRegistry, path: str, message: str) -> None:
    ok, out = call(tools, "read_file", path=path)
    assert not ok
    assert message in out


def test_read_file_caps_size_and_output(tools: ToolRegistry, root: Path) -> None:
    (root / "huge.txt").write_text("x" * 1_100_000)
    ok, out = call(tools, "read_file", path="huge.txt")
    assert not ok and "over the" in out
    (root / "long.txt").write_text("\n".join(f"line {i}" for i in range(2000)))
    ok, out = call(tools, "read_file", path="long.txt")
    assert ok
    assert "characters truncated; read a smaller range" in out
    assert len(out) < 4200


def test_write_file_creates_parents_and_reports(tools: ToolRegistry, root: Path) -> None:
    ok, out = call(tools, "write_file", path="pkg/deep/new.py", content="X = 1\n")
    assert ok and out == "created pkg/deep/new.py (6 bytes)"
    assert (root / "pkg" / "deep" / "new.py").read_text() == "X = 1\n"
    ok, out = call(tools, "write_file", path="pkg/deep/new.py", content="X = 2\n")
    assert ok and out.startswith("overwrote")
    ok, out = call(tools, "write_file", path=".chimera/state.json", content="{}")
    assert not ok and "inside .chimera/" in out
    ok, out = call(tools, "write_file", path="src", content="")
    assert not ok and "is a directory" in out


def test_edit_file_exact_unique_replacement(tools: ToolRegistry, root: Path) -> None:
    ok, out = call(
        tools, "edit_file", path="src/app.py", old_text="return a - b", new_text="return b - a"
    )
    assert ok, out
    assert "now lines 6-6" in out
    assert "return b - a" in (root / "src" / "app.py").read_text()
    ok, out = call(tools, "edit_file", path="src/app.py", old_text="nothing", new_text="x")
    assert not ok and "was not found" in out
    ok, out = call(tools, "edit_file", path="src/app.py", old_text="(a, b)", new_text="(x)")
    assert not ok and "occurs 2 times" in out
    ok, out = call(tools, "edit_file", path="src/app.py", old_text="", new_text="x")
    assert not ok and "empty" in out
    ok, out = call(tools, "edit_file", path="nope.py", old_text="a", new_text="b")
    assert not ok and "not found" in out


def test_edit_file_keeps_crlf_line_ends(tools: ToolRegistry, root: Path) -> None:
    (root / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    ok, out = call(tools, "edit_file", path="win.txt", old_text="one\ntwo", new_text="1\n2")
    assert ok, out
    assert (root / "win.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_list_dir_honours_gitignore_and_hides_private(tools: ToolRegistry) -> None:
    ok, out = call(tools, "list_dir", path=".")
    assert ok
    assert out.splitlines() == ["./", ".gitignore", "README.md", "blob.bin", "src/"]
    ok, out = call(tools, "list_dir", recursive=True)
    assert ok
    assert out.splitlines()[1:] == [".gitignore", "README.md", "blob.bin", "src/app.py"]
    ok, out = call(tools, "list_dir", path="nope")
    assert not ok and "not found" in out
    ok, out = call(tools, "list_dir", path=".git")
    assert not ok


def test_search_regex_over_tracked_text(tools: ToolRegistry) -> None:
    ok, out = call(tools, "search", pattern=r"TODO\b")
    assert ok
    assert out.splitlines() == ["README.md:2: TODO: write docs"]
    ok, out = call(tools, "search", pattern=r"^def (\w+)", path="src")
    assert out.splitlines() == ["src/app.py:1: def add(a, b):", "src/app.py:5: def sub(a, b):"]
    ok, out = call(tools, "search", pattern="todo", ignore_case=True, path="README.md")
    assert "README.md:2:" in out
    ok, out = call(tools, "search", pattern="nothing-here")
    assert ok and out == "no matches"
    ok, out = call(tools, "search", pattern="(unclosed")
    assert not ok and "invalid regular expression" in out


def test_search_caps_results_and_survives_catastrophic_patterns(
    tools: ToolRegistry, root: Path
) -> None:
    (root / "many.txt").write_text("hit\n" * 50)
    ok, out = call(tools, "search", pattern="hit", path="many.txt", max_results=5)
    assert len([ln for ln in out.splitlines() if ln.startswith("many.txt:")]) == 5
    assert "stopped after 5 matches" in out
    (root / "evil.txt").write_text("a" * 40 + "!")
    ok, out = call(tools, "search", pattern=r"(a|aa)+$", path="evil.txt")
    assert ok
    assert "timed out in evil.txt" in out


def test_run_command_reports_exit_code_and_output(tools: ToolRegistry, root: Path) -> None:
    result = tools.call("run_command", {"command": "echo hello; exit 3"})
    assert not result.ok
    assert result.output.startswith("exit code 3 (")
    assert "hello" in result.output
    assert result.meta["exit_code"] == 3
    result = tools.call("run_command", {"command": "pwd", "cwd": "src"})
    assert result.ok and result.output.splitlines()[1] == str(root / "src")


def test_run_command_timeout_truncation_and_confinement(tools: ToolRegistry) -> None:
    result = tools.call("run_command", {"command": "sleep 30", "timeout": 0.5})
    assert not result.ok and result.meta["timed_out"]
    assert result.output.startswith("timed out after 0.5s")
    result = tools.call("run_command", {"command": "yes line | head -c 100000"})
    assert result.meta["truncated"]
    assert "bytes of output truncated" in result.output
    result = tools.call("run_command", {"command": "ls", "cwd": ".."})
    assert not result.ok and "leaves the workspace" in result.output
    result = tools.call("run_command", {"command": "   "})
    assert not result.ok and "empty" in result.output
    result = tools.call("run_command", {"command": "ls", "cwd": "README.md"})
    assert not result.ok and "not a folder" in result.output


def test_run_command_timeout_is_capped_by_the_configured_maximum(root: Path) -> None:
    tools = native_tools(root, LocalRunner(), command_timeout=0.5)
    result = tools.call("run_command", {"command": "sleep 30", "timeout": 1000})
    assert result.meta["timed_out"]


def test_dotenv_files_are_never_read_searched_or_written(root: Path, tools: ToolRegistry) -> None:
    """Found by an attack pass: `search` answered yes/no per guess of a `.env` secret (an
    oracle) and `read_file` followed a symlink to `.env`."""
    (root / "config").mkdir()
    (root / "config" / ".env").write_text("API_KEY=DOTENV-CANARY-5521\n")
    (root / "notes.txt").symlink_to(root / "config" / ".env")
    (root / ".env.example").write_text("API_KEY=changeme\n")
    for rel in ("config/.env", "notes.txt"):
        ok, out = call(tools, "read_file", path=rel)
        assert not ok and "dotenv" in out, out
    ok, out = call(tools, "search", pattern="DOTENV-CANARY-5521")
    assert "DOTENV-CANARY" not in out and "config/.env" not in out, out
    ok, out = call(tools, "search", pattern="CANARY", path="config/.env")
    assert not ok and "dotenv" in out
    ok, out = call(tools, "write_file", path="config/.env.local", content="X=1\n")
    assert not ok and "dotenv" in out
    ok, out = call(tools, "read_file", path=".env.example")  # a template is fine
    assert ok and "changeme" in out
