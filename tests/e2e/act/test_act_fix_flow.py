"""The fix workflow under act: a labelled issue becomes one pull request."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from act.conftest import ActWorld


@pytest.mark.slow
@pytest.mark.bwrap
def test_a_labelled_issue_becomes_one_pr_with_one_outcome_comment(act_world: ActWorld) -> None:
    w = act_world
    w.script_writes({"calc.py": w.total_calc})
    number = w.open_issue("Add total()", w.total_task)
    runs = w.deliver(w.label(number), only=["chimera-fix.yml"])
    print(w.explain(runs, 200))
    assert runs[0].jobs == {"decide": "success", "agent": "success", "verify": "success", "publish": "success"}
