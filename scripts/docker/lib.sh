# Shell functions the daemon scripts of scripts/docker/ share (sourced, never run).

# kill_container_leftovers NAME GLOB PREFIX: kills the processes of the containers whose folders
# match GLOB (one folder per container id) that outlived their shim or conmon (a SIGKILLed
# daemon), found by their cgroup path, which names the container id after PREFIX
# (dockerd's cgroupfs: /docker/<id>; podman's: libpod-<id>). NAME prefixes the messages.
kill_container_leftovers() {
  local name=$1 glob=$2 prefix=$3 c id d p
  for c in $glob; do
    [ -d "$c" ] || continue
    id="$(basename "$c")"
    case "$id" in *[!0-9a-f]*|'') continue ;; esac
    for d in /proc/[0-9]*; do
      grep -qF -- "$prefix$id" "$d/cgroup" 2>/dev/null || continue
      p="${d#/proc/}"
      echo "$name: killing pid $p left in container ${id:0:12}" >&2
      kill -KILL "$p" 2>/dev/null || true
    done
  done
}

# Mount points at or under $root (field 5 of mountinfo, octal escapes for spaces decoded), deepest first.
mounts_under() {
  awk -v r="$root" '{ m = $5; gsub(/\\040/, " ", m); if (m == r || index(m, r "/") == 1) print length(m) "\t" m }' /proc/self/mountinfo \
    | sort -rn | cut -f2-
}

# unmount_all NAME: unmounts everything under $root, deepest first (a lazy unmount on the last
# pass); exit 1 naming what is still mounted, so the caller never removes a mounted tree.
unmount_all() {
  local name=$1 pass left m
  for pass in 1 2 3; do
    left="$(mounts_under)"
    [ -n "$left" ] || break
    while IFS= read -r m; do
      [ -n "$m" ] || continue
      if [ "$pass" -lt 3 ]; then umount "$m" 2>/dev/null || true; else umount -l "$m" 2>/dev/null || true; fi
    done <<< "$left"
  done
  left="$(mounts_under)"
  if [ -n "$left" ]; then
    echo "$name: still mounted under $root, not removing it:" >&2
    echo "$left" >&2
    exit 1
  fi
}

# claim_root NAME MARKER SOCK PIDFILE LOG STOP WHAT: the start of start-dockerd.sh and
# start-podman.sh. Checks $root (absolute; trailing / dropped) and sets sock, pidfile and log
# under it; a daemon of this root that answers is reused (DOCKER_HOST printed, exit 0); a stale
# root (MARKER present) is cleaned up with the STOP script; a non-empty folder without MARKER is
# refused. WHAT names the root in messages; ping_ok and daemon_alive (below) read what it sets.
claim_root() {
  local name=$1 marker=$2 stop=$6 what=$7
  case "$root" in /?*) ;; *) echo "$name: ROOT must be an absolute path, got '$root'" >&2; exit 1 ;; esac
  root="${root%/}"
  sock="$root/$3"
  pidfile="$root/$4"
  log="$root/$5"
  # A unix socket path holds at most 107 bytes.
  if [ ${#sock} -gt 100 ]; then echo "$name: socket path too long (${#sock} > 100): $sock" >&2; exit 1; fi
  if daemon_alive && ping_ok; then
    echo "$name: already running (pid $(cat "$pidfile")) at $sock" >&2
    echo "DOCKER_HOST=unix://$sock"
    exit 0
  fi
  if [ -e "$root/$marker" ]; then
    echo "$name: cleaning up a stale $what at $root" >&2
    "$here/$stop" "$root" >&2
  fi
  if [ -e "$root" ] && [ -n "$(ls -A "$root" 2>/dev/null)" ] && [ ! -e "$root/$marker" ]; then
    echo "$name: $root exists, is not empty and was not made by this script; refusing to use it" >&2
    exit 1
  fi
}

# Whether the daemon at $sock answers GET /_ping, and whether the process in $pidfile lives.
ping_ok() { curl -fsS --max-time 2 --unix-socket "$sock" http://localhost/_ping >/dev/null 2>&1; }
daemon_alive() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }
