# shellcheck shell=bash
# The bash completion loads and completes `play` with the running daemon's soundscapes.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only completion` runs it alone.

need_playing
say "Shell completion"
# shellcheck disable=SC2016  # expanded by the inner bash
completions=$(in_user_manager bash -c '
    source /usr/share/bash-completion/bash_completion
    _completion_loader soundscapectl
    COMP_WORDS=(soundscapectl play ""); COMP_CWORD=2; COMP_LINE="soundscapectl play "; COMP_POINT=${#COMP_LINE}
    _soundscapectl soundscapectl "" play
    echo "${COMPREPLY[*]}"')
echo "soundscapectl play <TAB>: $completions"
for id in ocean-waves rain wind brown-noise; do
    [[ " $completions " == *" $id "* ]] || die "soundscapectl play <TAB> does not offer $id (got: $completions)"
done
