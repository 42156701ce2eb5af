#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu, with the
# network): Python 3.11+, bubblewrap for the sandbox, and the course and its grader in a venv.
# `make gradescope` wrote this file from grader/gradescope/setup.sh (lessons: @LESSON@).
# AUTOGRADER_ROOT, COURSE_VENV and AUTOGRADER_APT=0 (no apt-get) are for a simulated run.
set -euo pipefail
SOURCE="${AUTOGRADER_ROOT:-/autograder}/source"
VENV="${COURSE_VENV:-/opt/self-attention-course}"
LESSON="@LESSON@"

python_ok() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; }
# The system's Python first: every user can run it, and so every student's kernel, which runs
# as a user of its own where bubblewrap cannot (a Python under /root, say, would not start).
find_python() {
  for p in /usr/bin/python3.{14,13,12,11} python3.14 python3.13 python3.12 python3.11 python3; do
    if command -v "$p" >/dev/null 2>&1 && python_ok "$p"; then command -v "$p"; return; fi
  done
}
apt_install() {
  if [ "${AUTOGRADER_APT:-1}" = 0 ]; then echo "AUTOGRADER_APT=0: not installing $*"; return; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@"
}

PY="$(find_python || true)"
# Ubuntu 22.04's python3 is 3.10: its python3.11 package (universe) is enough. 24.04's is 3.12.
if [ -z "$PY" ]; then apt_install python3.11 python3.11-venv; PY="$(find_python || true)"; fi
if [ -z "$PY" ]; then echo "setup.sh: no Python 3.11 or newer could be installed" >&2; exit 1; fi
# bubblewrap: each student's kernel in a sandbox, where the container lets it make namespaces;
# setpriv (util-linux): where it does not, each kernel runs as a user of its own instead of root.
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi

if ! "$PY" -m venv "$VENV"; then apt_install "$(basename "$PY")-venv"; "$PY" -m venv "$VENV"; fi
# Ubuntu's venv brings an old pip (22.04: 22.0): the newest first, for the packages' builds.
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir -U pip
# The course and its grader, at the versions the course is tested with (constraints.txt:
# requirements.txt's pins), into the venv: outside /autograder, which the kernels need not see.
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
  -c "$SOURCE/constraints.txt" "$SOURCE/course" "$SOURCE/grader"
if [[ " $LESSON " == *" 09 "* ]]; then
  # Lesson 09's model files (a hash-pinned 83 MB download, no PyTorch), beside the venv;
  # run_autograder names the folder (HELPERS_MODEL_DIR) to the grader and its kernels.
  HELPERS_MODEL_DIR="$VENV/model" "$VENV/bin/python" -m helpers.pretrained
fi
# The kernels run as other users: they must read the venv, never write it.
chmod -R a+rX,go-w "$VENV"
"$VENV/bin/python" -m course_grader --points-table >/dev/null
echo "setup.sh: the course and its grader are installed in $VENV ($("$VENV/bin/python" -V))"
