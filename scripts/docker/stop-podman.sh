#!/usr/bin/env bash
# Stops a Podman API service started by start-podman.sh and removes its root.
#
#   scripts/docker/stop-podman.sh [ROOT]       ROOT defaults to $SKILL_UP_PODMAN_ROOT or /tmp/skill-up-podman
#
# 1. Removes every container of that store (`podman rm -af -t 2`): Podman's containers live on
#    under conmon after the service ends.
# 2. SIGTERM to the service's pid (ROOT/podman.pid, only if it is a podman), SIGKILL after
#    $SKILL_UP_PODMAN_STOP_WAIT seconds (default 15); SIGKILL to any conmon whose command line names
#    ROOT, and to any process still in one of ROOT's containers' cgroups (cgroup path …libpod-<id>…).
# 3. Unmounts everything at or under ROOT, deepest first, and removes ROOT (only with the
#    marker .skill-up-podman, and only when nothing is mounted there any more).
# Idempotent: a missing ROOT is not an error. Exit 1 when something stays mounted.
set -euo pipefail
# shellcheck source=scripts/docker/lib.sh
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
root="${1:-${SKILL_UP_PODMAN_ROOT:-/tmp/skill-up-podman}}"
wait_s="${SKILL_UP_PODMAN_STOP_WAIT:-15}"
case "$root" in /?*) ;; *) echo "stop-podman: ROOT must be an absolute path, got '$root'" >&2; exit 1 ;; esac
root="${root%/}"
[ "$root" != "" ] && [ "$root" != "/" ] || { echo "stop-podman: refusing ROOT=/" >&2; exit 1; }
if [ ! -e "$root" ]; then echo "stop-podman: nothing at $root" >&2; exit 0; fi

comm_of() { cat "/proc/$1/comm" 2>/dev/null || true; }
alive() { [ -r "/proc/$1/stat" ] && ! awk '{ exit ($3 == "Z") ? 0 : 1 }' "/proc/$1/stat" 2>/dev/null; }
wait_gone() { local pid=$1 n=$(( $2 * 5 )); while [ $n -gt 0 ] && alive "$pid"; do sleep 0.2; n=$((n - 1)); done; ! alive "$pid"; }

if [ -f "$root/containers.conf" ] && command -v podman >/dev/null 2>&1; then
  CONTAINERS_CONF="$root/containers.conf" timeout 60 podman --root "$root/storage" --runroot "$root/run" --tmpdir "$root/tmp" \
    rm -af -t 2 >/dev/null 2>&1 || echo "stop-podman: podman rm -af failed (continuing)" >&2
fi

status=0
pid="$(cat "$root/podman.pid" 2>/dev/null || true)"
case "$pid" in ''|*[!0-9]*) pid="" ;; esac
if [ -n "$pid" ] && alive "$pid" && [ "$(comm_of "$pid")" = podman ]; then
  echo "stop-podman: stopping podman service pid $pid" >&2
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_gone "$pid" "$wait_s"; then
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$pid" 5 || { echo "stop-podman: could not kill $pid" >&2; status=1; }
  fi
fi
for d in /proc/[0-9]*; do
  p="${d#/proc/}"
  alive "$p" || continue
  case "$(comm_of "$p")" in conmon|podman|runc) ;; *) continue ;; esac
  if tr '\0' ' ' < "$d/cmdline" 2>/dev/null | grep -qF -- "$root/"; then
    echo "stop-podman: killing leftover $(comm_of "$p") pid $p" >&2
    kill -KILL "$p" 2>/dev/null || true
  fi
done

kill_container_leftovers stop-podman "$root/storage/overlay-containers/*/" libpod-
unmount_all stop-podman
# Folders outside ROOT that podman makes whatever the flags; removed only when empty, so
# another daemon on the machine that uses them is not disturbed.
for d in /run/containers/networks /run/containers; do rmdir "$d" 2>/dev/null || true; done
# Podman 4.3 keeps its blob-info cache (what `import` wrote) at /var/lib/containers/cache whatever
# --root says; it is only a cache, removed when it is all that /var/lib/containers holds.
if [ "$(cd /var/lib/containers 2>/dev/null && find . -mindepth 1 | LC_ALL=C sort | tr '\n' ' ')" = "./cache ./cache/blob-info-cache-v1.boltdb " ]; then
  rm -rf -- /var/lib/containers
fi

if [ -e "$root/.skill-up-podman" ]; then
  rm -rf --one-file-system -- "$root"
  echo "stop-podman: removed $root" >&2
else
  echo "stop-podman: $root has no .skill-up-podman marker; left in place" >&2
fi
exit "$status"
