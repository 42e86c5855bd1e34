"""Write action.yml's composite steps as a workflow, so actionlint (which lints workflows, not
action metadata) checks their expressions, contexts and step syntax too.

Usage: python scripts/action_workflow.py action.yml OUT.yml

Each action input becomes a ``workflow_call`` input of type string (defaults dropped: they may
be expressions, which workflow inputs do not allow); the steps become one job's steps.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python scripts/action_workflow.py action.yml OUT.yml", file=sys.stderr)
        return 2
    action = yaml.safe_load(Path(argv[0]).read_text(encoding="utf-8"))
    inputs = {
        name: {"type": "string", "required": False, "description": str(spec.get("description"))}
        for name, spec in action.get("inputs", {}).items()
    }
    workflow = {
        "name": f"action.yml as a workflow ({argv[0]})",
        "on": {"workflow_call": {"inputs": inputs}},
        "permissions": {},
        "jobs": {
            "action": {
                "runs-on": "ubuntu-latest",
                "steps": action["runs"]["steps"],
            }
        },
    }
    Path(argv[1]).write_text(yaml.safe_dump(workflow, sort_keys=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
