#!/usr/bin/env bash
# Offline packaging check for podroute: `osls package` (no AWS credentials, no network needed),
# cfn-lint over the generated CloudFormation template, then the size of every bundle and that each
# zip holds every chunk its modules import (esbuild code splitting).
#
#   infra/scripts/package-check.sh [--stage ci] [--region us-east-1] [--param name=value ...]
#
# --param is passed to `osls package` as is, e.g. to lint the VPC branch as deployed:
#   infra/scripts/package-check.sh --param subnetIds=subnet-0aaa1111 --param securityGroupIds=sg-0bbb2222
#
# If a function source (functions/*.ts) does not exist yet, the check runs in a throwaway copy of
# the repository with stub handlers, so the repository itself is never touched (the copy is
# removed at exit unless PACKAGE_CHECK_KEEP=1). Exit status: 0 when every check passed.
set -euo pipefail

stage=ci
region=us-east-1
params=()
while [ $# -gt 0 ]; do
  case "$1" in
    --stage) stage="${2:?--stage needs a value}"; shift 2 ;;
    --region) region="${2:?--region needs a value}"; shift 2 ;;
    --param)
      case "${2:-}" in
        [A-Za-z]*=*) params+=("--param=$2"); shift 2 ;;
        *) echo "$0: --param needs name=value" >&2; exit 2 ;;
      esac ;;
    *) echo "usage: $0 [--stage <stage>] [--region <region>] [--param name=value ...]" >&2; exit 2 ;;
  esac
done

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
started=$(date +%s)
elapsed() { echo "$(( $(date +%s) - started ))s"; }

handlers=(functions/reconcile.ts functions/route-worker.ts functions/node-webhook.ts functions/cloud-events.ts)
missing=()
for handler in "${handlers[@]}"; do
  [ -f "$repo/$handler" ] || missing+=("$handler")
done

workdir="$repo"
if [ ${#missing[@]} -gt 0 ]; then
  workdir="$(mktemp -d "${TMPDIR:-/tmp}/podroute-package.XXXXXX")"
  # The copy is removed on exit; PACKAGE_CHECK_KEEP=1 keeps it to inspect the zips.
  if [ "${PACKAGE_CHECK_KEEP:-0}" != 1 ]; then trap 'rm -rf "$workdir"' EXIT; fi
  echo "package-check: ${missing[*]} missing; packaging a copy with stubs in $workdir"
  # Copy the tracked tree and the working files, never node_modules (linked) or build output.
  tar -C "$repo" --exclude=./node_modules --exclude=./.git --exclude=./.serverless \
      --exclude=./.esbuild --exclude=./coverage -cf - . | tar -C "$workdir" -xf -
  ln -s "$repo/node_modules" "$workdir/node_modules"
  mkdir -p "$workdir/functions"
  for handler in "${missing[@]}"; do
    # A stub that still pulls in the config schema, so the bundle is not empty.
    cat > "$workdir/$handler" <<'STUB'
import { loadConfig } from '../lib/config.ts';

export const handler = async (): Promise<{ ok: boolean }> => {
  loadConfig(process.env);
  return { ok: true };
};
STUB
  done
fi

cd "$workdir"
rm -rf .serverless

# `osls package` needs no AWS credentials (checked with none configured), so none are set here.
export SLS_TELEMETRY_DISABLED=1 SLS_NOTIFICATIONS_MODE=off

echo "== osls package --stage $stage --region $region ${params[*]}"
if ! npx --no-install osls package --stage "$stage" --region "$region" "${params[@]}"; then
  echo "package-check: FAILED: osls package ($(elapsed))" >&2
  exit 1
fi

template=.serverless/cloudformation-template-update-stack.json
[ -s "$template" ] || { echo "package-check: FAILED: $template was not written" >&2; exit 1; }

echo "== cfn-lint"
if command -v cfn-lint >/dev/null 2>&1; then
  # W3005: an obsolete DependsOn the framework itself writes (ESM -> role); not ours to fix.
  if ! cfn-lint -i W3005 -- "$template"; then
    echo "package-check: FAILED: cfn-lint ($(elapsed))" >&2
    exit 1
  fi
  echo "cfn-lint: clean"
else
  # Debian 12 has no cfn-lint package (`apt-cache policy cfn-lint` is empty after apt-get update).
  echo "cfn-lint: SKIPPED, not on PATH. Install it with 'pip install cfn-lint' or 'pipx install" \
       "cfn-lint' (Python >= 3.9); apt has no package for it." >&2
fi

echo "== bundles"
shopt -s nullglob
zips=(.serverless/*.zip)
if [ ${#zips[@]} -eq 0 ]; then
  echo "package-check: FAILED: no .zip in .serverless/" >&2
  exit 1
fi
# Lambda rejects a zip over 50 MB (direct upload) and an unzipped package over 250 MB.
limit=$((50 * 1024 * 1024))
status=0
for zip in "${zips[@]}"; do
  bytes=$(stat -c %s "$zip")
  printf '%-40s %8d KiB\n' "$(basename "$zip")" $(( (bytes + 1023) / 1024 ))
  if [ "$bytes" -gt "$limit" ]; then
    echo "package-check: FAILED: $zip is over 50 MB" >&2
    status=1
  fi
  # Code splitting (custom.esbuild.splitting): a handler imports chunks by relative path, statically
  # or when used (import("./chunk-....mjs")); each one must be in the zip, or the function fails at
  # init or on the path that needs it.
  members="$(unzip -Z1 "$zip")"
  for module in $(grep -E '\.mjs$' <<<"$members"); do
    dir="$(dirname "$module")"
    for chunk in $(unzip -p "$zip" "$module" | grep -oE '"\./[A-Za-z0-9_./-]+\.mjs"' | tr -d '"' | sort -u); do
      wanted="${dir}/${chunk#./}"
      wanted="${wanted#./}"
      if ! grep -qxF "$wanted" <<<"$members"; then
        echo "package-check: FAILED: $(basename "$zip"): $module imports $chunk, which the zip lacks" >&2
        status=1
      fi
    done
  done
done

if [ "$workdir" = "$repo" ] || [ "${PACKAGE_CHECK_KEEP:-0}" = 1 ]; then
  echo "package-check: done in $(elapsed) (output in $workdir/.serverless)"
else
  echo "package-check: done in $(elapsed) (stub copy removed; PACKAGE_CHECK_KEEP=1 keeps it)"
fi
exit "$status"
