"""Re-export of :mod:`chimera.orchestration.agent_profile` (moved there so the CLI needs nothing
of ``chimera.github``); kept for callers of the old path."""

from chimera.orchestration.agent_profile import (
    PROFILE_KEY,
    ProfileRecord,
    read_profile,
    reapply_profile,
    record_profile,
)

__all__ = ["PROFILE_KEY", "ProfileRecord", "read_profile", "reapply_profile", "record_profile"]
