"""The publish step: what it acts on re-derived, guards, push and PR, memory and learning."""
