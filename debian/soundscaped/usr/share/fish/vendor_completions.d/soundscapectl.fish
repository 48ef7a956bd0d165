function __soundscapectl_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __soundscapectl_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __soundscapectl_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __soundscapectl_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __soundscapectl_parse_tokens -S
    set -l unparsed_tokens (__soundscapectl_tokens -pc)
    switch $unparsed_tokens[1]
    case 'soundscapectl'
        __soundscapectl_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'play'
            __soundscapectl_parse_subcommand 1 'socket=' 'version' 'h/help'
        case 'pause'
            __soundscapectl_parse_subcommand 0 'socket=' 'version' 'h/help'
        case 'stop'
            __soundscapectl_parse_subcommand 0 'socket=' 'version' 'h/help'
        case 'volume'
            __soundscapectl_parse_subcommand -r 1 'socket=' 'version' 'h/help'
        case 'status'
            __soundscapectl_parse_subcommand 0 'socket=' 'json' 'version' 'h/help'
        case 'reload'
            __soundscapectl_parse_subcommand 0 'socket=' 'version' 'h/help'
        case 'list'
            __soundscapectl_parse_subcommand 0 'socket=' 'json' 'version' 'h/help'
        case 'events'
            __soundscapectl_parse_subcommand 0 'socket=' 'json' 'version' 'h/help'
        case 'health'
            __soundscapectl_parse_subcommand 0 'socket=' 'json' 'version' 'h/help'
        case 'set'
            __soundscapectl_parse_subcommand 2 'socket=' 'version' 'h/help'
        case 'preferences'
            __soundscapectl_parse_subcommand 0 'socket=' 'json' 'version' 'h/help'
        case 'help'
            __soundscapectl_parse_subcommand -r 1 'version'
        end
    end
end

function __soundscapectl_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __soundscapectl_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __soundscapectl_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __soundscapectl_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__soundscapectl_tokens -p)
    if test -z "$(__soundscapectl_tokens -t)"
        set -l index (count (__soundscapectl_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'soundscapectl' -f
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl" version' -l 'version' -d 'Show the version.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl" -eq 1' -fa 'play' -d 'Start playing (or switch to) a soundscape; without NAME, the current one.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl" -eq 1' -fa 'pause' -d 'Fade out but keep the session: the signer host keeps running; play resumes.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl" -eq 1' -fa 'stop' -d 'Fade out and end the session (the signer host stops too).'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl" -eq 1' -fa 'volume' -d 'Print the volume, or set it: 0–100, +N/-N, or off, low, medium, high, max.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl" -eq 1' -fa 'status' -d 'Show what the daemon is doing.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl" -eq 1' -fa 'reload' -d 'Make the daemon read its config file again (as SIGHUP does).'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl" -eq 1' -fa 'list' -d 'List the soundscapes the daemon can play.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl" -eq 1' -fa 'events' -d 'Follow events as they happen (until interrupted).'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl" -eq 1' -fa 'health' -d 'Check the daemon\'s health.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl" -eq 1' -fa 'set' -d 'Set a preference: interruption-mode pause|duck|ignore, duck-level 0-100, auto-resume on|off, pinned-sink NAME|none.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl" -eq 1' -fa 'preferences' -d 'Show the preferences.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl play" socket' -l 'socket' -d 'Control socket of the daemon.' -rfka ''
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_positional "soundscapectl play" -eq 1' -fka '(__soundscapectl_custom_completion ---completion play -- positional@0 (count (__soundscapectl_tokens -pc)) (__soundscapectl_tokens -tC))'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl play" version' -l 'version' -d 'Show the version.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl play" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl pause" socket' -l 'socket' -d 'Control socket of the daemon.' -rfka ''
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl pause" version' -l 'version' -d 'Show the version.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl pause" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl stop" socket' -l 'socket' -d 'Control socket of the daemon.' -rfka ''
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl stop" version' -l 'version' -d 'Show the version.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl stop" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl volume" socket' -l 'socket' -d 'Control socket of the daemon.' -rfka ''
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl volume" version' -l 'version' -d 'Show the version.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl volume" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl status" socket' -l 'socket' -d 'Control socket of the daemon.' -rfka ''
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl status" json' -l 'json' -d 'Print the status as one JSON object.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl status" version' -l 'version' -d 'Show the version.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl status" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl reload" socket' -l 'socket' -d 'Control socket of the daemon.' -rfka ''
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl reload" version' -l 'version' -d 'Show the version.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl reload" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl list" socket' -l 'socket' -d 'Control socket of the daemon.' -rfka ''
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl list" json' -l 'json' -d 'Print the list as JSON.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl list" version' -l 'version' -d 'Show the version.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl events" socket' -l 'socket' -d 'Control socket of the daemon.' -rfka ''
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl events" json' -l 'json' -d 'One JSON object per line, exactly as the daemon sends it.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl events" version' -l 'version' -d 'Show the version.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl events" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl health" socket' -l 'socket' -d 'Control socket of the daemon.' -rfka ''
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl health" json' -l 'json' -d 'Print the report as one JSON object.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl health" version' -l 'version' -d 'Show the version.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl health" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl set" socket' -l 'socket' -d 'Control socket of the daemon.' -rfka ''
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl set" version' -l 'version' -d 'Show the version.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl set" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl preferences" socket' -l 'socket' -d 'Control socket of the daemon.' -rfka ''
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl preferences" json' -l 'json' -d 'Print them as one JSON object.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl preferences" version' -l 'version' -d 'Show the version.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl preferences" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'soundscapectl' -n '__soundscapectl_should_offer_completions_for_flags_or_options "soundscapectl help" version' -l 'version' -d 'Show the version.'
