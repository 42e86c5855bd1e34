"""Governance: check_drift, the audit log, the trust kernel and the taint layer."""
