# shellcheck shell=bash disable=SC2034  # the variables are for the scripts that source it
# Shared by the scripts (scripts/run, scripts/test and others): installing what soundscaped needs on
# Debian 12 (or newer) and starting a private, headless PipeWire graph.
# Sourced, not run.

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)

# Build and run time: PipeWire, Opus, SQLite, libseccomp (the daemon's own W^X), sd-bus (the desktop
# companion). Tests add the graph's daemons and tools.
RUNTIME_PACKAGES=(pkg-config libpipewire-0.3-dev libspa-0.2-dev libopus-dev libopusfile-dev libsqlite3-dev libseccomp-dev
                  libsystemd-dev libsndfile1-dev libsoxr-dev libebur128-dev libopusenc-dev pipewire pipewire-bin wireplumber
                  dbus-daemon)
# systemd: busctl, systemd-inhibit and systemd-notify; playerctl and python3-dbusmock for the desktop
# tests; python3-sdnotify for the fixture signer, which speaks sd_notify as a real signer would;
# gdb for the daemon's thread stacks in a failure message (Soundscaped.threadStacks).
TEST_PACKAGES=(sox opus-tools python3 python3-venv procps systemd playerctl python3-dbusmock python3-sdnotify lame gdb)
# The Python packages the tests take from PyPI, in a venv of their own (TEST_VENV), beside
# Debian's python3: python-varlink (our IDL parses with independent varlink tooling), and
# nostr-sdk pinned at 0.37.0, the last release with a NIP-46 remote signer
# (NostrConnectRemoteSigner): the real bunker the signer checks supervise, and its client
# (Tests/EndToEndTests/Fixtures/nip46). Its wheels are built for CPython 3.9 to 3.12 only:
# Debian 12's 3.11 takes it, Debian 13's 3.13 does not. websockets, pinned: the server of
# the fixtures' local relay (relay.py says why not nostr-sdk's MockRelay).
TEST_PYTHON_PACKAGES=(varlink nostr-sdk==0.37.0 websockets==13.1)
TEST_VENV=$ROOT/.build-python
# scripts/test's count of its last run, "N passed, N failed", which .ci/run repeats as its last line.
TEST_COUNT_FILE=$ROOT/.build/test-count
# What the Swift toolchain itself needs on Debian 12 (from swift.org's install guide).
SWIFT_PACKAGES=(binutils git gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libpython3-dev
                libsqlite3-0 libstdc++-12-dev libxml2-dev libz3-dev tzdata unzip zlib1g-dev curl ca-certificates)
SWIFT_VERSION=6.3.1
# scripts/make-soundscapes: sox and opus-tools make the soundscapes, python3-numpy measures them.
SOUNDSCAPE_PACKAGES=(sox opus-tools python3-numpy)
# scripts/lint: shellcheck (swift-format comes with the Swift toolchain).
LINT_PACKAGES=(shellcheck)
# build_release [swift build arguments...]: the release build (packaging/release/build,
# which owns its flags and generated layout) and RELEASE_BIN, where it puts the binaries.
build_release() {
    RELEASE_BIN=$("$ROOT/packaging/release/build" --show-bin-path)
    "$ROOT/packaging/release/build" "$@"
}

# ensure_bench: SOUNDSCAPE_BENCH, the release soundscape-bench (built first) unless it is set
# already: the checks' tools in Swift, one with the tests' harness (Tests/TestSupport) —
# `wav`, `sink-sound` (scripts/README.md lists its modes). The release build links the
# Swift runtime in, so the same binary runs in scripts/check-package-debian13's root.
ensure_bench() {
    if [ -n "${SOUNDSCAPE_BENCH:-}" ]; then
        [ -x "$SOUNDSCAPE_BENCH" ] || die "SOUNDSCAPE_BENCH=$SOUNDSCAPE_BENCH is not an executable"
        export SOUNDSCAPE_BENCH
        return 0
    fi
    ensure_swift
    build_release --product soundscape-bench >&2
    export SOUNDSCAPE_BENCH=$RELEASE_BIN/soundscape-bench
}
# wav level FILE | wav tone FILE: a recording's RMS level and peak in dBFS ("RMS PEAK"), or
# the call's test tone, by TestSupport's audio analysis (soundscape-bench wav; ensure_bench first).
wav() { "$SOUNDSCAPE_BENCH" wav "$@"; }

