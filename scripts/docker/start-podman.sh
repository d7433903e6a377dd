#!/usr/bin/env bash
# Starts Podman's Docker-compatible API service (Debian's podman, `podman system service`) in
# a private root, with the same interface as start-dockerd.sh, so the Docker runtime's tests can
# run against Podman too (issue 14).
#
#   scripts/docker/start-podman.sh [ROOT]      ROOT defaults to $SKILL_UP_PODMAN_ROOT or /tmp/skill-up-podman
#
# Layout under ROOT: containers.conf, storage/ (--root), run/ (--runroot), tmp/ (--tmpdir),
# networks/, podman.sock, podman.pid (the service's pid), podman.log, and the marker .skill-up-podman.
# containers.conf:
#  - default_ulimits nofile/nproc 4096: podman's defaults (about 1M) exceed this sandbox's hard
#    limits and, without CAP_SYS_RESOURCE, every container fails with "error setting rlimit type 7"
#    (measured in shared/engines/opencode-gemini-qwen-docker.md §7);
#  - netns "none" (podman's own CLI: a container that names no network gets none), and CNI with
#    no plugins, so a bridge network (what the Docker-compatible API picks when a request names
#    no network) fails instead of changing the host's links, iptables and ip_forward: callers
#    must name `none` or `host`, as with start-dockerd.sh's daemon;
#  - cgroupfs (no systemd here), file events log, and every state folder inside ROOT.
# Prints one line on stdout, `DOCKER_HOST=unix://ROOT/podman.sock`, once GET /_ping answers
# (bounded by $SKILL_UP_PODMAN_WAIT seconds, default 30); the rest goes to stderr. Idempotent like
# start-dockerd.sh. Exit 1 when podman is missing or the service does not answer in time.
# Podman commands against the same store: `podman --root ROOT/storage --runroot ROOT/run …` with
# CONTAINERS_CONF=ROOT/containers.conf (podman.env in ROOT holds those as shell assignments).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="${1:-${SKILL_UP_PODMAN_ROOT:-/tmp/skill-up-podman}}"
wait_s="${SKILL_UP_PODMAN_WAIT:-30}"
command -v podman >/dev/null 2>&1 || { echo "start-podman: podman not found (apt-get install podman)" >&2; exit 1; }
# shellcheck source=scripts/docker/lib.sh
. "$here/lib.sh"
claim_root start-podman .skill-up-podman podman.sock podman.pid podman.log stop-podman.sh "service root"
mkdir -p "$root/storage" "$root/run" "$root/tmp" "$root/networks" "$root/no-cni-plugins"
: > "$root/.skill-up-podman"
cat > "$root/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
netns = "none"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$root/events.log"
tmp_dir = "$root/tmp"
volume_path = "$root/storage/volumes"
# An exec session's two conmon processes wait this long (default 300 s) before its clean-up, so
# that its exit code can still be read: 30 s is plenty for exec + inspect and keeps a busy test
# run from piling up hundreds of them.
exit_command_delay = 30

[network]
# CNI with an empty plugin folder: a bridge network (the compat API's default when a request
# names no network) fails at start with "failed to find plugin" instead of netavark adding a
# podman0 bridge, NAT rules and ip_forward=1 to the host (measured with Podman 4.3.1).
network_backend = "cni"
cni_plugin_dirs = ["$root/no-cni-plugins"]
network_config_dir = "$root/networks"
CONF
cat > "$root/podman.env" <<ENV
CONTAINERS_CONF=$root/containers.conf
PODMAN_FLAGS="--root $root/storage --runroot $root/run --tmpdir $root/tmp"
ENV
echo "start-podman: starting podman system service in $root (log $log)" >&2
# Run from ROOT: conmon 2.1.6 (cgroup v1) writes an empty file `oom` into its working folder
# (inherited from the service) when a container is OOM-killed, so it must not be the caller's.
cd "$root"
CONTAINERS_CONF="$root/containers.conf" setsid podman \
  --root "$root/storage" --runroot "$root/run" --tmpdir "$root/tmp" \
  system service --time=0 "unix://$sock" </dev/null >"$log" 2>&1 &
echo $! > "$pidfile"
deadline=$(( $(date +%s) + wait_s ))
until ping_ok; do
  if ! kill -0 "$(cat "$pidfile")" 2>/dev/null || [ "$(date +%s)" -ge "$deadline" ]; then
    echo "start-podman: no answer on $sock; last lines of $log:" >&2
    tail -n 20 "$log" >&2 || true
    "$here/stop-podman.sh" "$root" >&2 || true
    exit 1
  fi
  sleep 0.2
done
echo "start-podman: podman service pid $(cat "$pidfile") answers on $sock" >&2
echo "DOCKER_HOST=unix://$sock"
