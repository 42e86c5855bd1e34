"""Chimera as users install it: the sdist and the wheel as built, and every tier installed from
the wheel into a fresh environment running its used-by flows in a project outside the checkout
(nothing is imported from the source tree). The static half of the plain tier's proof is
tests/unit/architecture/test_plain_imports.py; the Action's modes, each from what its install
step makes, are tests/e2e/test_action_modes_wheel.py."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from chimera.testing.dist import Dists, Venv, VenvCache, clean_env, wheel_names

pytestmark = [pytest.mark.wheel, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PLAIN = {
    "pytest",
    "pluggy",
    "pydantic",
    "pyyaml",
    "pathspec",
    "regex",
    "pyahocorasick",
    "filelock",
}
SPEC = """\
requirements:
  - id: greet-defined
    defines: {path: app/greet.py, symbol: greet, kind: function}
  - id: greet-says-hello
    contains: {path: app/greet.py, pattern: "Hello, ", regex: false}
"""
GREET = 'def greet(name):\n    return f"Hello, {name}"\n'


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=u", "-c", "user.email=u@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def project(folder: Path, *, greet: str | None = GREET, in_git: bool = True) -> Path:
    """A user's project: a package, its test, and a Spec (committed when ``in_git``)."""
    (folder / "app").mkdir(parents=True)
    (folder / "app" / "__init__.py").write_text("", "utf-8")
    if greet is not None:
        (folder / "app" / "greet.py").write_text(greet, "utf-8")
    (folder / "tests").mkdir()
    (folder / "tests" / "test_app.py").write_text("def test_truth():\n    assert True\n", "utf-8")
    (folder / "specs").mkdir()
    (folder / "specs" / "app.yaml").write_text(SPEC, "utf-8")
    (folder / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "0"\n', "utf-8")
    if in_git:
        git(folder, "init", "-q", "-b", "main")
        git(folder, "add", "-A")
        git(folder, "commit", "-q", "-m", "start")
    return folder


def ok(proc: subprocess.CompletedProcess[str], code: int = 0) -> str:
    assert proc.returncode == code, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def one_line_extra(proc: subprocess.CompletedProcess[str], extra: str) -> None:
    """Exit 2, and stderr is one line naming the install command of ``extra``."""
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"pip install 'pytest-chimera[{extra}]'" in lines[0], lines[0]
    assert "Traceback" not in proc.stdout + proc.stderr


def imports_from_the_venv(venv: Venv, cwd: Path) -> None:
    code = "import chimera, pytest_chimera; print(chimera.__file__); print(pytest_chimera.__file__)"
    for line in ok(venv.run(["python", "-c", code], cwd)).splitlines():
        assert line.startswith(str(venv.path)), f"{line} is not the installed copy"
        assert not line.startswith(str(ROOT)), line


# -- the distributions ----------------------------------------------------------------------


def test_the_wheel_holds_the_packages_and_their_entry_points_only(dists: Dists) -> None:
    names = wheel_names(dists.wheel)
    info = f"pytest_chimera-{dists.version}.dist-info"
    tracked = subprocess.run(
        ["git", "ls-files", "chimera", "pytest_chimera"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    shipped = [n for n in names if not n.startswith(info + "/")]
    # Every file is a committed file of the two packages, or the version module the build
    # writes: no tests, no caches, no stray build output.
    stray = sorted(set(shipped) - set(tracked) - {"chimera/_version.py"})
    assert stray == []
    assert not [n for n in shipped if "__pycache__" in n or n.endswith((".pyc", ".so"))]
    assert not [n for n in names if n.startswith(("tests/", "bench/", "examples/", "scripts/"))]
    missing = sorted(n for n in tracked if n.endswith(".py") and n not in shipped)
    assert [n for n in missing if not n.startswith("chimera/eval/chains/")] == []
    assert {"chimera/py.typed", "pytest_chimera/py.typed", "chimera/_version.py"} <= set(names)
    # chimera init --github writes the Action's caller from the wheel's own copy.
    assert "chimera/cli/caller.yml" in names
    with zipfile.ZipFile(dists.wheel) as archive:
        entry = archive.read(f"{info}/entry_points.txt").decode()
        meta = archive.read(f"{info}/METADATA").decode()
        version = archive.read("chimera/_version.py").decode()
    assert "[console_scripts]\nchimera = chimera.cli:main" in entry
    assert "[pytest11]\nchimera = pytest_chimera.plugin" in entry
    assert "Requires-Dist: filelock>=3.13" in meta
    assert "Provides-Extra: github" in meta
    assert f"version: str = {dists.version!r}" in version
    assert "node: str | None = 'g" in version, "the build records the commit it was built from"


def test_twine_accepts_both_distributions(dists: Dists) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(dists.sdist), str(dists.wheel)],
        capture_output=True,
        text=True,
        check=False,
        env=clean_env(),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2


def test_the_sdist_builds_the_same_wheel_as_the_checkout(dists: Dists, tmp_path: Path) -> None:
    """``python -m build`` made the wheel from the sdist; one built from the checkout holds the
    same files, byte for byte."""
    out = tmp_path / "direct"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        env=clean_env(),
        timeout=600,
    )
    (direct,) = out.glob("*.whl")
    assert direct.name == dists.wheel.name

    def contents(wheel: Path) -> dict[str, str]:
        with zipfile.ZipFile(wheel) as archive:
            return {
                n: hashlib.sha256(archive.read(n)).hexdigest()
                for n in archive.namelist()
                if not n.endswith(".dist-info/RECORD")
            }

    assert contents(direct) == contents(dists.wheel)


# -- the plain install ----------------------------------------------------------------------


def test_the_plain_install_checks_a_spec_everywhere_it_is_used(
    venvs: VenvCache, tmp_path: Path
) -> None:
    venv = venvs.wheel()
    assert venv.distributions() - {"pytest-chimera"} - PLAIN <= {
        "annotated-types",
        "iniconfig",
        "packaging",
        "pydantic-core",
        "pygments",
        "typing-extensions",
        "typing-inspection",
    }, "the plain install holds no extra's package"
    app = project(tmp_path / "app")
    imports_from_the_venv(venv, app)
    # chimera check: caches on (the default; a second run replays), off, JSON, annotations.
    assert "2 passed" in ok(venv.run(["chimera", "check"], app))
    assert (app / ".chimera" / "cache").is_dir(), "the cache was saved"
    assert "2 passed" in ok(venv.run(["chimera", "check"], app))
    assert "2 passed" in ok(venv.run(["chimera", "check", "--no-cache"], app))
    report = json.loads(ok(venv.run(["chimera", "check", "--json"], app)))
    assert {r["status"] for r in report["results"]} == {"passed"}
    ok(venv.run(["chimera", "check", "--format", "github"], app))
    # Outside git: every file but what .gitignore excludes.
    loose = project(tmp_path / "loose", in_git=False)
    assert "2 passed" in ok(venv.run(["chimera", "check"], loose))
    # The pytest plugin: the tests and the Spec's items in one session.
    assert "3 passed" in ok(venv.run(["pytest", "--chimera-spec", "specs/"], app))
    # A spec seen red, then green.
    (app / "app" / "greet.py").write_text('def greet(name):\n    return "Hi"\n', "utf-8")
    red = venv.run(["pytest", "--chimera-spec", "specs/", "-q"], app)
    assert red.returncode == 1 and "greet-says-hello" in red.stdout, red.stdout
    ok(venv.run(["chimera", "check"], app), 1)
    (app / "app" / "greet.py").write_text(GREET, "utf-8")
    assert "3 passed" in ok(venv.run(["pytest", "--chimera-spec", "specs/", "-q"], app))
    # The Action's check mode, as action.yml runs it.
    github = {"GITHUB_WORKSPACE": str(app), "GITHUB_EVENT_NAME": "push"}
    ok(venv.run(["chimera", "action", "--mode", "check"], app, env=github))
    # chimera init and chimera schema.
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "pkg").mkdir()
    (fresh / "pkg" / "__init__.py").write_text("", "utf-8")
    (fresh / "README.md").write_text("# pkg\n\nRun `pytest`.\n", "utf-8")
    (fresh / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", "utf-8")
    ok(venv.run(["chimera", "init"], fresh))
    assert list((fresh / "specs").glob("*.yaml"))
    schema = json.loads(ok(venv.run(["chimera", "schema"], app)))
    assert schema.get("title") or schema.get("$defs")
    # Every subcommand's help loads on the plain install.
    for command in ok(venv.run(["python", "-c", LIST_COMMANDS], app)).split():
        ok(venv.run(["chimera", command, "--help"], app))


LIST_COMMANDS = (
    "from chimera.cli import build_parser, _command_names; "
    "print(' '.join(_command_names(build_parser())))"
)


def test_the_plain_install_with_xdist_checks_in_two_workers(
    venvs: VenvCache, tmp_path: Path
) -> None:
    venv = venvs.wheel(also=("pytest-xdist",))
    app = project(tmp_path / "app")
    for _ in range(2):  # the second run starts from the workers' saved caches
        out = ok(venv.run(["pytest", "-n", "2", "--chimera-spec", "specs/", "-q"], app))
        assert "3 passed" in out


def test_the_plain_install_names_the_extra_a_command_needs(
    venvs: VenvCache, tmp_path: Path
) -> None:
    venv = venvs.wheel()
    app = project(tmp_path / "app")
    schedules = app / ".chimera.d" / "schedules"
    schedules.mkdir(parents=True)
    (schedules / "nightly.yaml").write_text(
        'schedules:\n  - id: nightly\n    cron: {expr: "30 2 * * *", timezone: UTC}\n'
        "    check: spec-green\n",
        "utf-8",
    )
    # A schedule is fine; the install lacks the cron library: one line, never a file problem.
    proc = venv.run(["chimera", "schedules", "list"], app)
    one_line_extra(proc, "github")
    assert "nightly.yaml" not in proc.stderr
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "labeled", "label": {"name": "chimera"}}), "utf-8")
    env = {
        "GITHUB_EVENT_NAME": "issues",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "octo/app",
        "CHIMERA_GITHUB_TOKEN": "t",
        "GITHUB_API_URL": "http://127.0.0.1:9",
    }
    one_line_extra(venv.run(["chimera", "action", "--mode", "decide"], app, env=env), "github")
    # The demo runs the agent engine: said in one line before it makes or prints anything.
    demo = tmp_path / "demo"
    proc = venv.run(["chimera", "demo", "--dir", str(demo)], tmp_path)
    one_line_extra(proc, "agent")
    assert proc.stderr == (
        "chimera demo runs the agent engine: pip install 'pytest-chimera[agent]'\n"
    )
    assert proc.stdout == "" and not demo.exists()


