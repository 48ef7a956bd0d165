# shellcheck shell=bash
# varlinkctl (systemd 255 and newer): info, introspect, call, call --more, and
# validate-idl of the interface the daemon serves; without one, it says so and
# passes, unless --require-varlinkctl.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only varlinkctl` runs it alone.

need_events
SOCKET=$XDG_RUNTIME_DIR/soundscaped/control.sock
if command -v varlinkctl >/dev/null; then
    say "varlinkctl (systemd's generic varlink client)"
    info=$(varlinkctl info "$SOCKET") || die "varlinkctl info failed"
    grep -Eq "^ *Product: soundscaped$" <<<"$info" || die "varlinkctl info names no product soundscaped: $info"
    grep -Eq "^ *Version: $VERSION$" <<<"$info" || die "varlinkctl info does not say version $VERSION: $info"
    grep -q "io.soundscaped.Player" <<<"$info" || die "varlinkctl info lists no io.soundscaped.Player: $info"
    # introspect parses the IDL; where it cannot, it warns and prints the raw text.
    introspected=$(varlinkctl introspect "$SOCKET" io.soundscaped.Player 2>"$WORK/introspect.err") \
        || die "varlinkctl introspect failed: $(cat "$WORK/introspect.err")"
    [ ! -s "$WORK/introspect.err" ] || die "varlinkctl introspect warns: $(cat "$WORK/introspect.err")"
    grep -q "^method Subscribe() -> (" <<<"$introspected" || die "varlinkctl introspect shows no Subscribe: $introspected"
    varlinkctl call "$SOCKET" org.varlink.service.GetInterfaceDescription '{"interface": "io.soundscaped.Player"}' \
        | python3 -c 'import json, sys; sys.stdout.write(json.load(sys.stdin)["description"])' > "$WORK/player.varlink"
    varlinkctl validate-idl "$WORK/player.varlink" >/dev/null || die "varlinkctl validate-idl refuses the interface"
    [ "$(varlinkctl call "$SOCKET" io.soundscaped.Player.GetStatus '{}' \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["status"]["state"])')" = playing ] \
        || die "varlinkctl call GetStatus does not say playing"
    # call --more: the snapshot, then one reply per event, as long as the connection lasts.
    volume=$(status_field volume)
    varlinkctl call --more --json=short "$SOCKET" io.soundscaped.Player.Subscribe '{}' > "$WORK/subscribe.jsonl" 2>&1 &
    BACKGROUND+=($!)
    wait_for 5 "varlinkctl call --more Subscribe's snapshot" grep -q '"reason":"snapshot"' "$WORK/subscribe.jsonl"
    varlinkctl call "$SOCKET" io.soundscaped.Player.SetVolume "{\"volume\": $((volume == 40 ? 41 : 40))}" >/dev/null \
        || die "varlinkctl call SetVolume failed"
    wait_for 5 "varlinkctl call --more Subscribe to stream the volume change" grep -q '"reason":"volumeChanged"' "$WORK/subscribe.jsonl"
    ctl volume "$volume" >/dev/null
    say "varlinkctl info, introspect, call, call --more and validate-idl work against the installed daemon"
elif [ "$REQUIRE_VARLINKCTL" = 1 ]; then
    die "no varlinkctl here (systemd 255 and newer have it)"
else
    say "No varlinkctl here (systemd $(systemctl --version | awk 'NR == 1 { print $2 }'); it came in 255): not checked"
fi
