#!/usr/bin/env bash
# Stops a dockerd started by start-dockerd.sh and removes its root.
#
#   scripts/docker/stop-dockerd.sh [ROOT]       ROOT defaults to $SKILL_UP_DOCKERD_ROOT or /tmp/skill-up-dockerd
#
# 1. SIGTERM to the pid in ROOT/docker.pid (or ROOT/dockerd.launch-pid), only if that process
#    is a dockerd; dockerd then stops its containers and its own containerd. Waits up to
#    $SKILL_UP_DOCKERD_STOP_WAIT seconds (default 30), then SIGKILL.
# 2. SIGKILL to any containerd / containerd-shim / runc process left whose command line names
#    ROOT (after a SIGKILL of dockerd), found by scanning /proc, never by process name alone, and
#    to any process still in one of ROOT's containers' cgroups (cgroup path /docker/<id>).
# 3. Unmounts everything mounted at or under ROOT, deepest first: the `nsfs` dockerd leaves at
#    ROOT/exec/netns/default, overlay2 layers, shm mounts (falls back to a lazy unmount).
# 4. Removes ROOT (rm --one-file-system), only if it holds the marker .skill-up-dockerd and
#    nothing is mounted under it any more.
# Idempotent: a missing ROOT or a dead daemon is not an error. Exit 1 only when something is
# still mounted under ROOT or a process could not be killed.
set -euo pipefail
# shellcheck source=scripts/docker/lib.sh
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
root="${1:-${SKILL_UP_DOCKERD_ROOT:-/tmp/skill-up-dockerd}}"
wait_s="${SKILL_UP_DOCKERD_STOP_WAIT:-30}"
case "$root" in /?*) ;; *) echo "stop-dockerd: ROOT must be an absolute path, got '$root'" >&2; exit 1 ;; esac
root="${root%/}"
[ "$root" != "" ] && [ "$root" != "/" ] || { echo "stop-dockerd: refusing ROOT=/" >&2; exit 1; }
if [ ! -e "$root" ]; then echo "stop-dockerd: nothing at $root" >&2; exit 0; fi

comm_of() { cat "/proc/$1/comm" 2>/dev/null || true; }
# Alive = exists and is not a zombie (a zombie is gone for our purposes: its parent reaps it).
alive() { [ -r "/proc/$1/stat" ] && ! awk '{ exit ($3 == "Z") ? 0 : 1 }' "/proc/$1/stat" 2>/dev/null; }
wait_gone() { # pid seconds
  local pid=$1 n=$(( $2 * 5 ))
  while [ $n -gt 0 ] && alive "$pid"; do sleep 0.2; n=$((n - 1)); done
  ! alive "$pid"
}

status=0
for f in "$root/docker.pid" "$root/dockerd.launch-pid"; do
  [ -f "$f" ] || continue
  pid="$(cat "$f" 2>/dev/null || true)"
  case "$pid" in ''|*[!0-9]*) continue ;; esac
  alive "$pid" && [ "$(comm_of "$pid")" = dockerd ] || continue
  echo "stop-dockerd: stopping dockerd pid $pid" >&2
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_gone "$pid" "$wait_s"; then
    echo "stop-dockerd: dockerd $pid still running after ${wait_s}s, SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$pid" 5 || { echo "stop-dockerd: could not kill $pid" >&2; status=1; }
  fi
done

# Leftovers of a killed dockerd: its containerd and the shims, whose command lines name ROOT.
for d in /proc/[0-9]*; do
  pid="${d#/proc/}"
  alive "$pid" || continue
  case "$(comm_of "$pid")" in containerd|containerd-shim*|runc) ;; *) continue ;; esac
  if tr '\0' ' ' < "$d/cmdline" 2>/dev/null | grep -qF -- "$root/"; then
    echo "stop-dockerd: killing leftover $(comm_of "$pid") pid $pid" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
done

# Mount points at or under ROOT (field 5 of mountinfo, octal escapes for spaces decoded), deepest first.
kill_container_leftovers stop-dockerd "$root/data/containers/*/" /docker/
unmount_all stop-dockerd

# Folders outside ROOT that dockerd and its shims make whatever the flags; removed only when empty, so
# another daemon on the machine that uses them is not disturbed.
for d in /run/docker/plugins /run/docker /run/containerd/s /run/containerd; do rmdir "$d" 2>/dev/null || true; done

if [ -e "$root/.skill-up-dockerd" ]; then
  rm -rf --one-file-system -- "$root"
  echo "stop-dockerd: removed $root" >&2
else
  echo "stop-dockerd: $root has no .skill-up-dockerd marker; left in place" >&2
fi
exit "$status"
