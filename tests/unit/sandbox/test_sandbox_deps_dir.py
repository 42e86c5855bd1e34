"""A project with a real dependency: installed by the set-up step (a local wheel built here,
into a real virtual environment, no network), run in the strict sandbox through deps_dir."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from chimera.config import load_config
from chimera.errors import ConfigError, SandboxError
from chimera.github.trust.settings import ActionSettings
from chimera.orchestration.session_factory import disposable_checks, verify_sandbox
from chimera.sandbox import Sandbox, bwrap_available, probe_bwrap
from chimera.sandbox.deps import deps_environment
from chimera.testing.wheels import build_wheel

needs_bwrap = pytest.mark.skipif(
    not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}"
)

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "setup"
CHECK = "import tinydep, sys; print('answer', tinydep.answer(), sys.prefix)\n"


@pytest.fixture(scope="module")
def deps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped pip set-up script, run on a project that depends on ``tinydep`` (its
    pyproject.toml), with pip pointed at the local wheel and no index."""
    base = tmp_path_factory.mktemp("setup")
    wheels = base / "wheels"
    wheels.mkdir()
    build_wheel(wheels, "tinydep", "1.0", {"tinydep/__init__.py": "def answer():\n    return 42\n"})
    checkout = base / "checkout"
    checkout.mkdir()
    (checkout / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0"\ndependencies = ["tinydep>=1"]\n',
        encoding="utf-8",
    )
    venv = base / "chimera-deps"
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
    env.pop("VIRTUAL_ENV", None)
    subprocess.run(["bash", str(EXAMPLES / "pip.sh"), str(venv)], cwd=checkout, env=env, check=True)
    assert not list(venv.glob("lib/python*/site-packages/app*")), "the project itself"
    return venv


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "check.py").write_text(CHECK, encoding="utf-8")
    return root


@needs_bwrap
def test_the_dependency_imports_only_through_the_deps_dir(project: Path, deps: Path) -> None:
    with_deps = Sandbox(project, mode="bwrap", deps_dir=deps)
    result = with_deps.run(["python", "check.py"], cwd=project, timeout=60)
    assert result.exit_code == 0, result.output
    assert f"answer 42 {deps}" in result.output
    bare = Sandbox(project, mode="bwrap")
    result = bare.run(["python", "check.py"], cwd=project, timeout=60)
    assert result.exit_code != 0 and "No module named 'tinydep'" in result.output


@needs_bwrap
def test_agent_written_code_cannot_change_the_deps_dir(project: Path, deps: Path) -> None:
    target = deps / "lib" / "planted.py"
    sandbox = Sandbox(project, mode="bwrap", deps_dir=deps)
    command = ["python", "-c", f"open({str(target)!r}, 'w').write('x')"]
    result = sandbox.run(command, cwd=project, timeout=60)
    assert result.exit_code != 0 and "Read-only file system" in result.output
    assert not target.exists()


@needs_bwrap
def test_the_configured_deps_dir_reaches_the_spec_checks(project: Path, deps: Path) -> None:
    # Relative to the project root, as a maintainer would write it for a local run.
    rel = Path("..") / ".." / deps.relative_to(project.parent.parent)
    (project / "chimera.toml").write_text(f'[sandbox]\ndeps_dir = "{rel}"\n', encoding="utf-8")
    config = load_config(project)
    assert config.sandbox.deps_path(project) == deps
    runner = disposable_checks(config)(project)
    result = runner.run(["python", "check.py"], cwd=project, timeout=60)
    assert result.exit_code == 0 and "answer 42" in result.output, result.output


@needs_bwrap
def test_verify_sandbox_shows_the_set_up_folder(project: Path, deps: Path) -> None:
    strict = verify_sandbox(project, scrubbed=False, env_allow=(), deps_dir=deps)
    assert strict.mode == "bwrap" and not strict.network
    result = strict.run(["python", "check.py"], cwd=project, timeout=60)
    assert result.exit_code == 0, result.output


