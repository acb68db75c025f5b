#!/usr/bin/env bash
# Maps podroute's four Lambda roles to the Kubernetes group `podroute` with EKS access entries
# (the cluster's authentication mode must be API or API_AND_CONFIG_MAP). rbac.yaml binds the group.
#
#   infra/kubernetes/eks-access-entry.sh --stack podroute-prod --cluster prod-eu --region eu-west-1 [--dry-run]
#
# The role ARNs come from the stack outputs. With --dry-run the aws commands are printed, not run.
# For the aws-auth ConfigMap alternative see aws-auth-mapRoles.yaml.
set -euo pipefail

stack='' cluster='' region="${AWS_REGION:-}" dry_run=0
while [ $# -gt 0 ]; do
  case "$1" in
    --stack) stack="${2:?}"; shift 2 ;;
    --cluster) cluster="${2:?}"; shift 2 ;;
    --region) region="${2:?}"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    *) echo "usage: $0 --stack <stack> --cluster <eks-cluster> --region <region> [--dry-run]" >&2; exit 2 ;;
  esac
done
if [ -z "$stack" ] || [ -z "$cluster" ] || [ -z "$region" ]; then
  echo "usage: $0 --stack <stack> --cluster <eks-cluster> --region <region> [--dry-run]" >&2
  exit 2
fi

run() {
  if [ "$dry_run" = 1 ]; then printf '%q ' "$@"; echo; else "$@"; fi
}

output() {
  aws cloudformation describe-stacks --region "$region" --stack-name "$stack" \
    --query "Stacks[0].Outputs[?OutputKey=='$1'].OutputValue" --output text
}

for key in ReconcileRoleArn RouteWorkerRoleArn NodeWebhookRoleArn CloudEventsRoleArn; do
  arn="$(output "$key")"
  case "$arn" in
    arn:*:iam::*:role/*) ;;
    *) echo "stack $stack has no output $key (got '$arn')" >&2; exit 1 ;;
  esac
  # An access entry per role: STANDARD type, member of the podroute group, no access policy
  # (permissions come only from the RBAC in rbac.yaml).
  if aws eks describe-access-entry --region "$region" --cluster-name "$cluster" \
       --principal-arn "$arn" >/dev/null 2>&1; then
    run aws eks update-access-entry --region "$region" --cluster-name "$cluster" \
      --principal-arn "$arn" --kubernetes-groups podroute
  else
    run aws eks create-access-entry --region "$region" --cluster-name "$cluster" \
      --principal-arn "$arn" --type STANDARD --kubernetes-groups podroute
  fi
done
