# shellcheck shell=bash
# apt-get purge leaves none of the package's files behind.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only purge` runs it alone.

need_session
say "Purge"
systemctl_user stop soundscaped-desktop.service soundscaped.service soundscaped.socket
stop_user_manager
apt-get purge -y -q soundscaped >/dev/null
left=()
while read -r path; do
    # Directories the package shares with others (/usr, /usr/share/man …) stay; its own files must not.
    if [ -e "$path" ] && [ ! -d "$path" ]; then left+=("$path"); fi
    if [ -d "$path" ] && [[ "$path" == *soundscaped* ]]; then left+=("$path"); fi
done < "$FILES"
for link in /etc/systemd/user/sockets.target.wants/soundscaped.socket \
            /etc/systemd/user/graphical-session.target.wants/soundscaped-desktop.service; do
    if [ -e "$link" ] || [ -L "$link" ]; then left+=("$link"); fi
done
[ ${#left[@]} -eq 0 ] || die "apt-get purge left behind: ${left[*]}"