# -- each extra -----------------------------------------------------------------------------


def test_the_github_extra_reads_schedules_without_the_llm_stack(
    venvs: VenvCache, tmp_path: Path
) -> None:
    venv = venvs.wheel("github")
    held = venv.distributions()
    assert {"pygithub", "cronsim"} <= held and not held & {"litellm", "openai", "numpy"}
    app = project(tmp_path / "app")
    schedules = app / ".chimera.d" / "schedules"
    schedules.mkdir(parents=True)
    (schedules / "nightly.yaml").write_text(
        'schedules:\n  - id: nightly\n    cron: {expr: "30 2 * * *", timezone: UTC}\n'
        "    check: spec-green\n",
        "utf-8",
    )
    assert "nightly" in ok(venv.run(["chimera", "schedules", "list"], app))


@pytest.mark.bwrap
def test_the_agent_extra_runs_the_demo(venvs: VenvCache, tmp_path: Path) -> None:
    venv = venvs.wheel("agent")
    imports_from_the_venv(venv, tmp_path)
    out = ok(venv.run(["chimera", "demo", "--quiet"], tmp_path, env={"TMPDIR": str(tmp_path)}))
    assert "demo: every step happened as described" in out
    assert not list(tmp_path.glob("chimera-demo-*")), "the temporary project is removed"


