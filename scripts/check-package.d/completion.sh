# shellcheck shell=bash
# The installed bash, zsh and fish completions load from where each shell looks and
# offer what comes next: `play` the running daemon's soundscapes and saved mixes,
# `delete` the saved mixes, `set` the preferences and each one's values, `volume`
# the presets (fish where it is installed).
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only completion` runs it alone.

ensure_packages zsh bash-completion
need_playing
say "Shell completion"

# bash_complete LINE: the words bash's completion offers at the end of LINE, on one line.
bash_complete() {
    # shellcheck disable=SC2016  # expanded by the inner bash
    in_user_manager bash -c '
        source /usr/share/bash-completion/bash_completion
        _completion_loader soundscapectl
        read -ra COMP_WORDS <<< "$1"
        [[ $1 == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE=$1; COMP_POINT=${#COMP_LINE}
        _soundscapectl soundscapectl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        echo "${COMPREPLY[*]}"' bash "$1"
}

# An interactive zsh or fish on a pseudo-terminal (zsh's zpty), as a user has it, is
# given LINE and a key bound to its completion; what the completion offers is written
# to a file, one candidate a line, then "-- done --". zsh: its completion system
# (compinit, from the default fpath, so /usr/share/zsh/vendor-completions) with
# compadd wrapped to note each candidate; fish: `complete -C` of the line, which
# autoloads /usr/share/fish/vendor_completions.d.
PTY_COMPLETE=$(cat <<'ZSH'
zmodload zsh/zpty zsh/zselect
local shell=$1 line=$2 init=$(mktemp)
export CAPTURE=$(mktemp)
if [[ $shell == zsh ]]; then
    cat > $init <<'INIT'
PS1= RPS1=
autoload -Uz compinit && compinit -u -D
compadd() {
    if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
    local -a hits
    builtin compadd -A hits "$@"
    (( $#hits )) && print -rl -- $hits >> $CAPTURE
    builtin compadd "$@"
}
capture() { zle complete-word; print -r -- '-- done --' >> $CAPTURE }
zle -N capture
bindkey '^G' capture
INIT
    zpty shell zsh -f -i
else
    cat > $init <<'INIT'
function capture; complete -C (commandline) | string split -f1 \t > $CAPTURE; echo -- '-- done --' >> $CAPTURE; end
bind \cg capture
INIT
    zpty shell fish -i
fi
zpty -w shell "source $init"
zpty -w -n shell "$line"$'\C-g'
for i in {1..100}; do
    grep -q -- '^-- done --$' $CAPTURE && break
    zselect -t 10
done
zpty -d shell
if ! grep -q -- '^-- done --$' $CAPTURE; then
    print -u2 "$shell completed nothing of '$line' within 10 s"
    rm -f $CAPTURE $init
    exit 1
fi
grep -v -- '^-- done --$' $CAPTURE | tr '\n' ' '
rm -f $CAPTURE $init
ZSH
)
# pty_complete SHELL LINE: the words SHELL's completion offers at the end of LINE, on one line.
pty_complete() {
    in_user_manager zsh -f -c "$PTY_COMPLETE" pty-complete "$1" "$2"
}

SHELLS=(bash zsh)
if command -v fish >/dev/null; then SHELLS+=(fish); else say "fish is not installed here: its completion is not checked"; fi
# offers SHELL LINE WORD...: SHELL's completion of LINE offers each WORD.
offers() {
    local shell=$1 line=$2 completions word
    if [ "$shell" = bash ]; then completions=$(bash_complete "$line"); else completions=$(pty_complete "$shell" "$line"); fi
    echo "$shell: $line<TAB>: $completions"
    for word in "${@:3}"; do
        [[ " $completions " == *" $word "* ]] || die "$shell: $line<TAB> does not offer $word (got: $completions)"
    done
}
ROUTE=$(status_field route)
# A saved mix, for `play` and `delete` to offer; deleted again at the end of the stage.
ctl save completion-mix >/dev/null
for shell in "${SHELLS[@]}"; do
    offers "$shell" "soundscapectl play " ocean-waves rain wind brown-noise completion-mix
    offers "$shell" "soundscapectl delete " completion-mix
    offers "$shell" "soundscapectl set " interruption-mode duck-level auto-resume pinned-sink keep-awake notifications \
        signer-down-sound
    offers "$shell" "soundscapectl set interruption-mode " pause duck ignore
    offers "$shell" "soundscapectl set duck-level " 0 30 100
    offers "$shell" "soundscapectl set auto-resume " on off
    offers "$shell" "soundscapectl set pinned-sink " none "$ROUTE"
    offers "$shell" "soundscapectl set keep-awake " on off
    offers "$shell" "soundscapectl --socket $XDG_RUNTIME_DIR/soundscaped/control.sock set notifications " on off
    offers "$shell" "soundscapectl set signer-down-sound " cue silence keep
    offers "$shell" "soundscapectl volume " off low medium high max +10 -10
done
ctl delete completion-mix >/dev/null
