"""Suite-wide hooks.

``CHIMERA_REQUIRE_SANDBOX_TESTS=1`` (set by ``.ci/run``) turns a skipped test marked ``bwrap``
into a failure: the sandbox is the hard boundary of autonomous runs, and CI must never report
it "tested" when its tests were skipped for want of bubblewrap, ``setpriv`` or user
namespaces.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

REQUIRE_SANDBOX_ENV = "CHIMERA_REQUIRE_SANDBOX_TESTS"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    required = os.environ.get(REQUIRE_SANDBOX_ENV, "") not in ("", "0")
    if not (required and report.skipped and item.get_closest_marker("bwrap")):
        return
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    report.outcome = "failed"
    report.longrepr = f"{REQUIRE_SANDBOX_ENV}=1: a sandbox test may not be skipped ({reason})"