def test_the_eval_extra_computes_intervals(venvs: VenvCache, tmp_path: Path) -> None:
    venv = venvs.wheel("eval")
    code = (
        "from chimera.stats import paired_bootstrap; "
        "i = paired_bootstrap([1, 2, 3, 4, 5, 6], [2, 3, 3, 5, 6, 8], n_resamples=999); "
        "print(i.excludes_zero())"
    )
    assert ok(venv.run(["python", "-c", code], tmp_path)).strip() == "True"
    plain = venvs.wheel()
    missing = plain.run(["python", "-c", code], tmp_path)
    assert "pip install 'pytest-chimera[eval]'" in missing.stderr


def test_the_fast_extra_checks_with_re2(venvs: VenvCache, tmp_path: Path) -> None:
    venv = venvs.wheel("fast")
    assert "google-re2" in venv.distributions()
    app = project(tmp_path / "app")
    assert "2 passed" in ok(venv.run(["chimera", "check", "--no-cache"], app))


def test_the_heldout_extra_seals_a_record(venvs: VenvCache, tmp_path: Path) -> None:
    venv = venvs.wheel("heldout")
    code = (
        "from chimera.core.heldout.seal import generate_keypair, open_record, seal_record; "
        "public, private = generate_keypair(); "
        "print(open_record(seal_record({'id': 'x'}, public), private))"
    )
    assert ok(venv.run(["python", "-c", code], tmp_path)).strip() == "{'id': 'x'}"
    missing = venvs.wheel().run(["python", "-c", code], tmp_path)
    assert "pip install 'pytest-chimera[heldout]'" in missing.stderr


