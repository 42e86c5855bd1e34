"""Governance: the trust kernel and its rule set, the taint layer, the secret redactor and
the append-only audit log (``check_drift`` lives in :mod:`chimera.spec.drift`)."""
