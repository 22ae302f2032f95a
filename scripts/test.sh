#!/usr/bin/env bash
# Runs every test of the repository on a fresh machine: gofmt and go vet,
# go test -race in every Go module (nested modules included), and a short
# pass of every native fuzz target.
#
#   FUZZTIME=10s  how long each fuzz target runs (0 skips fuzzing)
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
fuzztime=${FUZZTIME:-10s}

step() { printf '\n== %s\n' "$*"; }

command -v go >/dev/null || { echo "test.sh: go is not installed" >&2; exit 1; }

# Every module of the repository, the root first.
mapfile -t modules < <(git ls-files --cached --others --exclude-standard -- '*go.mod' | xargs -n1 dirname | sort)

step "gofmt"
unformatted=$(gofmt -l $(git ls-files --cached --others --exclude-standard -- '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi

for mod in "${modules[@]}"; do
  step "go vet and go test -race in $mod"
  (cd "$root/$mod" && go vet ./... && go test -race -count=1 ./...)
done

if [ "$fuzztime" != "0" ]; then
  for mod in "${modules[@]}"; do
    cd "$root/$mod"
    for pkg in $(go list ./...); do
      for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
        step "fuzz $pkg $target for $fuzztime"
        go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
      done
    done
  done
  cd "$root"
fi

step "all tests passed"