API = """\
openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /items:
    get:
      operationId: listItems
      responses: {'200': {description: ok}}
"""


def test_the_openapi_extra_turns_a_document_into_tools(venvs: VenvCache, tmp_path: Path) -> None:
    venv = venvs.wheel("openapi")
    app = project(tmp_path / "app")
    (app / "api.yaml").write_text(API, "utf-8")
    add = ["chimera", "connectors", "add", "items", "--openapi", "api.yaml"]
    ok(venv.run([*add, "--base-url", "http://127.0.0.1:9"], app))
    listed = json.loads(ok(venv.run(["chimera", "connectors", "list", "--json"], app)))
    assert [t["name"] for t in listed["tools"]] == ["items__listItems"]
    plain = venvs.wheel().run(["chimera", "connectors", "list"], app)
    one_line_extra(plain, "openapi")


MCP_SERVER = """\
from mcp.server.mcpserver import MCPServer

server = MCPServer("echo")


@server.tool()
def echo(text: str) -> str:
    \"\"\"Say it back.\"\"\"
    return text


server.run("stdio")
"""


def test_the_mcp_extra_lists_a_server_s_tools(venvs: VenvCache, tmp_path: Path) -> None:
    venv = venvs.wheel("mcp")
    app = project(tmp_path / "app")
    (app / "server.py").write_text(MCP_SERVER, "utf-8")
    add = [
        "chimera",
        "connectors",
        "add",
        "echo",
        "--command",
        str(venv.python),
        "--arg",
        "server.py",
    ]
    ok(venv.run(add, app))
    listed = json.loads(ok(venv.run(["chimera", "connectors", "list", "--json"], app)))
    assert [t["name"] for t in listed["tools"]] == ["echo__echo"]
    plain = venvs.wheel().run(["chimera", "connectors", "list"], app)
    one_line_extra(plain, "mcp")


def test_all_extras_together_check_and_load_every_command(venvs: VenvCache, tmp_path: Path) -> None:
    venv = venvs.wheel("github,agent,eval,mcp,openapi,fast,heldout")
    app = project(tmp_path / "app")
    imports_from_the_venv(venv, app)
    assert "2 passed" in ok(venv.run(["chimera", "check"], app))
    assert "3 passed" in ok(venv.run(["pytest", "--chimera-spec", "specs/", "-q"], app))
