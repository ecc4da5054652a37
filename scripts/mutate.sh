#!/usr/bin/env bash
# Mutation testing of the rules users rely on: scripts/mutate.py (the list of mutants is there).
#   scripts/mutate.sh [--only 'NAME_SUBSTRING|...'] [--jobs N] [--keep]
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/mutate.py" "$@"
