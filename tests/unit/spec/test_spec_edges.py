"""The Spec's promises at the edges (issue 10): bad regexes found in the one validation pass,
one-line messages for multi-line patterns, star imports named, symlinks resolved to the file a
person edits, and command output lines capped."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from chimera.errors import SpecError
from chimera.spec.drift import check_drift
from chimera.spec.loader import load_spec, load_spec_files
from chimera.spec.model import EVIDENCE_LINE_CHARS, Status
from chimera.spec.results import RequirementResult


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def check_one(root: Path, spec_text: str) -> RequirementResult:
    spec = load_spec(write(root, "specs/s.yaml", spec_text))
    report = check_drift(spec, root)
    assert len(report) == 1
    return report.results[0]


# --------------------------------------------------------------------------- invalid regex


def test_invalid_regexes_are_validation_problems_with_every_other_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = write(
        tmp_path,
        "specs/bad.yaml",
        """\
        requirements:
          - id: open-group
            contains: {path: README.md, pattern: 'foo(bar'}
          - id: literal-is-fine
            contains: {path: README.md, pattern: 'foo(bar', regex: false}
          - id: block-repeat
            absent:
              paths: ['*.py']
              pattern: |
                x**
          - id: typo
            contians: {path: README.md, pattern: app}
        """,
    )
    loaded = load_spec_files(spec)
    shown = [str(p) for p in loaded.all_problems()]
    assert shown == [
        "specs/bad.yaml:3:42: contains.pattern: invalid pattern /foo(bar/: missing ) at position 7",
        "specs/bad.yaml:9:16: absent.pattern: invalid pattern /x**\\n/: "
        "multiple repeat at position 2",
        "specs/bad.yaml:12:5: unknown field 'contians' in requirement; did you mean 'contains'?",
    ]
    with pytest.raises(SpecError):
        load_spec(spec)


def test_regex_validation_uses_the_engines_flags(tmp_path: Path) -> None:
    # Syntax only the `regex` module knows (possessive, fuzzy, POSIX classes) is valid.
    (tmp_path / "README.md").write_text("foo\n", encoding="utf-8")
    result = check_one(
        tmp_path,
        """\
        requirements:
          - id: regex-only-syntax
            contains: {path: README.md, pattern: '^(?:fo){e<=1}o[[:alpha:]]*+$'}
        """,
    )
    assert result.status is Status.PASSED, result.message


# --------------------------------------------------------------------------- one-line messages


def test_a_block_pattern_keeps_the_message_and_description_on_one_line(tmp_path: Path) -> None:
    write(tmp_path, "notes.txt", "alpha\nTODO\n")
    result = check_one(
        tmp_path,
        """\
        requirements:
          - id: no-todo
            absent:
              path: notes.txt
              pattern: |
                TODO
        """,
    )
    assert result.status is Status.FAILED
    assert result.message == "/TODO\\n/ found: 1 match in 1 file"
    assert result.requirement.check.describe() == "absent /TODO\\n/ from notes.txt"
    assert "\n" not in json.dumps(result.to_json()["message"])


def test_a_multi_line_command_is_quoted_on_one_line(tmp_path: Path) -> None:
    result = check_one(
        tmp_path,
        """\
        requirements:
          - id: two-lines
            command:
              run: |
                true
                false
        """,
    )
    assert result.status is Status.FAILED
    assert result.message == "`true\\nfalse\\n` failed: exit 1"
    assert len(result.requirement.check.describe().splitlines()) == 1


# --------------------------------------------------------------------------- star imports


def test_defines_on_a_star_import_module_says_the_import_is_not_followed(tmp_path: Path) -> None:
    # The shape of attrs' `attr/filters.py`... re-exported from `attr/__init__.py`.
    write(tmp_path, "attr/__init__.py", "from attr.filters import *\nfrom .validators import *\n")
    write(tmp_path, "attr/filters.py", "def include(*what): ...\n")
    result = check_one(
        tmp_path,
        """\
        requirements:
          - id: include
            defines: {path: attr/__init__.py, symbol: include}
        """,
    )
    assert result.status is Status.FAILED
    assert result.message == (
        "attr/__init__.py does not define include (it re-exports with a star import from "
        "attr.filters, .validators, which is not followed; point the requirement at the "
        "module that defines it)"
    )
    assert [(e.file, e.line, e.note) for e in result.evidence] == [
        ("attr/__init__.py", 1, "star import from attr.filters, not followed"),
        ("attr/__init__.py", 2, "star import from .validators, not followed"),
    ]
    assert "no similar names" not in result.render()


# --------------------------------------------------------------------------- symlinks


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    write(tmp_path, "vendor/impl.py", "class Real:\n    TODO = 1\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "impl.py").symlink_to("../vendor/impl.py")
    return tmp_path


def test_text_evidence_names_the_edited_file_and_the_link(linked: Path) -> None:
    result = check_one(
        linked,
        """\
        requirements:
          - id: no-todo
            absent: {paths: ['src/*.py'], pattern: TODO}
        """,
    )
    assert result.status is Status.FAILED
    [evidence] = result.evidence
    assert (evidence.file, evidence.line, evidence.col) == ("vendor/impl.py", 2, 5)
    assert evidence.note == "via symlink src/impl.py"
    assert evidence.render() == "vendor/impl.py:2:5 (via symlink src/impl.py):     TODO = 1"


def test_defines_evidence_names_the_edited_file_and_the_link(linked: Path) -> None:
    result = check_one(
        linked,
        """\
        requirements:
          - id: real
            defines: {path: src/impl.py, symbol: Rael}
        """,
    )
    assert result.status is Status.FAILED
    [evidence] = result.evidence
    assert evidence.file == "vendor/impl.py"
    assert evidence.note == "similar name: Real (class); via symlink src/impl.py"


# --------------------------------------------------------------------------- long output


def test_a_huge_output_line_is_capped_with_a_marker(tmp_path: Path) -> None:
    source = "import sys\nsys.stdout.write('x' * 10_000_000 + '\\n')\nsys.exit(1)\n"
    printer = write(tmp_path, "shout.py", source)
    result = check_one(
        tmp_path,
        f"""\
        requirements:
          - id: shout
            command: {{run: '"{sys.executable}" {printer.name}'}}
        """,
    )
    assert result.status is Status.FAILED
    [evidence] = result.evidence
    lines = evidence.snippet.splitlines()
    assert all(len(line) <= EVIDENCE_LINE_CHARS + 20 for line in lines), [len(x) for x in lines]
    # The runner keeps head and tail of the output; each part is one capped line.
    assert lines[0] == "x" * EVIDENCE_LINE_CHARS + f"… [+{32 * 1024 - EVIDENCE_LINE_CHARS} chars]"
    assert "bytes of output truncated" in lines[1]
    assert lines[-1].startswith("x" * EVIDENCE_LINE_CHARS + "… [+")
