#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the grading image: a virtualenv with a
# new enough Python and the pinned packages of requirements.txt, usable by nobody, the account
# student code runs as. AUTOGRADER_ROOT moves the /autograder layout elsewhere.
set -euo pipefail

root="${AUTOGRADER_ROOT:-/autograder}"
# The kit's Python floor (requires-python in its pyproject.toml), written in by
# `autograder release gradescope`.
minimum="@python_minimum@"
major="${minimum%%.*}"
minor="${minimum#*.}"

new_enough() {
    "$1" -c "import sys; sys.exit(sys.version_info < ($major, $minor))" 2> /dev/null
}

# The image's own python3 when it is new enough, else the oldest new enough python3.N it has.
find_python() {
    local candidate
    for candidate in python3 $(compgen -c python3. | grep -E '^python3\.[0-9]+$' | sort -t . -k 2 -n -u); do
        if command -v "$candidate" > /dev/null && new_enough "$candidate"; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

if ! python=$(find_python); then
    echo "no Python $minimum or later in the image: installing python$minimum with apt"
    apt-get update
    apt-get install -y --no-install-recommends "python$minimum" "python$minimum-venv"
    python="python$minimum"
fi
echo "grading with $python ($("$python" --version 2>&1))"
# Debian and Ubuntu ship venv apart from Python itself.
if ! "$python" -m venv "$root/venv"; then
    apt-get update
    apt-get install -y --no-install-recommends "$python-venv"
    "$python" -m venv "$root/venv"
fi
"$root/venv/bin/python" -m pip install --no-cache-dir --disable-pip-version-check \
    -r "$root/source/requirements.txt"

chmod o+x "$root"
chmod -R a+rX "$root/venv"