# ensure_node: a Node.js for the JavaScript signer the tests and check-package run (the machine's
# own, else Debian's nodejs).
ensure_node() {
    command -v node >/dev/null || command -v nodejs >/dev/null || ensure_packages nodejs
}

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else die "need root to run: $* (install sudo or run as root)"; fi
}

# Installs the Debian packages that are not installed yet (nothing to do, no sudo, when all are).
ensure_packages() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "Installing ${missing[*]}"
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

# Puts a Swift 6 toolchain on PATH, downloading swift.org's Debian 12 build into /opt/swift if none is found.
ensure_swift() {
    if ! command -v swift >/dev/null && [ -x /opt/swift/usr/bin/swift ]; then
        export PATH=/opt/swift/usr/bin:$PATH
    fi
    command -v swift >/dev/null && return 0
    ensure_packages "${SWIFT_PACKAGES[@]}"
    local name="swift-$SWIFT_VERSION-RELEASE-debian12"
    local url="https://download.swift.org/swift-$SWIFT_VERSION-release/debian12/swift-$SWIFT_VERSION-RELEASE/$name.tar.gz"
    say "No Swift toolchain found: installing Swift $SWIFT_VERSION into /opt/swift from swift.org"
    local tmp; tmp=$(mktemp -d)
    curl -fL --retry 3 -o "$tmp/swift.tar.gz" "$url" || die "could not download $url"
    as_root mkdir -p /opt/swift
    as_root tar -xzf "$tmp/swift.tar.gz" -C /opt/swift --strip-components=1
    rm -rf "$tmp"
    export PATH=/opt/swift/usr/bin:$PATH
    command -v swift >/dev/null || die "Swift was unpacked but does not run; see https://www.swift.org/install/linux/"
}

# Makes TEST_VENV hold TEST_PYTHON_PACKAGES (nothing to do when it does).
ensure_test_python() {
    # shellcheck disable=SC2016  # the program is Python
    "$TEST_VENV/bin/python3" -c 'import sys, importlib.metadata as m
for spec in sys.argv[1:]:
    name, _, version = spec.partition("==")
    if version and m.version(name) != version or not version and not m.version(name):
        sys.exit(1)' "${TEST_PYTHON_PACKAGES[@]}" 2>/dev/null && return 0
    say "Installing ${TEST_PYTHON_PACKAGES[*]} into $TEST_VENV"
    python3 -m venv "$TEST_VENV"
    "$TEST_VENV/bin/pip" install --quiet --disable-pip-version-check "${TEST_PYTHON_PACKAGES[@]}"
}

# True when a PipeWire server answers for this session.
session_pipewire_running() {
    [ -n "${XDG_RUNTIME_DIR:-}" ] && [ -S "${PIPEWIRE_RUNTIME_DIR:-$XDG_RUNTIME_DIR}/${PIPEWIRE_REMOTE:-pipewire-0}" ] \
        && timeout 3 pw-cli info 0 >/dev/null 2>&1
}

