"""``chimera init --github``: the one caller, pinned to the running release's commit, refused
for anything that is no release, never replacing a caller silently."""

from __future__ import annotations

import re
import sysconfig
from pathlib import Path

import pytest
import yaml

from chimera.cli import init_github, main
from chimera.cli.init_github import Build, caller_template, release_pin, render_caller

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "workflows" / "chimera.yml"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
INSTALLED = Path(sysconfig.get_paths()["purelib"]) / "chimera"
RELEASE = Build("1.4.0", COMMIT, INSTALLED)
PIN = re.compile(r"(uses: [\w.-]+/[\w.-]+/\.github/workflows/chimera\.yml@)[0-9a-f]{40}  # .*")


def unpinned(text: str) -> str:
    return PIN.sub(r"\1<pin>", text)


def test_the_shipped_template_is_the_example_caller_modulo_the_pin() -> None:
    assert unpinned(caller_template()) == unpinned(EXAMPLE.read_text(encoding="utf-8"))
    assert len(PIN.findall(caller_template())) == 1
    assert len(caller_template().splitlines()) <= 40


def test_the_caller_is_pinned_to_the_commit_with_the_tag_beside_it() -> None:
    text = render_caller(COMMIT, "v1.4.0")
    (line,) = [ln for ln in text.splitlines() if "uses:" in ln]
    assert line == f"    uses: chimera-dev/chimera/.github/workflows/chimera.yml@{COMMIT}  # v1.4.0"
    assert unpinned(text) == unpinned(caller_template())
    assert yaml.safe_load(text)["jobs"]["chimera"]["uses"].endswith(f"@{COMMIT}")
    with pytest.raises(ValueError, match="not a commit"):
        render_caller("v1.4.0", "v1.4.0")


def test_a_release_build_pins_its_commit() -> None:
    assert release_pin(RELEASE) == (COMMIT, "v1.4.0")


@pytest.mark.parametrize(
    ("build", "why"),
    [
        (Build("1.4.0", COMMIT, ROOT / "chimera"), "source tree or an editable install"),
        (Build("1.4.0", None, INSTALLED), "uncommitted changes or without git metadata"),
        (Build("1.4.1.dev3+g0123456", COMMIT, INSTALLED), "commit 0123456789ab, which is no"),
        (Build("0+unknown", None, INSTALLED), "uncommitted changes"),
    ],
    ids=["editable", "dirty", "untagged", "never-built"],
)
def test_anything_but_a_release_is_refused_with_one_line_naming_what_to_pin(
    build: Build, why: str
) -> None:
    with pytest.raises(Exception) as caught:
        release_pin(build)
    message = str(caught.value)
    assert why in message and "\n" not in message
    assert "chimera init --github --pin" in message and "ls-remote --tags" in message


@pytest.fixture
def released(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(init_github, "running_build", lambda: RELEASE)


def test_it_writes_the_caller_and_a_starter_spec_when_there_is_none(
    tmp_path: Path, released: None, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text('"""Shop."""\n\n\nclass Cart:\n    pass\n')
    assert main(["init", "--github", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    caller = tmp_path / ".github" / "workflows" / "chimera.yml"
    assert caller.read_text(encoding="utf-8") == render_caller(COMMIT, "v1.4.0")
    assert f"calls chimera-dev/chimera at {COMMIT[:12]} (v1.4.0)" in out
    assert (tmp_path / "specs" / "starter.yaml").is_file()
    assert "next: the App's secrets" in out


def test_an_existing_spec_is_left_alone(
    tmp_path: Path, released: None, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "specs").mkdir()
    assert main(["init", "--github", "--root", str(tmp_path)]) == 0
    assert list((tmp_path / "specs").iterdir()) == []
    assert "wrote " in capsys.readouterr().out


def test_an_existing_caller_is_refused_and_replaced_with_a_diff_under_force(
    tmp_path: Path, released: None, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "specs").mkdir()
    caller = tmp_path / ".github" / "workflows" / "chimera.yml"
    caller.parent.mkdir(parents=True)
    mine = caller_template().replace("max-open-prs", "max-open-prs: '9'  #", 1)
    caller.write_text(mine, encoding="utf-8")
    assert main(["init", "--github", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "already exists; pass --force" in err and err.count("\n") == 1
    assert caller.read_text(encoding="utf-8") == mine  # untouched

    assert main(["init", "--github", "--force", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "(yours)" in out and "(chimera init --github)" in out
    assert f"+    uses: chimera-dev/chimera/.github/workflows/chimera.yml@{COMMIT}" in out
    assert caller.read_text(encoding="utf-8") == render_caller(COMMIT, "v1.4.0")

    assert main(["init", "--github", "--force", "--root", str(tmp_path)]) == 0
    assert "unchanged" in capsys.readouterr().out


def test_from_this_source_tree_it_refuses_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The test run imports Chimera from its checkout: no release, whatever its version says.
    assert main(["init", "--github", "--root", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "not a release" in line and "--pin" in line
    assert not (tmp_path / ".github").exists() and not (tmp_path / "specs").exists()


def test_before_a_release_the_user_pins_a_commit_of_their_choice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # From this source tree (no release) --pin is the way forward the refusal names.
    chosen = "b" * 40
    assert main(["init", "--github", "--pin", chosen, "--root", str(tmp_path)]) == 0
    caller = (tmp_path / ".github" / "workflows" / "chimera.yml").read_text(encoding="utf-8")
    assert caller == render_caller(chosen, init_github.HAND_PIN)
    assert f"calls chimera-dev/chimera at {chosen[:12]}" in capsys.readouterr().out


@pytest.mark.parametrize("pin", ["v1.4.0", "main", "b" * 39, "B" * 40, "b" * 41])
def test_a_pin_that_is_no_full_commit_is_refused_in_one_line(
    tmp_path: Path, pin: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "--github", "--pin", pin, "--root", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "--pin" in line and "40 lowercase hex digits" in line
    assert not (tmp_path / ".github").exists()


def test_pin_without_github_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--pin", "b" * 40, "--root", str(tmp_path)]) == 2
    assert "--pin goes with --github" in capsys.readouterr().err
