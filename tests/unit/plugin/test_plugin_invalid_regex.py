"""An invalid regex is a spec validation problem, worded the same by the plugin and the CLI."""

from __future__ import annotations

import pytest

from chimera.cli import main

SPEC = """\
requirements:
  - id: open-group
    contains: {path: README.md, pattern: 'foo(bar'}
  - id: fine
    contains: {path: README.md, pattern: app}
"""

PROBLEM = "specs/re.yaml:3:42: contains.pattern: invalid pattern /foo(bar/: missing ) at position 7"


def test_plugin_and_cli_report_the_same_line(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makefile(".yaml", **{"specs/re": SPEC})
    pytester.makefile(".md", README="# app\n")
    result = pytester.runpytest("--chimera-spec", "specs", "-p", "no:cacheprovider")
    assert result.ret != pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["invalid spec file (1 problem):", PROBLEM])
    # Nothing of the file ran: the problem is found when the spec is loaded, not checked.
    assert "open-group" not in result.stdout.str().replace(PROBLEM, "")

    capsys.readouterr()
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == PROBLEM
