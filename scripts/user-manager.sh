# shellcheck shell=bash
# A real systemd user manager on a machine that did not boot systemd (a CI VM, a
# container), for tests of the installed units. Sourced, not run; needs root and
# scripts/lib.sh.
#
# systemd --user refuses to run unless /run/systemd/system exists, and that path
# must not appear on the host (other tools would then believe systemd booted). So
# the manager runs in a private mount namespace with a tmpfs on /run/systemd, and
# every systemctl call enters that namespace (in_user_manager). Start PipeWire and
# WirePlumber before it (start_private_pipewire): WirePlumber quits when it
# believes systemd booted but finds no logind. The manager, and every service it
# starts, uses this shell's XDG_RUNTIME_DIR: the private graph's. Where
# dbus-user-session is installed (Debian's default session bus), the manager's
# dbus.socket takes over $XDG_RUNTIME_DIR/bus, as in a desktop session: D-Bus
# clients that connect after start_user_manager use the manager's bus.
#
#   start_user_manager            sets USER_MANAGER_PID
#   in_user_manager CMD...        runs CMD in its namespace (systemctl --user …)
#   stop_user_manager

start_user_manager() {
    [ -n "${XDG_RUNTIME_DIR:-}" ] || die "start_user_manager: XDG_RUNTIME_DIR is not set"
    mkdir -p /run/systemd
    # unshare execs: the pid is the manager's. --propagation private: our mounts stay ours.
    unshare -m --propagation private sh -c \
        'mount -t tmpfs -o mode=0755 tmpfs /run/systemd && mkdir /run/systemd/system && exec /lib/systemd/systemd --user' \
        >"$XDG_RUNTIME_DIR/user-manager.log" 2>&1 &
    USER_MANAGER_PID=$!
    wait_for 15 "the systemd user manager to answer" in_user_manager systemctl --user show-environment
}

# --root and --wd: the manager's root and working directory. Entering a mount
# namespace moves the caller to the namespace's root, which in a chroot is not
# the manager's.
in_user_manager() {
    nsenter -t "$USER_MANAGER_PID" -m --root --wd -- "$@"
}

stop_user_manager() {
    [ -n "${USER_MANAGER_PID:-}" ] || return 0
    kill -TERM "$USER_MANAGER_PID" 2>/dev/null || true
    local _
    for _ in $(seq 1 50); do kill -0 "$USER_MANAGER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$USER_MANAGER_PID" 2>/dev/null || true
    wait "$USER_MANAGER_PID" 2>/dev/null || true
    USER_MANAGER_PID=
}
