#!/bin/sh
# Run inside a container: tries the local container server's control API as a hostile tenant would, with
# no token. Prints one line per probe: its name and the HTTP status (000 when nothing answered).
# OMA_PROBE_URL is the server's URL, OMA_PROBE_VICTIM another container's id.
set -u
url="$OMA_PROBE_URL"
victim="$OMA_PROBE_VICTIM"

probe() {
  name="$1"
  shift
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" 2>/dev/null)"
  echo "$name ${code:-000}"
}

probe probe "$url/"
probe list "$url/__oma/containers"
probe exec -X POST -H 'Content-Type: application/json' -H "X-Oma-Container-Id: $victim" \
  --data '{"command":"cat /workspace/secret.txt","sessionId":"__DISABLE_SESSION__"}' "$url/api/execute"
probe read -X POST -H 'Content-Type: application/json' -H "X-Oma-Container-Id: $victim" \
  --data '{"path":"/workspace/secret.txt","sessionId":"__DISABLE_SESSION__"}' "$url/api/read"
probe create -X PUT --data '{}' "$url/__oma/containers/intruder"
probe collect "$url/__oma/containers/$victim/outbound"
probe answer -X POST --data '{"status":200,"headers":{},"body":""}' "$url/__oma/containers/$victim/outbound/job-1"
probe delete -X DELETE "$url/__oma/containers/$victim"
probe forged -H 'X-Oma-Control-Token: Bearer 0000000000000000000000000000000000000000000000000000000000000000' "$url/__oma/containers"
