#!/usr/bin/env bash
# The package as a user gets it: `npm pack` (which builds dist/cli/ through prepack), the tarball
# installed into an empty directory, then `npx podroute --help` and `npx podroute plan` on the
# examples the package ships. Also checks that the tarball holds what a user needs and no sources
# or tests. Exit status 0 when every check passed.
#
#   infra/scripts/pack-check.sh
#
# The install reuses npm's cache (--prefer-offline): after `npm ci` every dependency is there.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
started=$(date +%s)
elapsed() { echo "$(( $(date +%s) - started ))s"; }
fail() { echo "pack-check: FAILED: $*" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/podroute-pack.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir "$work/tarball" "$work/user"

echo "== npm pack"
tarball="$(cd "$repo" && npm pack --silent --pack-destination "$work/tarball" | tail -n 1)"
tarball="$work/tarball/$tarball"
[ -s "$tarball" ] || fail "npm pack wrote no tarball"
listing="$(tar -tzf "$tarball")"
for wanted in package/package.json package/README.md package/LICENSE package/CHANGELOG.md \
              package/dist/cli/podroute.js package/examples/nodes.json package/examples/route-tables.json; do
  grep -qxF "$wanted" <<<"$listing" || fail "the tarball lacks ${wanted#package/}"
done
unwanted="$(grep -E '^package/(lib|bin|functions|test|infra|bench|node_modules|docs/decisions)/|\.ts$' <<<"$listing" || true)"
[ -z "$unwanted" ] || fail "the tarball holds sources or tests: $(head -3 <<<"$unwanted" | tr '\n' ' ')"
echo "$(basename "$tarball"): $(wc -l <<<"$listing") files, $(( ($(stat -c %s "$tarball") + 1023) / 1024 )) KiB"

echo "== npm install the tarball into an empty directory"
cd "$work/user"
npm init -y >/dev/null
npm install --prefer-offline --no-audit --no-fund --loglevel=error "$tarball" >/dev/null

echo "== npx podroute --help"
help="$(npx --no-install podroute --help)" || fail "podroute --help exited $?"
grep -q '^Usage: podroute <command>' <<<"$help" || fail "podroute --help printed no usage: $(head -1 <<<"$help")"

echo "== npx podroute plan on the shipped examples, against the sources' plan"
plan_args=(plan --cluster-cidrs 10.244.0.0/16 --nodes examples/nodes.json --route-tables examples/route-tables.json --cluster-name demo)
shipped="$(npx --no-install podroute "${plan_args[@]/examples\//node_modules/podroute/examples/}")" \
  || fail "podroute plan exited $?"
expected="$(cd "$repo" && node --import tsx bin/podroute.ts "${plan_args[@]}")"
[ -n "$expected" ] || fail "the sources' plan printed nothing"
[ "$shipped" = "$expected" ] || fail "the installed podroute plan differs from the sources': $(head -c 200 <<<"$shipped")"
node -e 'const p = JSON.parse(process.argv[1]); console.log(`plan: ${p.create.length} create, ${p.replace.length} replace, ${p.delete.length} delete, ${p.nodes.length} nodes`)' "$shipped"
echo "pack-check: done in $(elapsed)"
