"""The Action model and the lexical shell parser."""

from __future__ import annotations

import pytest

from chimera.governance.actions import (
    Action,
    ActionKind,
    normalize_path,
    parse_command,
)

WS = "/home/dev/project"
HOME = "/home/dev"


def parse(text: str, cwd: str = WS) -> list[tuple[str, ...]]:
    return [c.argv for c in parse_command(text, cwd=cwd, home=HOME).commands]


@pytest.mark.parametrize(
    ("path", "cwd", "expected"),
    [
        ("src/a.py", WS, f"{WS}/src/a.py"),
        ("../x", WS, "/home/dev/x"),
        ("../../../../..", WS, "/"),
        ("~", WS, HOME),
        ("~/.ssh/id_rsa", WS, f"{HOME}/.ssh/id_rsa"),
        ("$HOME/.aws", WS, f"{HOME}/.aws"),
        ("${HOME}/.aws", WS, f"{HOME}/.aws"),
        ("~root/.bashrc", WS, "/root/.bashrc"),
        ("~alice", WS, "/home/alice"),
        ("$PWD/a", f"{WS}/src", f"{WS}/src/a"),
        ("//etc//passwd", WS, "/etc/passwd"),
        ("./a/./b/../c", WS, f"{WS}/a/c"),
    ],
)
def test_normalize_path(path: str, cwd: str, expected: str) -> None:
    assert normalize_path(path, cwd=cwd, home=HOME) == expected


def test_pipelines_sequences_and_redirects() -> None:
    parsed = parse_command("cat a | grep b > out.txt 2>&1; ls && pwd", cwd=WS, home=HOME)
    argvs = [c.argv for c in parsed.commands]
    assert argvs == [("cat", "a"), ("grep", "b"), ("ls",), ("pwd",)]
    cat, grep = parsed.commands[:2]
    assert cat.stdout_piped and cat.pipe_to == ("grep",)
    assert grep.stdin_piped and grep.pipe_from == ("cat",)
    assert [(r.op, r.target, r.fd) for r in grep.redirects] == [
        (">", "out.txt", None),
        (">&", "1", "2"),
    ]
    assert grep.redirects[0].writes and not grep.redirects[1].writes


def test_substitutions_are_parsed_recursively() -> None:
    parsed = parse_command('echo "$(cat ~/.ssh/id_rsa)" `whoami` <(ls)', cwd=WS, home=HOME)
    assert parsed.substitutions == ("cat ~/.ssh/id_rsa", "whoami", "ls")
    nested = [c for c in parsed.commands if c.depth == 1]
    assert [c.argv for c in nested] == [("cat", "~/.ssh/id_rsa"), ("whoami",), ("ls",)]


def test_single_quotes_keep_substitutions_literal() -> None:
    parsed = parse_command("echo '$(rm -rf /)'", cwd=WS, home=HOME)
    assert parsed.substitutions == ()
    assert [c.argv for c in parsed.commands] == [("echo", "$(rm -rf /)")]


def test_wrappers_and_assignments_are_peeled() -> None:
    parsed = parse_command(
        "sudo -u root env A=1 nice -n 5 timeout 10 xargs -n1 rm", cwd=WS, home=HOME
    )
    (cmd,) = parsed.commands
    assert cmd.argv == ("rm",)
    assert cmd.wrappers == ("sudo", "env", "nice", "timeout", "xargs")
    assert cmd.assignments == ("A=1",)
    assert cmd.stdin_piped  # xargs feeds it
    (bare,) = parse_command("env", cwd=WS, home=HOME).commands
    assert bare.argv == ("env",)


def test_shell_c_eval_and_heredocs() -> None:
    assert parse("bash -c 'cd /tmp && rm -rf x'")[1:] == [("cd", "/tmp"), ("rm", "-rf", "x")]
    assert parse("eval ls -la")[1:] == [("ls", "-la")]
    parsed = parse_command(
        "python3 - <<'EOF'\nimport os\nprint(os.environ)\nEOF\nls", cwd=WS, home=HOME
    )
    assert parsed.inline_code == (("python", "import os\nprint(os.environ)"),)
    assert [c.argv for c in parsed.commands] == [("python3", "-"), ("ls",)]
    parsed = parse_command("sh <<EOF\ncat ~/.netrc\nEOF", cwd=WS, home=HOME)
    assert ("cat", "~/.netrc") in [c.argv for c in parsed.commands]


def test_cd_is_tracked() -> None:
    parsed = parse_command("cd src && ls; cd ~ && ls; cd && pwd", cwd=WS, home=HOME)
    cwds = [c.cwd for c in parsed.commands if c.program in {"ls", "pwd"}]
    assert cwds == [f"{WS}/src", HOME, HOME]


def test_comments_newlines_and_continuations() -> None:
    text = "ls \\\n  -la  # list\n# a comment line\npwd"
    assert parse(text) == [("ls", "-la"), ("pwd",)]
    assert parse("echo a#b") == [("echo", "a#b")]


def test_lexical_errors_do_not_raise() -> None:
    for text in ("echo 'x", 'echo "x', "echo $(ls", "echo `ls"):
        parsed = parse_command(text, cwd=WS, home=HOME)
        assert parsed.error and parsed.commands == ()


def test_deep_nesting_is_an_error() -> None:
    text = "ls"
    for _ in range(12):
        text = f"eval {text}"
    assert parse_command(text, cwd=WS, home=HOME).error


def test_from_tool_call_kinds() -> None:
    read = Action.from_tool_call("read_file", '{"path": "a.py", "start_line": 3}', WS)
    assert read.kind is ActionKind.READ and read.paths == ("a.py",)
    edit = Action.from_tool_call(
        "edit_file", {"path": "a.py", "old_text": "a", "new_text": "b"}, WS
    )
    assert edit.kind is ActionKind.EDIT and edit.content == "b"
    run = Action.from_tool_call("run_command", {"command": "git push", "cwd": "sub"}, WS)
    assert run.kind is ActionKind.GIT and run.start_dir == f"{WS}/sub"
    assert Action.from_tool_call("run_command", {"command": "rm x"}, WS).kind is ActionKind.DELETE
    assert Action.from_tool_call("run_command", {"command": "pip install x"}, WS).kind is (
        ActionKind.INSTALL
    )
    assert Action.from_tool_call("run_command", {"command": "curl x.io"}, WS).kind is (
        ActionKind.NETWORK
    )
    fetch = Action.from_tool_call("web_thing", {"url": "https://x"}, WS)
    assert fetch.kind is ActionKind.NETWORK and fetch.url == "https://x"
    other = Action.from_tool_call("mcp_tool", "not json", WS)
    assert other.kind is ActionKind.TOOL and other.arguments == {"_raw": "not json"}
    listing = Action.from_tool_call("list_dir", {}, WS)
    assert listing.paths == (".",)


def test_workspace_relations() -> None:
    action = Action.for_path(ActionKind.WRITE, "../x", WS, home=HOME)
    resolved = action.resolve("../x")
    assert resolved == "/home/dev/x"
    assert not action.in_workspace(resolved)
    assert action.relative(f"{WS}/a/b") == "a/b"
    assert action.relative(WS) == "."
    assert not action.in_workspace("/home/dev/project-other/a")
    assert action.summary().startswith("write: ../x")
    assert action.to_dict()["paths"] == ["../x"]
