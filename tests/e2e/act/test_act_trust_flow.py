"""The trust chain under act: the agent's artifact is swapped after verify judged it (a patch
that differs from the one verify hashed) and publish, which re-hashes it, refuses it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from chimera.testing.github_fake import FakeFault

if TYPE_CHECKING:
    from act.conftest import ActWorld

EXTRA_FILE = """\
diff --git a/evil.py b/evil.py
new file mode 100644
--- /dev/null
+++ b/evil.py
@@ -0,0 +1 @@
+import os
"""


@pytest.mark.slow
@pytest.mark.bwrap
def test_a_patch_swapped_after_verify_is_refused_by_publish(act_world: ActWorld) -> None:
    w = act_world
    w.script_writes({"calc.py": w.total_calc})
    issue = w.open_issue("Add total()", w.total_task)
    run_id, name = w.next_run, "chimera-run-attempt-1"
    swapped: list[str] = []

    def swap(files: dict[str, bytes]) -> None:
        (patch,) = [n for n in files if n.rsplit("/", 1)[-1] == "patch.diff"]
        files[patch] = files[patch] + EXTRA_FILE.encode()
        swapped.append(patch)

    def swap_once_verified() -> None:
        # The app and tick jobs find the installation too, earlier: only the request after
        # verify's result is in the run's log is publish's.
        logs = w.runner.root.glob(f"run-{run_id}-*/act.log")
        verified = any('"jobID":"verify"' in line and '"jobResult"' in line
                       for log in logs for line in log.read_text("utf-8").splitlines())  # fmt: skip
        if verified and not swapped:
            w.rewrite_artifact(run_id, name, swap)

    # publish's first request (its App token step finds the installation) comes after verify
    # finished and before publish downloads the artifact: the swap happens there.
    w.fake.inject(
        FakeFault(
            method="GET",
            path=r"^/repos/octo/app/installation$",
            status=None,
            times=10,
            before=swap_once_verified,
        )
    )
    (fix,) = w.deliver(w.label(issue))
    assert fix.run_id == run_id and swapped, w.explain([fix])
    assert w.ran(fix) == dict.fromkeys(
        ("app", "decide", "agent", "verify", "publish", "tick"), "success"
    )
    assert w.outputs(fix, "verify")["verdict"] == "passed"
    assert w.outputs(fix, "publish")["status"] == "blocked", w.explain([fix])
    assert w.pulls() == [] and w.repo.head_sha(f"chimera/issue-{issue}") is None
    assert [k for k, _ in w.outcome_markers(issue)] == ["blocked"]
    assert "not the one verify judged" in w.comments(issue)[-1]
    assert "chimera:running" not in w.labels(issue)  # the slot is free again
