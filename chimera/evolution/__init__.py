"""Self-evolution that never touches the weights: learned skills (AgentSkills ``SKILL.md``
prompt templates), their lifecycle on intervals, and the ACE playbook — every step gated by
:mod:`chimera.eval` measurements. Skills and playbook bullets are data, never code."""
