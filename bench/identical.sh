#!/usr/bin/env bash
# Bit-identical results: digests every shipped scenario and every registered experiment
# (reduced scale) with the working tree's build and with BASE's, and compares them.
# Usage: bench/identical.sh BASE   (make identical BASE=<rev>)
# BASE is built in a worktree under target/identical/; its digest is kept there by commit.
# The working tree's manypath is the one installed in the virtualenv (`make identical`
# installs it first).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bench/identical.sh BASE}
rev=$(git rev-parse --verify "$base^{commit}")
python=${PYTHON:-.venv/bin/python}
work=target/identical
mkdir -p "$work"

# Builds the native module of the tree at $1 and puts it beside that tree's package, so
# PYTHONPATH=$1/python imports that tree's code (ahead of any installed manypath).
build_tree() {
  (cd "$1" && CARGO_TARGET_DIR="$OLDPWD/target" cargo build --release --quiet -p manypath-py)
  cp target/release/lib_core.so "$1/python/manypath/_core.abi3.so"
}

base_digest="$work/$rev.json"
if [ ! -f "$base_digest" ]; then
  tree="$work/tree-$rev"
  [ -d "$tree" ] || git worktree add --detach --force "$tree" "$rev" >/dev/null
  # The base's worktree goes away whatever happens, so a later build never picks it up.
  trap 'git worktree remove --force "$tree" 2>/dev/null || true' EXIT
  build_tree "$tree"
  PYTHONPATH="$tree/python" "$python" bench/identical.py digest "$base_digest.tmp"
  mv "$base_digest.tmp" "$base_digest"
fi

head_digest="$work/working-tree.json"
"$python" bench/identical.py digest "$head_digest"
"$python" bench/identical.py compare "$base_digest" "$head_digest"
