"""The patch scan's table (``chimera.github.scan.table``) as Markdown, for the docs.

A page holds the table between two marker lines; this script fills or checks that region::

    python scripts/scan_table.py                  # print the table
    python scripts/scan_table.py --write PAGE     # replace the region between the markers
    python scripts/scan_table.py --check PAGE     # exit 1 if the region is stale

The markers are ``<!-- scan-table:start -->`` and ``<!-- scan-table:end -->``, each alone on
its line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from chimera.github.scan.table import render_markdown

START = "<!-- scan-table:start -->"
END = "<!-- scan-table:end -->"


class MarkersMissing(ValueError):
    """The page lacks the markers (or has them out of order)."""


def splice(page: str, table: str) -> str:
    """``page`` with the text between the marker lines replaced by ``table``.

    Raises:
        MarkersMissing: a marker line is missing, repeated or out of order.
    """
    lines = page.splitlines(keepends=True)
    starts = [i for i, ln in enumerate(lines) if ln.strip() == START]
    ends = [i for i, ln in enumerate(lines) if ln.strip() == END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise MarkersMissing(f"the page needs one `{START}` line and one `{END}` line after it")
    return "".join(lines[: starts[0] + 1]) + table + "".join(lines[ends[0] :])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", type=Path, metavar="PAGE", help="fill the page's table")
    group.add_argument("--check", type=Path, metavar="PAGE", help="exit 1 if it is stale")
    args = parser.parse_args(argv)
    table = render_markdown()
    page_path: Path | None = args.write or args.check
    if page_path is None:
        sys.stdout.write(table)
        return 0
    try:
        page = page_path.read_text(encoding="utf-8")
        fresh = splice(page, table)
    except (OSError, MarkersMissing) as exc:
        sys.stderr.write(f"{page_path}: {exc}\n")
        return 2
    if args.write:
        page_path.write_text(fresh, encoding="utf-8")
        return 0
    if fresh != page:
        sys.stderr.write(
            f"{page_path}: the scan table is stale: run python scripts/scan_table.py "
            f"--write {page_path}\n"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
