#!/usr/bin/env bash
# Consumers' CI runs `npm ci` on their own platforms: prove that the committed lockfile is accepted on
# each of them (a lockfile that records one platform's optional binaries only is refused elsewhere).
# A dry run resolves the whole tree against the lockfile without downloading packages.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$root/package.json" "$root/package-lock.json" "$work/"
cd "$work"
for platform in linux/x64 linux/arm64 darwin/arm64 darwin/x64 win32/x64; do
  os="${platform%/*}" cpu="${platform#*/}"
  if ! out=$(npm ci --dry-run --ignore-scripts --no-audit --no-fund --os="$os" --cpu="$cpu" 2>&1); then
    echo "npm ci refuses package-lock.json on $os/$cpu:" >&2
    grep -E 'Missing|Invalid|error' <<<"$out" | grep -v nodedir | head -10 >&2
    exit 1
  fi
  echo "npm ci accepts package-lock.json on $os/$cpu"
done
