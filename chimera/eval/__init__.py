"""Measurement before learning: the capability scorecard, the significant-drop rollback, the
transfer gate, pre-registered paired A/B comparisons and the continuous-evolution benchmark.

Every decision here rests on :mod:`chimera.stats` intervals and paired tests, never on one
number. With scripted models the harnesses measure bookkeeping only, and say so.
"""
