"""Write the learning page's table of the gates under simulation, or check it is current.

The table (gate × n → false-action rate under no true effect, the bar it must stay under,
whether the minimum-sample rule refuses at n = 2, and power at n = 20 and 50 for a stated
effect) is computed by :func:`chimera.evolution.calibration.simulate` — seeded, so the same code
gives the same table — and written to ``docs/snippets/learning-gates.md``, which the learning
page includes.

Usage::

    python scripts/learning_gates.py --write     # regenerate the snippet
    python scripts/learning_gates.py --check     # exit 1 when it is stale

``tests/unit/evolution/test_evolution_gate_calibration.py`` runs the same simulation, asserts every
bound, and compares its table with the snippet (so CI fails on a stale one).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SNIPPET = ROOT / "docs" / "snippets" / "learning-gates.md"


def table() -> str:
    from chimera.evolution.calibration import render_markdown, simulate

    return render_markdown(simulate())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate the snippet")
    mode.add_argument("--check", action="store_true", help="exit 1 when the snippet is stale")
    args = parser.parse_args(argv)
    text = table()
    if args.write:
        SNIPPET.write_text(text, encoding="utf-8")
        sys.stdout.write(f"wrote {SNIPPET.relative_to(ROOT)}\n")
        return 0
    current = SNIPPET.read_text(encoding="utf-8") if SNIPPET.is_file() else ""
    if current != text:
        sys.stdout.write(f"{SNIPPET.relative_to(ROOT)} is stale: run --write\n")
        return 1
    sys.stdout.write(f"{SNIPPET.relative_to(ROOT)} is current\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
