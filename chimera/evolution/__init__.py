"""Self-evolution: what past runs teach later ones (experience buffer, skills, playbooks)."""
