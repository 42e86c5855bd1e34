"""Suite-wide hooks.

``CHIMERA_REQUIRE_SANDBOX_TESTS=1`` (set by ``.ci/run``) turns a skipped test marked ``bwrap``
into a failure: the sandbox is the hard boundary of autonomous runs, and CI must never report
it "tested" when its tests were skipped for want of bubblewrap, ``setpriv`` or user
namespaces.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import pytest

from chimera.testing.dist import Dists, VenvCache, build_dists

REQUIRE_SANDBOX_ENV = "CHIMERA_REQUIRE_SANDBOX_TESTS"
DIST_ENV = "CHIMERA_DIST_DIR"
"""A folder holding the sdist and wheel already built (``scripts/dev test`` builds them once);
unset, the first test marked ``wheel`` builds them."""
ROOT = Path(__file__).resolve().parent.parent


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


def _shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every xdist worker of this run shares (the workers' base temp's parent)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    """The sdist and the wheel (built from the sdist) of this checkout."""
    given = os.environ.get(DIST_ENV, "").strip()
    if given:
        return build_dists_result(Path(given))
    from filelock import FileLock

    folder = _shared(tmp_path_factory) / "chimera-dist"
    with FileLock(str(folder) + ".lock"):
        if not (folder / ".done").exists():
            build_dists(ROOT, folder)
            (folder / ".done").write_text("ok\n", encoding="utf-8")
    return build_dists_result(folder)


def build_dists_result(folder: Path) -> Dists:
    (sdist,) = folder.glob("*.tar.gz")
    (wheel,) = folder.glob("*.whl")
    return Dists(sdist, wheel)


@pytest.fixture(scope="session")
def venvs(tmp_path_factory: pytest.TempPathFactory, dists: Dists) -> VenvCache:
    """Fresh environments with the wheel installed, shared by the tests of the run."""
    return VenvCache(_shared(tmp_path_factory) / "chimera-venvs", dists)
