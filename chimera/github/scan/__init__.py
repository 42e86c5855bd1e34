"""Scan a patch before it is pushed: the publish job's last look at agent-written changes.

(DESIGN.md step 5.) :func:`scan_patch` reads a ``git diff --binary`` patch the way git applies
it and returns a :class:`ScanResult` of :class:`Finding` records, each naming a rule, a path and
a verdict — ``block`` (rejected, reported, never pushed), ``review`` (published as a draft with
the reason, never auto-merged) — and never a secret value. The parts:

* :mod:`~chimera.github.scan.paths` — paths from git's NUL-separated output (never unquoted by
  hand), modes and added lines per file, and the rescan of the tree after ``git apply`` in a
  temporary index; a path the scan cannot read blocks;
* :mod:`~chimera.github.scan.table` — the one table of files that make CI, bots or a
  person's tools run code, why, and the verdict (rendered for the docs by
  ``scripts/docs_reference.py``): ``.chimera/``, ``.github/``, any ``action.yml``, the paths a
  base workflow ``uses:``, CI files, CODEOWNERS and escaping symlinks block; new symlinks,
  executables, ``.gitattributes``, submodules, build hooks, pytest plugin loading, other
  forges' workflows, Renovate tasks, pre-commit hook definitions, VS Code folder-open tasks,
  git hooks, container and docs builds, dependency manifests and Chimera's own settings go to
  review; :mod:`~chimera.github.scan.rules` matches its rows (reading both sides of a file
  whose verdict depends on what it says, :mod:`~chimera.github.scan.readers`), and
  :mod:`~chimera.github.scan.uses` reads the base commit's ``uses:``;
* :mod:`~chimera.github.scan.secrets` — known secret formats in added lines, file names and
  messages, in every spelling the scan undoes (split, concatenated, reversed, base64, hex);
  secret-bearing files; high entropy;
* :mod:`~chimera.github.scan.code` — added code that fetches and executes or sends the
  environment, judged by the governance rule families;
* :mod:`~chimera.github.scan.core` — :func:`scan_patch`, which runs them all.
"""

from chimera.github.scan.core import scan_patch
from chimera.github.scan.model import Finding, ScanLimits, ScanResult
from chimera.github.scan.secrets import shannon_entropy

__all__ = ["Finding", "ScanLimits", "ScanResult", "scan_patch", "shannon_entropy"]
