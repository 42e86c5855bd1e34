"""The README's "Running the Action, from zero" against what ships: every workflow, secret,
input, label and artifact it names exists under that name, and every shipped workflow is in
its table (a guide followed literally must not meet a name that is not there)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GUIDE = README[README.index("### Running the Action, from zero") :]
GUIDE = GUIDE[: GUIDE.index("\n## ")]
EXAMPLES = ROOT / "examples"


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_every_shipped_workflow_is_in_the_guide_and_counted() -> None:
    shipped = sorted(p.name for p in (EXAMPLES / "workflows").glob("*.yml"))
    rows = re.findall(r"^\| `(chimera-[a-z-]+\.yml)` \|", GUIDE, re.M)
    assert sorted(rows) == shipped
    words = {3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight"}
    assert f"{words[len(shipped)]} ship in `examples/workflows/`" in GUIDE


def test_every_secret_the_guide_names_is_used_and_every_used_one_named() -> None:
    section = GUIDE.split("**2. Secrets")[1].split("**3.")[0]
    first_cells = re.findall(r"^\| ([^|]+) \|", section, re.M)
    named = {n for cell in first_cells for n in re.findall(r"`([A-Z][A-Z0-9_]+)`", cell)}
    texts = [p.read_text("utf-8") for p in EXAMPLES.glob("*/*.yml")]
    used = {s for t in texts for s in re.findall(r"secrets\.([A-Z0-9_]+)", t)}
    assert named == used


def test_every_input_the_guide_names_is_an_action_input() -> None:
    inputs = set(load(ROOT / "action.yml")["inputs"])
    mentioned = set(re.findall(r"`([a-z]+(?:-[a-z]+)+)`", GUIDE))
    known_other = {
        "tests-pass",
        "spec-change",
        "risk:high",
        "merge-group",
        "create-github-app-token",
    }
    candidates = {m for m in mentioned if m not in known_other and not m.startswith("chimera")}
    assert {"deps-dir", "api-base", "litellm-settings", "allow-self-approval"} <= candidates
    assert candidates <= inputs, f"not inputs of action.yml: {candidates - inputs}"


def test_artifacts_and_retention_match_the_action() -> None:
    action = load(ROOT / "action.yml")
    uploads = [s for s in action["runs"]["steps"] if "upload-artifact" in str(s.get("uses"))]
    names = {s["with"]["name"] for s in uploads}
    assert names == {
        "${{ steps.artifact.outputs.name }}",
        "${{ inputs.artifact-name }}-publish-attempt-${{ github.run_attempt }}",
        "${{ inputs.artifact-name }}-heldout-attempt-${{ github.run_attempt }}",
    }
    naming = next(s for s in action["runs"]["steps"] if s.get("id") == "artifact")
    assert "${CHIMERA_ARTIFACT_NAME}-attempt-${CHIMERA_RUN_ATTEMPT}" in naming["run"]
    assert action["inputs"]["artifact-name"]["default"] == "chimera-run"
    assert "`chimera-run-attempt-<n>`" in GUIDE and "`chimera-run-publish-attempt-<n>`" in GUIDE
    assert "`chimera-run-heldout-attempt-<n>`" in GUIDE
    (days,) = {s["with"]["retention-days"] for s in uploads}
    assert f"**{days} days**" in GUIDE


def test_the_set_up_scripts_and_providers_the_guide_links_exist() -> None:
    for link in re.findall(r"\]\((examples/[^)]+)\)", GUIDE):
        assert (ROOT / link).is_file(), link
    for name in ("uv.sh", "npm.sh"):
        assert (EXAMPLES / "setup" / name).is_file()
