"""Reading an adopter's workflow for ``chimera doctor``: which jobs call Chimera, pinned to
what, and which secrets they pass."""

from __future__ import annotations

from chimera.github.doctor.caller import scan_workflow

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_a_reusable_caller_with_its_pin_and_secrets() -> None:
    text = f"""\
on: {{issues: {{types: [labeled]}}}}
jobs:
  chimera:
    uses: chimera-dev/chimera/.github/workflows/chimera.yml@{SHA}  # v0.2.0
    secrets:
      app-id: ${{{{ secrets.CHIMERA_APP_ID }}}}
      token: ${{{{ secrets.GITHUB_TOKEN }}}}
"""
    scan = scan_workflow(".github/workflows/chimera.yml", text)
    (use,) = scan.uses
    assert use.reusable and use.pinned and use.ref == SHA and use.job == "chimera"
    assert scan.secrets == ("CHIMERA_APP_ID",) and not scan.inherits


def test_refs_that_are_no_pin() -> None:
    for ref, kind in (("v1", "tag or branch"), ("main", "tag or branch"), (SHA[:7], "short SHA")):
        text = f"jobs:\n  c:\n    uses: o/chimera/.github/workflows/chimera.yml@{ref}\n"
        (use,) = scan_workflow("w.yml", text).uses
        assert not use.pinned and use.ref_kind == kind


def test_the_action_used_directly_and_secrets_inherit() -> None:
    text = f"""\
jobs:
  fix:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@{SHA}
      - uses: chimera-dev/chimera@v0.1.0
  again:
    uses: me/chimera/.github/workflows/chimera.yaml@{SHA}
    secrets: inherit
"""
    scan = scan_workflow("w.yml", text)
    assert [(u.job, u.reusable, u.pinned) for u in scan.uses] == [
        ("fix", False, False),
        ("again", True, True),
    ]
    assert scan.inherits


def test_other_repositories_and_sources() -> None:
    text = f"jobs:\n  c:\n    uses: acme/fixer/.github/workflows/chimera.yml@{SHA}\n"
    assert scan_workflow("w.yml", text).uses == ()
    assert scan_workflow("w.yml", text, sources=("acme/fixer",)).uses


def test_a_file_that_is_no_workflow_is_named_not_raised() -> None:
    assert "w.yml: not valid YAML at line " in scan_workflow("w.yml", "jobs:\n  - [\n").problem
    assert "no mapping" in scan_workflow("w.yml", "- a list\n").problem
    assert scan_workflow("w.yml", "jobs: 3\n").uses == ()


def test_what_is_shown_has_no_terminal_escapes() -> None:
    from chimera.github.doctor.report import short

    assert short("main\x1b[2J\x1b]0;owned\x07 x\n y") == "main [2J ]0;owned x y"
    assert short("a" * 100, 10) == "a" * 9 + "…"
