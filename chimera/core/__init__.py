"""The engine's core: the Agent loop, the AutonomousAgent (verify-or-revert), the
WorkspaceGuard (snapshot/restore) and the CommandVerifier.

Import from the submodules (``chimera.core.workspace``, ``chimera.core.verifier``, ...); this
package module stays empty so importing one part never drags in the others.
"""
