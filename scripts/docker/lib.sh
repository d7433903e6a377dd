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
