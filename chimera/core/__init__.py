"""The engine's core: the Agent loop, the AutonomousAgent (verify-or-revert), the
WorkspaceGuard (snapshot/restore), the Spine and manager review. (The CommandVerifier is on the
ground floor, :mod:`chimera.verifier`, since cascade gates below core use it too.)

Import from the submodules (``chimera.core.workspace``, ``chimera.core.agent``, ...); this
package module stays empty so importing one part never drags in the others.
"""