def test_a_deps_dir_inside_the_workspace_or_missing_is_refused(project: Path) -> None:
    inside = project / "deps"
    inside.mkdir()
    with pytest.raises(SandboxError, match="inside the workspace"):
        Sandbox(project, mode="scrubbed", deps_dir=inside)
    with pytest.raises(SandboxError, match=r"deps_dir .* is not a directory"):
        Sandbox(project, mode="scrubbed", deps_dir=project.parent / "never-set-up")


def test_environment_for_each_layout(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    env = deps_environment(venv, "/usr/bin:/bin")
    assert env == {"PATH": f"{venv}/bin:/usr/bin:/bin", "VIRTUAL_ENV": str(venv)}
    node = tmp_path / "node"
    (node / "node_modules" / ".bin").mkdir(parents=True)
    env = deps_environment(node, "/usr/bin")
    assert env == {
        "PATH": f"{node}/node_modules/.bin:/usr/bin",
        "NODE_PATH": f"{node}/node_modules",
    }


def test_the_action_settings_carry_deps_provider_and_self_approval() -> None:
    settings = ActionSettings.from_env(
        {
            "CHIMERA_DEPS_DIR": "/runner/temp/chimera-deps",
            "CHIMERA_API_BASE": "http://127.0.0.1:9/v1",
            "CHIMERA_LITELLM_SETTINGS": "# Bedrock\naws_region_name = eu-west-1\n\n",
            "CHIMERA_ALLOW_SELF_APPROVAL": "true",
        }
    )
    assert settings.run_overrides() == {
        "allow_self_approval": True,
        "api_base": "http://127.0.0.1:9/v1",
        "litellm": {"aws_region_name": "eu-west-1"},
        "deps_dir": Path("/runner/temp/chimera-deps"),
        # The Action's sandbox input always reaches the child: strict is bubblewrap.
        "sandbox": "bwrap",
        "agent_profile": None,
    }
    unset = ActionSettings.from_env({}).run_overrides()
    assert unset.pop("sandbox") == "bwrap"
    assert set(unset.values()) == {None}
    with pytest.raises(ConfigError, match="CHIMERA_DEPS_DIR: give an absolute folder"):
        ActionSettings.from_env({"CHIMERA_DEPS_DIR": "deps"})
    with pytest.raises(ConfigError, match="CHIMERA_LITELLM_SETTINGS: line 1: expected key=value"):
        ActionSettings.from_env({"CHIMERA_LITELLM_SETTINGS": "aws region"})


@needs_bwrap
@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_the_npm_set_up_script_feeds_require_in_the_sandbox(tmp_path: Path) -> None:
    offline = {**os.environ, "npm_config_offline": "true", "npm_config_audit": "false"}
    package = tmp_path / "tinydep"
    package.mkdir()
    manifest = {"name": "tinydep", "version": "1.0.0", "main": "index.js"}
    (package / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    (package / "index.js").write_text("exports.answer = () => 42;\n", encoding="utf-8")
    subprocess.run(["npm", "pack", "--silent"], cwd=package, env=offline, check=True)
    project = tmp_path / "project"
    project.mkdir()
    deps = {"tinydep": f"file:{package / 'tinydep-1.0.0.tgz'}"}
    app = {"name": "app", "version": "0.0.0", "dependencies": deps}
    (project / "package.json").write_text(json.dumps(app), encoding="utf-8")
    lock = ["npm", "install", "--package-lock-only", "--no-fund"]
    subprocess.run(lock, cwd=project, env=offline, check=True, capture_output=True)
    folder = tmp_path / "chimera-deps"
    script = str(EXAMPLES / "npm.sh")
    subprocess.run(["bash", script, str(folder)], cwd=project, env=offline, check=True)
    assert not (project / "node_modules").exists()
    sandbox = Sandbox(project, mode="bwrap", deps_dir=folder)
    command = ["node", "-e", "console.log('answer', require('tinydep').answer())"]
    result = sandbox.run(command, cwd=project, timeout=60)
    assert result.exit_code == 0 and "answer 42" in result.output, result.output
