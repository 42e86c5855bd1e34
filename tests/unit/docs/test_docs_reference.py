"""The generated reference pages are what the code generates now; a stale one fails."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_the_committed_reference_pages_are_current(reference: ModuleType) -> None:
    assert reference.stale(DOCS) == [], "run `python scripts/docs_reference.py --write`"


def test_a_stale_or_missing_generated_page_fails_the_check(
    reference: ModuleType, site_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = site_copy / "docs"
    assert reference.main(["--check", "--docs-dir", str(docs)]) == 0
    cli = docs / "reference" / "cli.md"
    cli.write_text(cli.read_text("utf-8").replace("--max-evidence N", "--max-evidence K"), "utf-8")
    (docs / "reference" / "action.md").unlink()
    assert reference.main(["--check", "--docs-dir", str(docs)]) == 1
    err = capsys.readouterr().err
    assert "reference/cli.md: stale generated page" in err
    assert "reference/action.md: stale generated page" in err
    assert reference.main(["--write", "--docs-dir", str(docs)]) == 0
    assert reference.stale(docs) == []


def test_every_subcommand_and_action_input_is_on_its_page() -> None:
    import argparse

    import yaml

    from chimera.cli import build_parser

    cli = (DOCS / "reference" / "cli.md").read_text("utf-8")
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name in sub.choices:
        assert f"\n## chimera {name}\n" in cli, name
    assert "`--chimera-spec PATH`" in cli
    action = yaml.safe_load((DOCS.parent / "action.yml").read_text("utf-8"))
    page = (DOCS / "reference" / "action.md").read_text("utf-8")
    for name in [*action["inputs"], *action["outputs"]]:
        assert f"| `{name}` |" in page, name
    config = (DOCS / "reference" / "configuration.md").read_text("utf-8")
    for table in ("[check]", "[models]", "[sandbox]", "[heldout]", "[[cascades.NAME.tiers]]"):
        assert f"## `{table}`" in config, table
    assert '## `[[cascades.NAME.tiers.gates]]` (`kind = "criteria"`)' in config


def test_the_architecture_page_lists_the_layers_in_their_order() -> None:
    import importlib.util
    import re

    root = DOCS.parent
    spec = importlib.util.spec_from_file_location("docs_layers", root / "scripts" / "layers.py")
    assert spec is not None and spec.loader is not None
    layers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layers)
    page = (DOCS / "explanation" / "architecture.md").read_text("utf-8")
    rows = re.findall(r"^\| (ground floor|`[a-z]+/`(?:, `[a-z]+/`)*) \|", page, re.M)
    shown = [tuple(re.findall(r"`([a-z]+)/`", row)) for row in rows[1:]]
    expected = [group for group in layers.LAYERS[1:] if group not in (("__main__",), ("testing",))]
    assert rows[0] == "ground floor"
    assert shown == expected
    assert "to come" not in page
