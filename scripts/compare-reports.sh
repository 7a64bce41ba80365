#!/usr/bin/env bash
# Audits the same sites with linkrot built from an earlier commit and from
# the working tree, and compares the JSON reports (targets, verdicts,
# links, findings; times and ids aside): a change that claims to keep
# behaviour is held to it.
#
#   scripts/compare-reports.sh BEFORE_REV [workloads]
#   scripts/compare-reports.sh 916f8d1 web,rot,django
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: scripts/compare-reports.sh BEFORE_REV [web,rot,django]}
workloads=${2:-web,rot,django}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/before-tree" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/before-tree" "$rev" >/dev/null
(cd "$tmp/before-tree" && go build -o "$tmp/linkrot-before" ./cmd/linkrot)
go build -o "$tmp/linkrot-after" ./cmd/linkrot
go build -o "$tmp/linkrotbench" ./cmd/linkrotbench
go run ./internal/reportcompare/comparereports -before "$tmp/linkrot-before" -after "$tmp/linkrot-after" \
  -bench "$tmp/linkrotbench" -workloads "$workloads"
