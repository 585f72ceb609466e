#!/usr/bin/env bash
# Seconds from `make run` on a fresh clone to the first answered question.
#
#   scripts/first_answer.sh [REF] [REPO]    # defaults: HEAD of this repository
#
# Clones REPO at REF into a temporary folder, starts `make run` there (which creates .venv and
# installs what running needs), asks the demo question the README starts with until it is
# answered, prints the seconds taken and the machine's load average, then stops the app and
# removes the clone. PORT (default 8765) and PYTHON are passed to make; TIMEOUT (default 600)
# gives up.
set -eu
ref=${1:-HEAD}
repo=${2:-$(git rev-parse --show-toplevel)}
port=${PORT:-8765}
timeout=${TIMEOUT:-600}
dir=$(mktemp -d)
git clone --quiet "$repo" "$dir/app"
git -C "$dir/app" checkout --quiet "$(git -C "$repo" rev-parse "$ref")"

start=$(date +%s.%N)
# make and the app in a session of their own (its id in $dir/group), stopped together at exit
setsid -w sh -c 'echo $$ >"$0/group"; exec make -C "$0/app" run PORT="$1" PYTHON="$2"' \
    "$dir" "$port" "${PYTHON:-python3}" >"$dir/run.log" 2>&1 &
pid=$!
cleanup() {
    kill -TERM -- "-$(cat "$dir/group")" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT

until curl -sf -X POST "http://127.0.0.1:$port/api/chat" -H 'Content-Type: application/json' \
    -d '{"Question": "Why is payment-service slow since 10:00?"}' -o "$dir/answer.json"; do
    if ! kill -0 "$pid" 2>/dev/null; then
        cat "$dir/run.log" >&2
        exit 1
    fi
    if [ "$(echo "$(date +%s.%N) - $start > $timeout" | bc)" = 1 ]; then
        echo "no answer after ${timeout}s" >&2
        exit 1
    fi
    sleep 0.5
done
seconds=$(echo "$(date +%s.%N) - $start" | bc)
grep -Eq '"success": ?true' "$dir/answer.json" || { cat "$dir/answer.json" >&2; exit 1; }
printf '%s %.1f s (load average %s)\n' "$(git -C "$dir/app" rev-parse --short HEAD)" \
    "$seconds" "$(cut -d' ' -f1-3 /proc/loadavg)"
