#!/usr/bin/env bash
# The demo that `make run` sets up, through the gateway's admin API (so the
# gateway also writes the Kueue objects into the cluster). Idempotent: what
# exists already (409) is left as it is.
#
#   deploy/dev/seed.sh URL ADMIN_TOKEN
#
# The demo: ResourceFlavor default-flavor; ClusterQueue demo-cq with 16 cpu
# and 64Gi; priority class demo-default; profiles demo-job (Job, the
# workspace's default) and demo-ray (RayJob); workspace demo (namespace demo)
# with its LocalQueue demo; alice a researcher in it.
set -euo pipefail
URL=$1
TOKEN=$2

seed_post() { # PATH JSON
  local out status
  out=$(curl -sS -w '\n%{http_code}' -X POST "$URL$1" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' -d "$2")
  status=${out##*$'\n'}
  case "$status" in
    201 | 409) ;;
    *)
      echo "seed: POST $1 answered $status: ${out%$'\n'*}" >&2
      return 1
      ;;
  esac
}

seed_post /v1/admin/flavors '{"name":"default-flavor"}'
seed_post /v1/admin/cluster-queues '{"name":"demo-cq","resource_groups":[{
  "covered_resources":["cpu","memory"],
  "flavors":[{"name":"default-flavor","resources":[
    {"name":"cpu","nominal_quota":"16"},{"name":"memory","nominal_quota":"64Gi"}]}]}]}'
seed_post /v1/admin/priority-classes '{"name":"demo-default","value":1000,
  "description":"the demo workspace default"}'
seed_post /v1/admin/profiles '{"name":"demo-job","engine":"job",
  "description":"CPU Jobs for the demo","settings":{"default_image":"bash:5.2"}}'
seed_post /v1/admin/profiles '{"name":"demo-ray","engine":"rayjob",
  "description":"CPU RayJobs for the demo",
  "settings":{"default_image":"rayproject/ray:2.54.0-py312-cpu"}}'
seed_post /v1/admin/workspaces '{"name":"demo","namespace":"demo","default_queue":"demo",
  "default_profile":"demo-job","default_priority":"demo-default"}'
seed_post /v1/admin/workspaces/demo/queues '{"name":"demo","cluster_queue":"demo-cq"}'
seed_post /v1/admin/workspaces/demo/members '{"kind":"user","subject":"alice","role":"researcher"}'
