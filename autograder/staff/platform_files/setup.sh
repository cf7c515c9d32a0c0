#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the grading image: a virtualenv with
# Python 3.11 or later and the pinned packages of requirements.txt, usable by nobody, the
# account student code runs as. AUTOGRADER_ROOT moves the /autograder layout elsewhere.
set -euo pipefail

root="${AUTOGRADER_ROOT:-/autograder}"

recent_python() {
    local candidate
    for candidate in python3.13 python3.12 python3.11 python3; do
        if command -v "$candidate" > /dev/null \
            && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

if ! python=$(recent_python); then
    apt-get update
    apt-get install -y --no-install-recommends python3.11 python3.11-venv
    python=python3.11
fi
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
