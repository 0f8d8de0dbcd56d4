#!/usr/bin/env bash
# .pre-commit-hooks.yaml for real: Debian's pre-commit installs this
# repository's hook into a temporary git repository (offline: the hook is
# `language: system`, and the repository is cloned from its own path), and a
# commit of an invalid GGUF file is refused while a valid one goes through.
# usage: pre_commit_hook.sh GGUFGUARD_CLI SOURCE_DIR
set -euo pipefail
cli=$1
src=$2
command -v pre-commit >/dev/null || { echo "FAIL: pre-commit is not installed (scripts/install-deps.sh)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# The hook runs `ggufguard` from PATH; pre-commit keeps its cache here.
mkdir "$work/bin"
ln -s "$cli" "$work/bin/ggufguard"
export PATH="$work/bin:$PATH" PRE_COMMIT_HOME="$work/cache"

# The hook as committed in this checkout; uncommitted edits to it are tested
# through a copy of the tree committed on its own.
hooks=$work/hooks
mkdir "$hooks"
cp "$src/.pre-commit-hooks.yaml" "$hooks/"
git -C "$hooks" init -q -b main
git -C "$hooks" -c user.email=t@example.invalid -c user.name=t add .
git -C "$hooks" -c user.email=t@example.invalid -c user.name=t commit -qm hooks
rev=$(git -C "$hooks" rev-parse HEAD)

git init -q -b main "$work/repo"
cd "$work/repo"
git config user.email t@example.invalid && git config user.name t
cat >.pre-commit-config.yaml <<Y
repos:
  - repo: $hooks
    rev: $rev
    hooks:
      - id: ggufguard
Y
git add .pre-commit-config.yaml && git commit -qm config
pre-commit install >/dev/null

cp "$src/corpus/valid/alignment-64.gguf" ok.gguf
git add ok.gguf
git commit -qm "a valid model" >"$work/log" 2>&1 || { cat "$work/log"; fail "the valid file was refused"; }
cp "$src/corpus/regressions/report-llamacpp-24263-empty-key.gguf" bad.GGUF
git add bad.GGUF
if git commit -qm "an invalid model" >"$work/log" 2>&1; then cat "$work/log"; fail "the invalid file was committed"; fi
grep -q "error GG3007 empty-key" "$work/log" || { cat "$work/log"; fail "the hook did not say why"; }
[ "$(git rev-list --count HEAD)" -eq 2 ] || fail "a commit went through"
echo "OK: the pre-commit hook refuses the invalid file and passes the valid one"
