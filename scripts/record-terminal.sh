#!/usr/bin/env bash
# Records what a person sees in a 100-column terminal (tmux) while `run`, `tune`,
# `explain --from` and `suite --quick` work: a snapshot while each runs (its progress) and
# the whole screen when it ends, into docs/terminal/NAME.txt. Run from a clean checkout after
# `cargo build --release`; on a machine without a GPU the runs use PoCL's CPU device.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-env.sh
bin_dir="$PWD/target/release"
docs="$PWD/docs/terminal"
work="$(mktemp -d)"
trap 'tmux kill-session -t rec 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$docs"
# The pane shows relative paths only: it works in a scratch folder that sees results/.
ln -s "$PWD/results" "$work/results"
commit="$(git rev-parse --short=12 HEAD)"

# record NAME SNAPSHOT_AFTER_S COMMAND...
record() {
    local name="$1" after="$2"
    shift 2
    local shown="clvscu $*"
    tmux kill-session -t rec 2>/dev/null || true
    tmux new-session -d -s rec -x 100 -y 60 -c "$work" \
        "env PATH=$bin_dir:\$PATH PS1='$ ' bash --norc --noprofile"
    tmux set-option -t rec history-limit 20000 >/dev/null
    sleep 0.3
    tmux send-keys -t rec "clear; clvscu $*; echo \"exit \$?\"; tmux wait-for -S done" Enter
    sleep "$after"
    local during
    during="$(tmux capture-pane -t rec -p)"
    tmux wait-for done
    {
        echo "\$ $shown" | fold -s -w 100
        echo "# recorded in a 100x60 tmux pane at commit $commit, $(date -u +%Y-%m-%d)"
        echo "# while it ran, after ${after} s:"
        printf '%s\n' "$during" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
        echo "# when it ended (the whole scrollback):"
        tmux capture-pane -t rec -p -S - | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
    } >"$docs/$name.txt"
    echo "recorded $docs/$name.txt"
}

record run 6 run --out run
record tune 2 tune matvec/tuned --space small --strategy exhaustive,random,genetic,bayes,anneal --budget 6 --out tune
record explain-from 1 explain --from results/h200/explain --out explain
record suite-quick 20 suite --quick --out suite
