"""`contains` / `absent`: regex dialect, encodings, fail-closed reading, scopes, evidence."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pydantic import ValidationError

from chimera.spec.engine import EngineOptions
from chimera.spec.kinds import Absent, Contains
from chimera.spec.kinds.text import MatchMode
from chimera.spec.model import Status

if TYPE_CHECKING:
    from tests.unit.engine.conftest import Evaluate, RunAll


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


# -- regex dialect and text handling ---------------------------------------------------


def test_bom_and_crlf_work_with_anchors(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "notes.txt", b"\xef\xbb\xbfhello world\r\nsecond line\r\nlast\r\n")
    first = evaluate(tmp_path, Contains(path="notes.txt", pattern=r"^hello world$"))
    assert first.status is Status.PASSED, first.message
    assert (first.evidence[0].line, first.evidence[0].col) == (1, 1)
    second = evaluate(tmp_path, Contains(path="notes.txt", pattern=r"^second line$"))
    assert second.status is Status.PASSED
    assert second.evidence[0].line == 2
    assert second.evidence[0].snippet == "second line"
    # The BOM is not text: nothing precedes "hello" on line 1.
    bom = evaluate(tmp_path, Contains(path="notes.txt", pattern="\ufeff"))
    assert bom.status is Status.FAILED


def test_multiline_pattern_spans_lines_and_reports_the_start(
    tmp_path: Path, evaluate: Evaluate
) -> None:
    write(tmp_path, "a.py", "x = 1\ndef f():\n    return 2\n")
    res = evaluate(tmp_path, Contains(path="a.py", pattern=r"def f\(\):\n\s+return"))
    assert res.status is Status.PASSED
    ev = res.evidence[0]
    assert (ev.file, ev.line, ev.col, ev.snippet) == ("a.py", 2, 1, "def f():")


def test_literal_mode_does_not_interpret_metacharacters(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "README.md", "Run `pytest --chimera-spec specs/` (a.b*c)\n")
    lit = evaluate(tmp_path, Contains(path="README.md", pattern="(a.b*c)", regex=False))
    assert lit.status is Status.PASSED
    assert lit.evidence[0].col == 36
    # As a regex the same text means something else and does not match the parentheses.
    rx = evaluate(tmp_path, Contains(path="README.md", pattern="^(a.b*c)", regex=True))
    assert rx.status is Status.FAILED
    absent = evaluate(tmp_path, Absent(path="README.md", pattern="a.c", regex=False))
    assert absent.status is Status.PASSED


def test_regex_module_syntax_is_supported(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "u.txt", "naïve café\n")
    res = evaluate(tmp_path, Contains(path="u.txt", pattern=r"\p{L}+é$"))
    assert res.status is Status.PASSED
    assert res.evidence[0].col == 7


def test_catastrophic_backtracking_is_an_error_within_the_limit(
    tmp_path: Path, evaluate: Evaluate, fast: EngineOptions
) -> None:
    write(tmp_path, "evil.txt", "a" * 20000 + "b\n")
    write(tmp_path, "fine.txt", "nothing here\n")
    start = time.monotonic()
    # A lookahead keeps the pattern away from the linear engine: ``regex`` alone runs it.
    res = evaluate(tmp_path, Absent(paths=["*.txt"], pattern=r"(a+)+(?=$)"), options=fast)
    elapsed = time.monotonic() - start
    assert res.status is Status.ERROR
    assert "/(a+)+(?=$)/" in res.message and "evil.txt" in res.message
    assert "timed out" in res.message
    assert elapsed < 5, elapsed
    assert [e.file for e in res.evidence] == ["evil.txt"]


def test_linear_engine_decides_a_catastrophic_pattern_on_ascii_text(
    tmp_path: Path, evaluate: Evaluate, fast: EngineOptions
) -> None:
    pytest.importorskip("re2")
    write(tmp_path, "evil.txt", "a" * 20000 + "b\n")
    write(tmp_path, "fine.txt", "nothing here\n")
    res = evaluate(tmp_path, Absent(paths=["*.txt"], pattern=r"(a+)+$"), options=fast)
    # RE2 proves there is no match, so ``regex`` never backtracks on the evil file.
    assert res.status is Status.PASSED, res.message
    slow = replace(fast, linear_engine=False)
    assert evaluate(tmp_path, Absent(paths=["*.txt"], pattern=r"(a+)+$"), options=slow).status is (
        Status.ERROR
    )


def test_invalid_pattern_is_refused_when_the_check_is_built() -> None:
    with pytest.raises(ValidationError, match=r"invalid pattern /foo\(bar/: missing \) at"):
        Absent(path="a.txt", pattern=r"foo(bar")
    Absent(path="a.txt", pattern=r"foo(bar", regex=False)  # a literal is not compiled


def test_invalid_pattern_that_skipped_validation_is_an_error_with_the_position(
    tmp_path: Path, evaluate: Evaluate
) -> None:
    # A kind built without validation (a plugin's, or model_construct) still fails closed.
    write(tmp_path, "a.txt", "x\n")
    res = evaluate(tmp_path, Absent.model_construct(path="a.txt", pattern=r"foo(bar"))
    assert res.status is Status.ERROR
    assert "/foo(bar/" in res.message
    assert "missing ) at position 7" in res.message
    star = evaluate(tmp_path, Contains.model_construct(path="a.txt", pattern=r"x**"))
    assert star.status is Status.ERROR
    assert "position 2" in star.message


def test_python_files_honour_pep263_coding_line(tmp_path: Path, evaluate: Evaluate) -> None:
    source = "# -*- coding: latin-1 -*-\nNAME = 'Müller'\n".encode("latin-1")
    write(tmp_path, "legacy.py", source)
    write(tmp_path, "legacy.txt", source)  # the same bytes are not UTF-8 outside Python
    py = evaluate(tmp_path, Contains(path="legacy.py", pattern="Müller", regex=False))
    assert py.status is Status.PASSED, py.message
    txt = evaluate(tmp_path, Contains(path="legacy.txt", pattern="Müller", regex=False))
    assert txt.status is Status.ERROR
    assert "undecodable" in txt.message


# -- evidence --------------------------------------------------------------------------


def test_absent_reports_every_match_with_location(tmp_path: Path, evaluate: Evaluate) -> None:
    lines = [f"print({i})" if i % 3 == 0 else f"x = {i}" for i in range(30)]
    write(tmp_path, "pkg/mod.py", "\n".join(lines) + "\n")
    write(tmp_path, "pkg/other.py", "    print('hi')\n")
    res = evaluate(tmp_path, Absent(paths=["pkg/**/*.py"], pattern=r"print\("))
    assert res.status is Status.FAILED
    assert len(res.evidence) == 11
    assert "11 matches in 2 files" in res.message
    first = res.evidence[0]
    assert (first.file, first.line, first.col, first.snippet) == ("pkg/mod.py", 1, 1, "print(0)")
    other = [e for e in res.evidence if e.file == "pkg/other.py"]
    assert (other[0].line, other[0].col) == (1, 5)
    rendered = res.render(max_evidence=3)
    assert "... and 8 more locations" in rendered


def test_contains_match_all_names_the_files_without_a_match(
    tmp_path: Path, evaluate: Evaluate
) -> None:
    header = "# SPDX-License-Identifier: MIT\n"
    write(tmp_path, "src/a.py", header + "a = 1\n")
    write(tmp_path, "src/b.py", "b = 2\n")
    write(tmp_path, "src/c.py", header)
    check = Contains(
        paths=["src/*.py"], pattern="^# SPDX-License-Identifier: ", match=MatchMode.ALL
    )
    res = evaluate(tmp_path, check)
    assert res.status is Status.FAILED
    assert "src/b.py" in res.message
    assert [e.file for e in res.evidence] == ["src/b.py"]
    write(tmp_path, "src/b.py", header)
    assert evaluate(tmp_path, check).status is Status.PASSED


def test_contains_any_passes_with_a_match_in_any_file(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "docs/a.md", "nothing\n")
    write(tmp_path, "docs/b.md", "pip install pytest-chimera\n")
    res = evaluate(tmp_path, Contains(paths=["docs/*.md"], pattern="pip install"))
    assert res.status is Status.PASSED
    assert res.evidence[0].file == "docs/b.md"
    missing = evaluate(tmp_path, Contains(paths=["docs/*.md"], pattern="conda install"))
    assert missing.status is Status.FAILED
    assert "2 selected files" in missing.message


# -- fail closed -----------------------------------------------------------------------


def test_binary_file_in_absent_scope_is_red_with_the_reason(
    tmp_path: Path, evaluate: Evaluate
) -> None:
    write(tmp_path, "data/clean.txt", "ok\n")
    write(tmp_path, "data/blob.txt", b"ok\x00\x01secret")
    res = evaluate(tmp_path, Absent(paths=["data/*"], pattern="secret"))
    assert res.status is Status.ERROR
    assert "data/blob.txt" in res.message and "binary" in res.message
    assert res.evidence[0].note.startswith("binary file")


def test_undecodable_file_in_absent_scope_is_red(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "a.txt", "fine\n")
    write(tmp_path, "b.txt", b"caf\xe9\n")
    res = evaluate(tmp_path, Absent(paths=["*.txt"], pattern="TODO"))
    assert res.status is Status.ERROR
    assert "b.txt" in res.message and "undecodable" in res.message


def test_oversized_file_is_never_read(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "big.log", "x" * 5000)
    write(tmp_path, "small.log", "y\n")
    options = EngineOptions(max_file_bytes=1024)
    res = evaluate(tmp_path, Absent(paths=["*.log"], pattern="needle"), options=options)
    assert res.status is Status.ERROR
    assert "big.log" in res.message and "size limit" in res.message


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="root reads chmod 000 files; test_unreadable_file_via_reader_hook covers this path",
)
def test_unreadable_file_chmod_000(tmp_path: Path, evaluate: Evaluate) -> None:
    path = write(tmp_path, "secret.txt", "password\n")
    write(tmp_path, "open.txt", "hello\n")
    path.chmod(0)
    try:
        res = evaluate(tmp_path, Absent(paths=["*.txt"], pattern="password"))
    finally:
        path.chmod(0o644)
    assert res.status is Status.ERROR
    assert "secret.txt" in res.message and "unreadable" in res.message


def test_unreadable_file_via_reader_hook(tmp_path: Path, evaluate: Evaluate) -> None:
    """Running as root defeats chmod 000, so the read failure is injected at the I/O hook."""
    from chimera.spec.engine.files import read_bytes

    write(tmp_path, "secret.txt", "password\n")
    write(tmp_path, "open.txt", "hello\n")

    def reader(real: str, limit: int) -> bytes:
        if real.endswith("secret.txt"):
            raise PermissionError(13, "Permission denied")
        return read_bytes(real, limit)

    res = evaluate(tmp_path, Absent(paths=["*.txt"], pattern="password"), reader=reader)
    assert res.status is Status.ERROR
    assert "secret.txt (unreadable: Permission denied)" in res.message
    contains = evaluate(tmp_path, Contains(paths=["*.txt"], pattern="hello"), reader=reader)
    assert contains.status is Status.PASSED
    every = evaluate(
        tmp_path, Contains(paths=["*.txt"], pattern="o", match=MatchMode.ALL), reader=reader
    )
    assert every.status is Status.ERROR


def test_broken_symlink_in_absent_scope_is_red(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "a.cfg", "x\n")
    (tmp_path / "gone.cfg").symlink_to(tmp_path / "does-not-exist.cfg")
    res = evaluate(tmp_path, Absent(paths=["*.cfg"], pattern="debug"))
    assert res.status is Status.ERROR
    assert "gone.cfg (broken symlink)" in res.message


def test_contains_passes_only_through_a_readable_file(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "a.txt", b"needle\x00")
    write(tmp_path, "b.txt", "needle\n")
    ok = evaluate(tmp_path, Contains(paths=["*.txt"], pattern="needle"))
    assert ok.status is Status.PASSED
    assert ok.evidence[0].file == "b.txt"
    write(tmp_path, "b.txt", "nothing\n")
    red = evaluate(tmp_path, Contains(paths=["*.txt"], pattern="needle"))
    assert red.status is Status.ERROR
    assert "a.txt" in red.message and "binary" in red.message
    every = evaluate(tmp_path, Contains(paths=["*.txt"], pattern="n", match=MatchMode.ALL))
    assert every.status is Status.ERROR


def test_single_binary_path_cannot_pass_contains(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00needle")
    res = evaluate(tmp_path, Contains(path="logo.png", pattern="needle"))
    assert res.status is Status.ERROR
    assert "binary" in res.message


# -- scopes ----------------------------------------------------------------------------


def test_zero_file_scopes_are_errors(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "src/a.py", "x = 1\n")
    none = evaluate(tmp_path, Absent(paths=["lib/**/*.py"], pattern="eval"))
    assert none.status is Status.ERROR
    assert "selects zero files" in none.message
    all_excluded = evaluate(
        tmp_path, Absent(paths=["src/*.py"], exclude=["src/a.py"], pattern="eval")
    )
    assert all_excluded.status is Status.ERROR
    contains = evaluate(tmp_path, Contains(paths=["*.rs"], pattern="fn"))
    assert contains.status is Status.ERROR


def test_exclude_that_matches_nothing_is_fine(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "src/a.py", "x = 1\n")
    res = evaluate(tmp_path, Absent(paths=["src/*.py"], exclude=["vendor/**"], pattern="eval"))
    assert res.status is Status.PASSED


def test_dot_slash_prefixes_are_normalised(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "src/a.py", "import os\n")
    write(tmp_path, "src/gen/b.py", "eval(x)\n")
    res = evaluate(
        tmp_path, Absent(paths=["./src/**/*.py"], exclude=["./src/gen/**"], pattern=r"eval\(")
    )
    assert res.status is Status.PASSED, res.message
    single = evaluate(tmp_path, Contains(path="./src/a.py", pattern="import os"))
    assert single.status is Status.PASSED
    assert single.evidence[0].file == "src/a.py"


def test_missing_single_path(tmp_path: Path, evaluate: Evaluate) -> None:
    contains = evaluate(tmp_path, Contains(path="README.md", pattern="Quickstart"))
    assert contains.status is Status.FAILED
    assert "README.md does not exist" in contains.message
    # A missing target never passes, for absent too (DESIGN: "failed ... including a
    # missing target file"): a misspelt path must not read as clean.
    absent = evaluate(tmp_path, Absent(path="debug.log", pattern="secret"))
    assert absent.status is Status.FAILED
    assert "does not exist" in absent.message


def test_path_leaving_the_root_is_refused(tmp_path: Path, evaluate: Evaluate) -> None:
    (tmp_path / "root").mkdir()
    write(tmp_path, "outside.txt", "secret\n")
    res = evaluate(tmp_path / "root", Contains(path="../outside.txt", pattern="secret"))
    assert res.status is Status.ERROR
    assert "leaves the root" in res.message


def test_gitignore_style_globs(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "a.md", "x\n")
    write(tmp_path, "docs/deep/b.md", "needle\n")
    anywhere = evaluate(tmp_path, Contains(paths=["*.md"], pattern="needle"))
    assert anywhere.status is Status.PASSED  # no slash: matches at any depth, like .gitignore
    anchored = evaluate(tmp_path, Contains(paths=["/*.md"], pattern="needle"))
    assert anchored.status is Status.FAILED
    negated = evaluate(tmp_path, Contains(paths=["**/*.md", "!docs/**"], pattern="needle"))
    assert negated.status is Status.FAILED


def test_runaway_pattern_stops_costing_time_per_file(tmp_path: Path, run_all: RunAll) -> None:
    for i in range(6):
        write(tmp_path, f"evil{i}.txt", "a" * 20000 + "b\n")
    options = EngineOptions(pattern_timeout_s=0.2, max_pattern_timeouts=2)
    start = time.monotonic()
    report, stats = run_all(
        tmp_path, [Absent(paths=["*.txt"], pattern=r"(a+)+(?=$)")], options=options
    )
    assert time.monotonic() - start < 4
    (res,) = report.results
    assert res.status is Status.ERROR
    assert "timed out in evil" in res.message
    assert "4 files not searched after repeated time-outs" in res.message
    assert stats.regex_runs == 2
    assert len(res.evidence) == 6


def test_normalisation_helpers() -> None:
    from chimera.spec.engine.files import anchor_dir, normalize_glob, normalize_relpath

    assert normalize_glob("./src/*.py") == "/src/*.py"
    assert normalize_glob("././src/") == "/src/"
    assert normalize_glob("!./gen/**") == "!/gen/**"
    assert normalize_glob("./!x") == "/!x"
    assert normalize_glob(".//x") == "/x"
    assert normalize_glob("*.md") == "*.md"
    assert normalize_relpath("./a//b/../c.txt") == "a/c.txt"
    assert normalize_relpath("../x") is None
    assert normalize_relpath("/etc/passwd") is None
    assert anchor_dir("src/pkg/**/*.py") == "src/pkg"
    assert anchor_dir("/README.md") == ""
    assert anchor_dir("*.md") is None
    assert anchor_dir("build/") is None
    assert anchor_dir("docs/*/index.md") == "docs"
