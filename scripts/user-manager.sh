# shellcheck shell=bash
# A real systemd user manager on a machine that did not boot systemd (a CI VM, a
# container), for tests of the installed units: TestSupport's SystemdUserManager, which
# the private graph's soundscape-bench starts (scripts/lib.sh; it says why the manager
# runs in a mount namespace of its own with a tmpfs on /run/systemd). Sourced, not run;
# needs root and a graph (start_private_pipewire) started first: WirePlumber quits when it
# believes systemd booted but finds no logind. The manager, and every service it
# starts, gets this shell's environment as it is when start_user_manager runs (its
# HOME, and the graph's XDG_RUNTIME_DIR). Where dbus-user-session is installed
# (Debian's default session bus), the manager's dbus.socket takes over
# $XDG_RUNTIME_DIR/bus, as in a desktop session: D-Bus clients that connect after
# start_user_manager use the manager's bus. Its log: $PRIVATE_GRAPH_DIR/logs/user-manager.log.
#
#   start_user_manager            sets USER_MANAGER_PID
#   in_user_manager CMD...        runs CMD in its namespace (systemctl --user …)
#   stop_user_manager
#
# And, beside it, a regular user's own manager, as logind would start one (a cgroup
# delegated to the user, a tmpfs of the user's on XDG_RUNTIME_DIR, inside its
# namespace; SystemdUserManager's account). ENVFILE (`env -0` output) is all the
# environment the manager and its commands get: PATH, HOME and XDG_RUNTIME_DIR at
# least. Its log: $PRIVATE_GRAPH_DIR/logs/user-manager-USER.log.
#
#   start_account_manager USER ENVFILE    sets ACCOUNT_MANAGER_PID
#   as_account CMD...                     runs CMD as USER in its namespace
#   stop_account_manager

start_user_manager() {
    [ -n "${PRIVATE_GRAPH_DIR:-}" ] || die "start_user_manager: start the private graph first (start_private_pipewire)"
    env -0 > "$PRIVATE_GRAPH_DIR/user-manager.env"
    graph_command user-manager "$PRIVATE_GRAPH_DIR/user-manager.env"
    USER_MANAGER_PID=$GRAPH_ANSWER
}

# --root and --wd: the manager's root and working directory. Entering a mount
# namespace moves the caller to the namespace's root, which in a chroot is not
# the manager's.
in_user_manager() {
    nsenter -t "$USER_MANAGER_PID" -m --root --wd -- "$@"
}

stop_user_manager() {
    [ -n "${USER_MANAGER_PID:-}" ] || return 0
    USER_MANAGER_PID=
    [ -z "${PRIVATE_GRAPH_DIR:-}" ] || graph_command stop-user-manager || true
}

start_account_manager() {
    [ -n "${PRIVATE_GRAPH_DIR:-}" ] || die "start_account_manager: start the private graph first (start_private_pipewire)"
    graph_command user-manager "$2" "$1"
    ACCOUNT_MANAGER_PID=$GRAPH_ANSWER ACCOUNT_MANAGER_USER=$1 ACCOUNT_MANAGER_ENV=$2
}

as_account() {
    local environment=()
    mapfile -d '' environment < "$ACCOUNT_MANAGER_ENV"
    nsenter -t "$ACCOUNT_MANAGER_PID" -m --root --wd -- \
        setpriv --reuid="$(id -u "$ACCOUNT_MANAGER_USER")" --regid="$(id -g "$ACCOUNT_MANAGER_USER")" --init-groups \
        env -i "${environment[@]}" "$@"
}

stop_account_manager() {
    [ -n "${ACCOUNT_MANAGER_PID:-}" ] || return 0
    ACCOUNT_MANAGER_PID=
    [ -z "${PRIVATE_GRAPH_DIR:-}" ] || graph_command stop-user-manager "$ACCOUNT_MANAGER_USER" || true
}
