#!/usr/bin/env bash
# Make Chimera's strict sandbox (bubblewrap) work on a GitHub-hosted runner.
#
# Only the modes that run model-written code need it (agent, verify); the others return at
# once. Steps: install bubblewrap if it is missing; if it cannot create its namespaces
# (Ubuntu 24.04 restricts unprivileged user namespaces through AppArmor), load a per-binary
# AppArmor profile for bwrap that allows `userns` (the form Canonical ships for such
# programs), and only if loading it fails, turn the restriction off with the sysctl. If
# bubblewrap still cannot start, fail with one line: the job never runs model-written code
# unsandboxed by accident. `sandbox: scrubbed` (CHIMERA_SANDBOX=scrubbed) is the loud opt-out.
#
# Environment: CHIMERA_MODE (the action's mode), CHIMERA_SANDBOX (empty or "scrubbed"),
# CHIMERA_APPARMOR_DIR (profile folder, default /etc/apparmor.d; tests point it elsewhere).
set -euo pipefail

mode="${CHIMERA_MODE:-}"
case "$mode" in
    agent | verify) ;;
    *)
        echo "sandbox set-up: not needed in mode '${mode:-check}'"
        exit 0
        ;;
esac
if [ "${CHIMERA_SANDBOX:-}" = "scrubbed" ]; then
    echo "::warning::sandbox: scrubbed — model-written code runs without isolation; verdicts are advisory"
    exit 0
fi

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

probe() {
    # The same namespaces Chimera's sandbox asks for; quiet unless asked.
    bwrap --unshare-all --cap-drop ALL --die-with-parent --new-session \
        --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib \
        --symlink usr/lib64 /lib64 --dev /dev --proc /proc --tmpfs /tmp -- /usr/bin/true
}

if ! command -v bwrap >/dev/null 2>&1; then
    echo "sandbox set-up: installing bubblewrap"
    as_root apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq bubblewrap >/dev/null
fi
if ! command -v prlimit >/dev/null 2>&1; then
    echo "::error::sandbox set-up: prlimit (util-linux) not found; the sandbox cannot set its limits"
    exit 1
fi

if reason="$(probe 2>&1)"; then
    echo "sandbox set-up: bubblewrap works ($(bwrap --version))"
    exit 0
fi
echo "sandbox set-up: bubblewrap cannot start: ${reason##*$'\n'}"

bwrap_path="$(command -v bwrap)"
profile_dir="${CHIMERA_APPARMOR_DIR:-/etc/apparmor.d}"
if command -v apparmor_parser >/dev/null 2>&1; then
    profile="$profile_dir/bwrap"
    echo "sandbox set-up: loading an AppArmor profile that allows user namespaces for $bwrap_path"
    as_root tee "$profile" >/dev/null <<PROFILE
abi <abi/4.0>,
include <tunables/global>

profile bwrap $bwrap_path flags=(unconfined) {
  userns,

  # Site-specific additions and overrides. See local/README for details.
  include if exists <local/bwrap>
}
PROFILE
    if as_root apparmor_parser -r "$profile" && reason="$(probe 2>&1)"; then
        echo "sandbox set-up: bubblewrap works with the AppArmor profile"
        exit 0
    fi
    echo "sandbox set-up: the profile did not help: ${reason##*$'\n'}"
fi

echo "sandbox set-up: falling back to kernel.apparmor_restrict_unprivileged_userns=0"
if as_root sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 >/dev/null &&
    reason="$(probe 2>&1)"; then
    echo "sandbox set-up: bubblewrap works with the sysctl"
    exit 0
fi
echo "::error::sandbox set-up: the strict sandbox cannot start: ${reason##*$'\n'} (set the action input sandbox: scrubbed to run without isolation, weaker)"
exit 1