# The private graph: dbus-daemon, pipewire and wireplumber in a directory of their own,
# kept away from hardware, as the Swift tests make it (TestSupport's PipeWireGraph, run
# by `soundscape-bench graph` as a coproc; ensure_bench builds it). Its daemons have
# HOME and XDG homes of their own in the graph's directory (a default sink chosen here
# is not remembered in the caller's ~/.local/state); the caller keeps its own and
# exports only what joins the graph: XDG_RUNTIME_DIR (= PRIVATE_GRAPH_DIR, which holds
# the daemons' logs in logs/), PIPEWIRE_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS and the
# graph's cleanup markers (what is started with them is stopped with the graph), all
# unset again by stop_private_pipewire.
# The graph ignores the terminal's Ctrl-C (meant for the caller's daemon), and stops
# with stop_private_pipewire, or when this shell ends (soundscape-bench sees its
# parent go, or its stdin end).
#
#   start_private_pipewire [SINK [OPTION...]]
#                                   the graph, with the null sink SINK (default
#                                   soundscape-speaker); OPTIONs go to soundscape-bench graph
#   create_null_sink NAME           another null sink (made again by restart_private_pipewire)
#   set_default_sink NAME           NAME the default sink, once WirePlumber made it so
#   restart_private_pipewire        pipewire and wireplumber restarted, as
#                                   `systemctl --user restart pipewire` does; sinks made again
#   require_no_devices              fails if the graph has a device (hardware it must not touch)
#   graph_command COMMAND...        any of `soundscape-bench graph --help`'s commands; the
#                                   answer's value in GRAPH_ANSWER (each fails, with the
#                                   graph's message, when the command did)
#   stop_private_pipewire
start_private_pipewire() {
    local sink=${1:-soundscape-speaker} line
    shift || true
    ensure_bench
    unset PIPEWIRE_REMOTE
    PRIVATE_GRAPH_EXPORTS=()
    coproc PRIVATE_GRAPH { exec "$SOUNDSCAPE_BENCH" graph --no-hardware "$ROOT/scripts/no-hardware/wireplumber" --sink "$sink" "$@"; }
    # shellcheck disable=SC2153  # coproc sets PRIVATE_GRAPH_PID
    PRIVATE_GRAPH_BENCH=$PRIVATE_GRAPH_PID
    while :; do
        read -r line <&"${PRIVATE_GRAPH[0]}" || die "the private graph did not start (soundscape-bench graph ended)"
        case $line in
            ready) break ;;
            [A-Z]*=*) export "${line?}"; PRIVATE_GRAPH_EXPORTS+=("${line%%=*}") ;;
            *) die "the private graph did not start: $line" ;;
        esac
    done
    PRIVATE_GRAPH_DIR=$XDG_RUNTIME_DIR
}

graph_command() {
    if [ -z "${PRIVATE_GRAPH_DIR:-}" ] || [ -z "${PRIVATE_GRAPH[1]:-}" ]; then
        printf 'error: graph_command %s: no private graph runs\n' "$*" >&2; return 1
    fi
    printf '%s\n' "$*" >&"${PRIVATE_GRAPH[1]}"
    local answer
    if ! read -r answer <&"${PRIVATE_GRAPH[0]}"; then
        printf "error: graph_command %s: the private graph's soundscape-bench ended\n" "$*" >&2; return 1
    fi
    case $answer in
        ok) GRAPH_ANSWER= ;;
        "ok "*) GRAPH_ANSWER=${answer#ok } ;;
        *) printf 'error: graph_command %s: %s\n' "$*" "${answer#error: }" >&2; return 1 ;;
    esac
}

create_null_sink() { graph_command sink "$1"; }
set_default_sink() { graph_command default "$1"; }
restart_private_pipewire() { graph_command restart; }
require_no_devices() { graph_command devices; }

stop_private_pipewire() {
    [ -n "${PRIVATE_GRAPH_DIR:-}" ] || return 0
    PRIVATE_GRAPH_DIR=
    if [ -n "${PRIVATE_GRAPH[1]:-}" ] && kill -0 "$PRIVATE_GRAPH_BENCH" 2>/dev/null; then
        { printf 'stop\n' >&"${PRIVATE_GRAPH[1]}"; read -r _ <&"${PRIVATE_GRAPH[0]}"; } 2>/dev/null || true
    fi
    wait "$PRIVATE_GRAPH_BENCH" 2>/dev/null || true
    # What joined the graph now joins nothing: a session started next is not shadowed by it.
    unset "${PRIVATE_GRAPH_EXPORTS[@]}"
}

# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.1 s until it succeeds.
wait_for() {
    local seconds=$1 what=$2; shift 2
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || die "timed out after ${seconds}s waiting for $what"
        sleep 0.1
    done
}
