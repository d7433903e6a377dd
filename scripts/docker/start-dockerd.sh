#!/usr/bin/env bash
# Starts Debian's dockerd (package docker.io) in a private root that leaves the host network
# alone, for skill-up's Docker runtime tests and CI (issue 14).
#
#   scripts/docker/start-dockerd.sh [ROOT]      ROOT defaults to $SKILL_UP_DOCKERD_ROOT or /tmp/skill-up-dockerd
#
# Layout under ROOT: data/ (--data-root), exec/ (--exec-root), docker.sock, docker.pid,
# dockerd.log, and .skill-up-dockerd (the marker stop-dockerd.sh needs before it removes ROOT).
# Flags: no iptables/ip6tables rules, no ip_forward change, no masquerading, no docker0 bridge
# (measured in shared/engines/opencode-gemini-qwen-docker.md §7: with the default flags dockerd
# adds a bridge, NAT rules, FORWARD DROP and sets ip_forward=1). Containers then have the
# networks `none` and `host` (and user-made networks); the default `bridge` network does not exist.
#
# Prints exactly one line on stdout, `DOCKER_HOST=unix://ROOT/docker.sock`, once the socket
# answers GET /_ping (bounded by $SKILL_UP_DOCKERD_WAIT seconds, default 60); everything else
# goes to stderr. Idempotent: a dockerd already running from this ROOT is reused; a stale one
# (pidfile without a live process, or not answering) is cleaned up first with stop-dockerd.sh.
# Exit 1 when dockerd is not installed, the socket path is too long, or it did not answer in time
# (the tail of dockerd.log is printed to stderr and the half-started daemon is stopped).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="${1:-${SKILL_UP_DOCKERD_ROOT:-/tmp/skill-up-dockerd}}"
wait_s="${SKILL_UP_DOCKERD_WAIT:-60}"
command -v dockerd >/dev/null 2>&1 || { echo "start-dockerd: dockerd not found (apt-get install docker.io)" >&2; exit 1; }
# shellcheck source=scripts/docker/lib.sh
. "$here/lib.sh"
claim_root start-dockerd .skill-up-dockerd docker.sock docker.pid dockerd.log stop-dockerd.sh "daemon root"
mkdir -p "$root/data" "$root/exec"
: > "$root/.skill-up-dockerd"
echo "start-dockerd: starting dockerd in $root (log $log)" >&2
# From ROOT, so nothing the daemon or its shims write to their working folder lands in the caller's.
cd "$root"
# setsid: its own session, so a Ctrl-C or the end of the calling shell does not reach it; it is
# stopped only through stop-dockerd.sh (by pidfile).
setsid dockerd \
  --data-root "$root/data" \
  --exec-root "$root/exec" \
  --host "unix://$sock" \
  --pidfile "$pidfile" \
  --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false --bridge=none \
  </dev/null >"$log" 2>&1 &
started=$!
# Until dockerd writes its pidfile, stop-dockerd.sh finds it through this one.
echo "$started" > "$root/dockerd.launch-pid"
deadline=$(( $(date +%s) + wait_s ))
until ping_ok; do
  if ! kill -0 "$started" 2>/dev/null; then
    echo "start-dockerd: dockerd exited during start-up; last lines of $log:" >&2
    tail -n 20 "$log" >&2 || true
    "$here/stop-dockerd.sh" "$root" >&2 || true
    exit 1
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "start-dockerd: no answer on $sock after ${wait_s}s; last lines of $log:" >&2
    tail -n 20 "$log" >&2 || true
    "$here/stop-dockerd.sh" "$root" >&2 || true
    exit 1
  fi
  sleep 0.2
done
echo "start-dockerd: dockerd pid $(cat "$pidfile") answers on $sock" >&2
echo "DOCKER_HOST=unix://$sock"
