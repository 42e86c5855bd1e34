"""The scan reads what runs: composite actions anywhere, the paths a base workflow ``uses:``,
and the files that make pytest, other forges, bots, editors, git hooks, container builds and
docs builds run code (issue rows 5 and 6). Each case is a real patch built with git."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.github.scan import ScanResult, scan_patch
from chimera.testing.patches import BASE, Change, Patch, make_patch, write

CI_USES_TOOLS = (
    "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - uses: actions/checkout@v4\n      - uses: ./tools/ci\n        with: {x: 1}\n"
)
TOOLS_ACTION = (
    "name: prep\nruns:\n  using: composite\n  steps:\n"
    "    - run: python tools/ci/prep.py\n      shell: bash\n    - uses: ./tools/lib\n"
)
WITH_TOOLS = {
    **BASE,
    ".github/workflows/ci.yml": CI_USES_TOOLS,
    "tools/ci/action.yml": TOOLS_ACTION,
    "tools/ci/prep.py": "print('prep')\n",
    "tools/lib/action.yml": "runs:\n  using: node20\n  main: index.js\n",
    "tools/lib/index.js": "console.log(1)\n",
    "tools/other/x.py": "x = 1\n",
}


def _scan(patch: Patch, rescan: bool) -> ScanResult:
    return scan_patch(patch.text, workspace=str(patch.root), base=patch.base if rescan else None)


def _rules(result: ScanResult) -> set[str]:
    return {f.rule for f in result.findings}


# -- row 5: composite actions and the paths base workflows use --------------------------------


@pytest.mark.parametrize(
    "path", ["actions/setup/action.yaml", "tools/x/action.yml", "deep/er/Action.YML"]
)
def test_an_action_manifest_anywhere_blocks(tmp_path: Path, path: str) -> None:
    patch = make_patch(tmp_path, write({path: "runs:\n  using: composite\n  steps: []\n"}))
    for rescan in (True, False):
        result = _scan(patch, rescan)
        assert result.verdict == "block", (rescan, result.findings)
        assert "action-manifest" in {f.rule for f in result.blocked}


@pytest.mark.parametrize(
    ("change", "hit"),
    [
        (
            write({"tools/ci/action.yml": TOOLS_ACTION + "    - run: curl x\n"}),
            "tools/ci/action.yml",
        ),
        (write({"tools/ci/prep.py": "import os\nos.remove('x')\n"}), "tools/ci/prep.py"),
        (write({"tools/ci/new_helper.sh": "echo hi\n"}), "tools/ci/new_helper.sh"),
        # A local action a base composite action uses in turn.
        (write({"tools/lib/index.js": "require('child_process')\n"}), "tools/lib/index.js"),
        # Deleting what CI runs changes it too.
        (lambda root: (root / "tools/ci/prep.py").unlink(), "tools/ci/prep.py"),
    ],
    ids=["manifest", "script", "new-file", "transitive", "deletion"],
)
def test_a_path_a_base_workflow_uses_blocks(tmp_path: Path, change: Change, hit: str) -> None:
    patch = make_patch(tmp_path, change, WITH_TOOLS)
    result = _scan(patch, True)
    assert result.verdict == "block", result.findings
    used = [f for f in result.blocked if f.rule == "action-path"]
    assert [f.path for f in used] == [hit]
    assert "uses: ./tools/" in used[0].reason and ".github/workflows/ci.yml" in used[0].reason


def test_a_symlink_replacing_a_folder_on_the_way_blocks(tmp_path: Path) -> None:
    def swap(root: Path) -> None:
        for f in (root / "tools").rglob("*"):
            if f.is_file():
                f.unlink()
        for d in sorted((root / "tools").rglob("*"), reverse=True):
            d.rmdir()
        (root / "tools").rmdir()
        (root / "tools").symlink_to("evil")

    result = _scan(make_patch(tmp_path, swap, WITH_TOOLS), True)
    assert "tools" in {f.path for f in result.blocked if f.rule == "action-path"}


def test_paths_no_base_workflow_uses_stay_allowed(tmp_path: Path) -> None:
    patch = make_patch(tmp_path, write({"tools/other/x.py": "x = 2\n"}), WITH_TOOLS)
    assert _scan(patch, True).verdict == "allow"


def test_uses_is_read_from_the_base_not_from_the_patch(tmp_path: Path) -> None:
    """A patch that renames the used folder away is blocked by the base's ``uses:`` (the
    rename's source), and a folder only the patch would make used is not trusted either way:
    the workflow edit that would name it is blocked as ``.github/``."""

    def move(root: Path) -> None:
        (root / "tools/ci").rename(root / "tools/moved")

    result = _scan(make_patch(tmp_path / "a", move, WITH_TOOLS), True)
    assert {f.path for f in result.blocked if f.rule == "action-path"} >= {
        "tools/ci/prep.py",
        "tools/ci/action.yml",
    }
    base = {**BASE, ".github/workflows/ci.yml": "on: push\njobs: {}\n"}
    edits = write(
        {
            ".github/workflows/ci.yml": CI_USES_TOOLS,
            "tools/ci/prep.py": "print(1)\n",
        }
    )
    result = _scan(make_patch(tmp_path / "b", edits, base), True)
    assert not [f for f in result.findings if f.rule == "action-path"]
    assert "github-dir" in {f.rule for f in result.blocked}


def test_a_workflow_pyyaml_cannot_read_still_protects_its_uses(tmp_path: Path) -> None:
    broken = CI_USES_TOOLS + "  bad: [unclosed\n"
    patch = make_patch(
        tmp_path,
        write({"tools/ci/prep.py": "print(2)\n"}),
        {**WITH_TOOLS, ".github/workflows/ci.yml": broken},
    )
    assert "action-path" in {f.rule for f in _scan(patch, True).blocked}


def test_the_root_action_protects_its_manifest_and_the_files_it_names(tmp_path: Path) -> None:
    base = {
        **BASE,
        ".github/workflows/self-test.yml": (
            "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./\n"
        ),
        "action.yml": (
            "runs:\n  using: composite\n  steps:\n"
            "    - run: bash ${{ github.action_path }}/scripts/entry.sh\n      shell: bash\n"
        ),
        "scripts/entry.sh": "echo entry\n",
        "dist/index.js": "x\n",
    }
    entry = make_patch(tmp_path / "a", write({"scripts/entry.sh": "echo changed\n"}), base)
    assert [f.path for f in _scan(entry, True).blocked if f.rule == "action-path"] == [
        "scripts/entry.sh"
    ]
    # The rest of the repository is the action's own code under test, not blocked whole.
    other = make_patch(tmp_path / "b", write({"app/calc.py": "X = 1\n"}), base)
    assert _scan(other, True).verdict == "allow"
    js = {**base, "action.yml": "runs:\n  using: node20\n  main: dist/index.js\n"}
    main = make_patch(tmp_path / "c", write({"dist/index.js": "y\n"}), js)
    assert "action-path" in {f.rule for f in _scan(main, True).blocked}


# -- row 6: files that make other tools run code ----------------------------------------------

PYPROJECT = BASE["pyproject.toml"]
CASES: list[tuple[str, Change, str, str | None]] = [
    # (id, change, verdict, a rule that must be among the findings; None: allowed)
    (
        "pytest-ini-p",
        write({"pytest.ini": "[pytest]\naddopts = -p pkg.x -q\n"}),
        "review",
        "pytest-addopts",
    ),
    ("tox-ini-p", write({"tox.ini": "[pytest]\naddopts = -ppkg.x\n"}), "review", "pytest-addopts"),
    (
        "setup-cfg-p",
        write({"setup.cfg": "[tool:pytest]\naddopts =\n    -q\n    -p pkg.x\n"}),
        "review",
        "pytest-addopts",
    ),
    (
        "pyproject-ini-options-p",
        write(
            {"pyproject.toml": PYPROJECT + '\n[tool.pytest.ini_options]\naddopts = "-p pkg.x"\n'}
        ),
        "review",
        "pytest-addopts",
    ),
    (
        "pyproject-native-p",
        write({"pyproject.toml": PYPROJECT + '\n[tool.pytest]\naddopts = ["-p", "pkg.x"]\n'}),
        "review",
        "pytest-addopts",
    ),
    (
        "pyproject-pytest11",
        write({"pyproject.toml": PYPROJECT + '\n[project.entry-points.pytest11]\nx = "pkg.x"\n'}),
        "review",
        "pytest-entry-point",
    ),
    (
        "setup-cfg-pytest11",
        write({"setup.cfg": "[options.entry_points]\npytest11 =\n    x = pkg.x\n"}),
        "review",
        "pytest-entry-point",
    ),
    (
        "pytest-plugins-var",
        write({"tests/test_a.py": 'pytest_plugins = ["pkg.x"]\n\n\ndef test_a():\n    pass\n'}),
        "review",
        "pytest-plugins-var",
    ),
    (
        "pytest-plugins-annotated",
        write({"tests/conftest_helpers.py": 'pytest_plugins: list[str] = ["pkg.x"]\n'}),
        "review",
        "pytest-plugins-var",
    ),
    (
        "gitea-workflow",
        write({".gitea/workflows/ci.yml": "on: push\n"}),
        "review",
        "forge-workflow",
    ),
    (
        "forgejo-workflow",
        write({".forgejo/workflows/ci.yaml": "on: push\n"}),
        "review",
        "forge-workflow",
    ),
    (
        "renovate-post-upgrade",
        write({"renovate.json": '{"postUpgradeTasks": {"commands": ["make gen"]}}\n'}),
        "review",
        "renovate",
    ),
    (
        "renovate-json5-nested",
        write(
            {
                ".renovaterc.json5": (
                    '{\n  // nightly\n  "packageRules": [\n    {"matchPackageNames": ["x"],\n'
                    '     "postUpgradeTasks": {"commands": ["./gen.sh"]},},\n  ],\n}\n'
                )
            }
        ),
        "review",
        "renovate",
    ),
    (
        "renovate-automerge-ignore-tests",
        write({"renovate.json": '{"automerge": true, "ignoreTests": true}\n'}),
        "review",
        "renovate",
    ),
    (
        "renovate-plain",
        write({"renovate.json": '{"extends": ["config:recommended"]}\n'}),
        "allow",
        None,
    ),
    ("renovate-automerge-only", write({"renovate.json": '{"automerge": true}\n'}), "allow", None),
    ("renovate-unparsed", write({"renovate.json": "{extends: 'x'\n"}), "review", "config-unparsed"),
    (
        "pre-commit-hooks",
        write({".pre-commit-hooks.yaml": "- id: x\n  entry: x\n"}),
        "review",
        "pre-commit-hooks",
    ),
    (
        "vscode-folder-open",
        write(
            {
                ".vscode/tasks.json": (
                    '{\n  // tasks\n  "version": "2.0.0",\n  "tasks": [{"label": "w", "command": '
                    '"./w.sh", "runOptions": {"runOn": "folderOpen"}},],\n}\n'
                )
            }
        ),
        "review",
        "editor-task",
    ),
    (
        "vscode-plain-task",
        write(
            {
                ".vscode/tasks.json": '{"version": "2.0.0", "tasks": [{"label": "b", '
                '"command": "make"}]}\n'
            }
        ),
        "allow",
        None,
    ),
    ("husky", write({".husky/pre-commit": "npm test\n"}), "review", "git-hook"),
    (
        "dockerfile",
        write({"Dockerfile": "FROM python:3.12\nRUN make\n"}),
        "review",
        "container-build",
    ),
    ("containerfile", write({"deploy/Containerfile": "FROM x\n"}), "review", "container-build"),
    (
        "dockerfile-variant",
        write({"docker/Dockerfile.dev": "FROM x\n"}),
        "review",
        "container-build",
    ),
    (
        "readthedocs-commands",
        write(
            {
                ".readthedocs.yaml": "version: 2\nbuild:\n  os: ubuntu-22.04\n"
                "  commands:\n    - ./x.sh\n"
            }
        ),
        "review",
        "docs-build",
    ),
    (
        "readthedocs-jobs",
        write({"readthedocs.yml": "version: 2\nbuild:\n  jobs:\n    pre_build:\n      - ./x.sh\n"}),
        "review",
        "docs-build",
    ),
    (
        "readthedocs-plain",
        write({".readthedocs.yaml": "version: 2\nsphinx: {configuration: c.py}\n"}),
        "allow",
        None,
    ),
    # The closing attacker's pass: tools that run code on a person's machine or on push.
    ("dot-justfile", write({".justfile": "default:\n  curl x | sh\n"}), "review", "build-hook"),
    (
        "lefthook",
        write({"lefthook.yml": "pre-commit:\n  commands:\n    x:\n      run: ./x.sh\n"}),
        "review",
        "git-hook",
    ),
    ("overcommit", write({".overcommit.yml": "PreCommit: {}\n"}), "review", "git-hook"),
    (
        "devcontainer",
        write({".devcontainer/devcontainer.json": '{"initializeCommand": "./x.sh"}\n'}),
        "review",
        "dev-environment",
    ),
    (
        "devcontainer-root",
        write({".devcontainer.json": '{"postCreateCommand": "./x.sh"}\n'}),
        "review",
        "dev-environment",
    ),
    ("gitpod", write({".gitpod.yml": "tasks:\n  - init: ./x.sh\n"}), "review", "dev-environment"),
    (
        "netlify",
        write({"netlify.toml": '[build]\ncommand = "./x.sh"\n'}),
        "block",
        "deploy-preview",
    ),
    (
        "vercel",
        write({"site/vercel.json": '{"buildCommand": "./x.sh"}\n'}),
        "block",
        "deploy-preview",
    ),
]


@pytest.mark.parametrize(("case", "change", "verdict", "rule"), CASES, ids=[c[0] for c in CASES])
def test_files_that_run_code(
    tmp_path: Path, case: str, change: Change, verdict: str, rule: str | None
) -> None:
    patch = make_patch(tmp_path, change)
    for rescan in (True, False):
        result = _scan(patch, rescan)
        assert result.verdict == verdict, (case, rescan, result.findings)
        if rule is not None:
            hits = [f for f in result.findings if f.rule == rule]
            assert hits and all(f.verdict == verdict for f in hits), (case, rescan)
            assert all(f.reason.startswith(f"{verdict} (rule {rule}): ") for f in hits)


def _modify(tmp_path: Path, before: str, after: str, name: str = "pyproject.toml") -> Patch:
    return make_patch(tmp_path, write({name: after}), {**BASE, name: before})


def test_a_changed_config_is_judged_by_what_each_side_runs(tmp_path: Path) -> None:
    opts = PYPROJECT + '\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    added = _modify(tmp_path / "a", opts, opts.replace('"-q"', '"-q -p pkg.evil"'))
    hits = [f for f in _scan(added, True).flagged if f.rule == "pytest-addopts"]
    assert hits and "-p pkg.evil" in hits[0].reason
    # The same plugin list with other options changed: nothing new runs.
    with_p = opts.replace('"-q"', '"-q -p pkg.x"')
    same = _modify(tmp_path / "b", with_p, with_p.replace('"-q ', '"-v '))
    assert _scan(same, True).verdict == "allow"
    # `-p no:NAME` turns a plugin off: nothing runs.
    off = _modify(tmp_path / "n", PYPROJECT, opts.replace('"-q"', '"-q -p no:cacheprovider"'))
    assert _scan(off, True).verdict == "allow"
    # Without the base the sides cannot be compared: a line that may change it is held.
    assert "pytest-addopts" in _rules(_scan(added, False))
    tasks = (
        '{"tasks": [{"label": "w", "command": "./w.sh", "runOptions": {"runOn": "folderOpen"}}]}\n'
    )
    changed = _modify(
        tmp_path / "c", tasks, tasks.replace("./w.sh", "./evil.sh"), ".vscode/tasks.json"
    )
    assert "editor-task" in _rules(_scan(changed, True))


def test_a_plugin_added_inside_an_existing_pytest_plugins_list_is_held(tmp_path: Path) -> None:
    """The added line names no ``pytest_plugins``; the two sides of the module differ."""
    before = 'pytest_plugins = [\n    "pkg.a",\n]\n'
    after = before.replace('"pkg.a",\n', '"pkg.a",\n    "pkg.evil",\n')
    patch = _modify(tmp_path / "a", before, after, "tests/test_x.py")
    hits = [f for f in _scan(patch, True).flagged if f.rule == "pytest-plugins-var"]
    assert hits and "pkg.evil" in hits[0].reason
    # Other edits of such a module leave the plugins alone.
    same = _modify(tmp_path / "b", before, before + "\n\ndef test_x():\n    pass\n", "t.py")
    assert _scan(same, True).verdict == "allow"


BOMB = "".join(
    f"{k}: &{k} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['x'] * 9)}]\n"
    for p, k in zip(["", "a", "b", "c", "d", "e", "f"], "abcdefg", strict=True)
)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".readthedocs.yaml", BOMB + "build:\n  commands: *g\n"),
        ("renovate.json", "[" * 50_000 + "]" * 50_000),
        ("pyproject.toml", "a = " + "[" * 50_000 + "]" * 50_000 + "\n"),
    ],
    ids=["yaml-alias-bomb", "deep-json", "deep-toml"],
)
def test_hostile_config_text_is_held_not_crashed_on(tmp_path: Path, name: str, text: str) -> None:
    patch = make_patch(tmp_path, write({name: text}))
    result = _scan(patch, True)
    assert result.verdict == "review" and "config-unparsed" in _rules(result)


def test_an_alias_bomb_in_a_base_workflow_still_protects_its_uses(tmp_path: Path) -> None:
    bombed = BOMB + CI_USES_TOOLS.replace("on: push\n", "")
    base = {**WITH_TOOLS, ".github/workflows/ci.yml": bombed}
    patch = make_patch(tmp_path, write({"tools/ci/prep.py": "print(3)\n"}), base)
    assert "action-path" in {f.rule for f in _scan(patch, True).blocked}


def test_every_row_of_the_table_is_exercised() -> None:
    """Each rule of the table is asserted by a case of this file or of the older table's."""
    from chimera.github.scan.table import TABLE

    here = Path(__file__).parent
    text = "".join(
        (here / name).read_text("utf-8")
        for name in ("test_github_scan_runs.py", "test_github_scan_table.py")
    )
    missing = [r.rule for r in TABLE if f'"{r.rule}"' not in text]
    assert not missing
