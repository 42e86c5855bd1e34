"""Chimera's pytest plugin (thin; imports nothing heavy)."""
