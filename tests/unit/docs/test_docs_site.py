"""The site builds with ``mkdocs build --strict``, and --strict with mkdocs.yml's validation
fails on a broken link or anchor (MkDocs reports a missing anchor at "info" unless told)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import yaml

Build = Callable[[Path], subprocess.CompletedProcess[str]]


def test_the_site_builds_strict_and_a_planted_broken_anchor_fails_it(
    site_copy: Path, build_site: Build
) -> None:
    clean = build_site(site_copy)
    assert clean.returncode == 0, clean.stderr
    page = site_copy / "docs" / "index.md"
    page.write_text(
        page.read_text("utf-8") + "\nSee [kinds](reference/spec-format.md#no-such-kind).\n",
        "utf-8",
    )
    broken = build_site(site_copy)
    assert broken.returncode != 0
    assert "no-such-kind" in broken.stderr


def test_a_planted_broken_page_link_fails_the_build(site_copy: Path, build_site: Build) -> None:
    page = site_copy / "docs" / "how-to" / "ci.md"
    page.write_text(page.read_text("utf-8") + "\nSee [nowhere](../no-such-page.md).\n", "utf-8")
    broken = build_site(site_copy)
    assert broken.returncode != 0
    assert "no-such-page.md" in broken.stderr


def test_anchor_validation_is_on_in_mkdocs_yml() -> None:
    config = yaml.safe_load((Path(__file__).resolve().parents[3] / "mkdocs.yml").read_text())
    assert config["validation"]["links"]["anchors"] == "warn"
    assert config["validation"]["links"]["not_found"] == "warn"
