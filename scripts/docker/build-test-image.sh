#!/usr/bin/env bash
# Builds the two test images of skill-up's Docker runtime tests with `docker import` (no
# registry is reachable here), from root filesystems assembled on this machine:
#
#   SKILL_UP_TEST_NODE_IMAGE     (default skill-up-test/node:<node major>, e.g. skill-up-test/node:20)
#       this machine's own `node` (at /usr/local/bin/node) with every shared library `ldd` lists,
#       glibc's usual libraries (librt, libdl, libpthread, libm, …: native engine CLIs need them),
#       and this machine's bash at /usr/bin/bash (the engines' shell tools)
#       and the dynamic loader, plus busybox
#   SKILL_UP_TEST_BUSYBOX_IMAGE  (default skill-up-test/busybox:latest)
#       busybox only, no node: for the runtime's "the image lacks node" error
#
# Both have /bin/sh, /usr/bin/env and every other busybox applet (symlinks), /tmp (1777),
# /etc/passwd and /etc/group with root (uid 0, HOME /root) and agent (uid 1000, HOME /home/agent,
# owned by 1000:1000), /etc/hosts, /etc/nsswitch.conf, and ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin,
# CMD ["/bin/sh"]. Each carries the label skill-up.test-image.hash: the sha256 of this script and
# of every file copied in; an image whose tag already has the same hash is not rebuilt.
#
#   DOCKER_HOST=unix://… scripts/docker/build-test-image.sh
#
# The daemon is the docker CLI's (DOCKER_HOST or its default); $DOCKER names the CLI (default
# `docker`). Busybox comes from /bin/busybox (Debian's busybox-static, else busybox with its
# libraries); it is installed with apt-get when missing and running as root.
# Prints `SKILL_UP_TEST_NODE_IMAGE=…` and `SKILL_UP_TEST_BUSYBOX_IMAGE=…` on stdout, the rest on
# stderr. Exit 1 when node, busybox or the daemon is missing, or an import fails.
set -euo pipefail
docker="${DOCKER:-docker}"
node_bin="$(readlink -f "$(command -v node)")" || { echo "build-test-image: node not found" >&2; exit 1; }
node_version="$("$node_bin" --version)"            # v20.20.2
node_major="${node_version#v}"; node_major="${node_major%%.*}"
node_tag="${SKILL_UP_TEST_NODE_IMAGE:-skill-up-test/node:$node_major}"
busybox_tag="${SKILL_UP_TEST_BUSYBOX_IMAGE:-skill-up-test/busybox:latest}"

busybox_bin=""
for b in /bin/busybox /usr/bin/busybox; do [ -x "$b" ] && { busybox_bin="$b"; break; }; done
if [ -z "$busybox_bin" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "build-test-image: apt-get install busybox-static" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq busybox-static; } >/dev/null
    busybox_bin=/bin/busybox
  else
    echo "build-test-image: busybox not found (apt-get install busybox-static)" >&2; exit 1
  fi
fi
"$docker" version --format '{{.Server.Version}}' >/dev/null 2>&1 \
  || { echo "build-test-image: no Docker daemon answers (DOCKER_HOST=${DOCKER_HOST:-unset})" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/skill-up-test-image.XXXXXX")"
trap 'rm -rf -- "$work"' EXIT

# The files ldd lists for a binary: "name => /path (addr)" and the loader's "/lib64/ld-… (addr)".
libs_of() { ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u; }
# Copies a host file to the same path in the rootfs, following symlinks (the soname is kept).
put() { mkdir -p "$1$(dirname "$2")"; cp -L "$2" "$1$2"; }

# Lays out a busybox rootfs in $1 (its applets as symlinks at their usual paths).
base_rootfs() {
  local r=$1
  mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,root,home/agent,tmp,proc,sys,dev,var/tmp}
  chmod 1777 "$r/tmp" "$r/var/tmp"; chmod 700 "$r/root"
  cp "$busybox_bin" "$r/bin/busybox"
  if ! file_is_static "$busybox_bin"; then for l in $(libs_of "$busybox_bin"); do put "$r" "$l"; done; fi
  local a
  for a in $("$busybox_bin" --list-full); do
    [ "$a" = bin/busybox ] || [ -e "$r/$a" ] || ln -s /bin/busybox "$r/$a"
  done
  cat > "$r/etc/passwd" <<'P'
root:x:0:0:root:/root:/bin/sh
agent:x:1000:1000:agent:/home/agent:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
P
  cat > "$r/etc/group" <<'G'
root:x:0:
agent:x:1000:
nogroup:x:65534:
G
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$r/etc/hosts"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$r/etc/nsswitch.conf"
  chown -R 1000:1000 "$r/home/agent"
}
file_is_static() { ! ldd "$1" >/dev/null 2>&1; }

# sha256 over this script and the rootfs' files (paths, modes, owners and contents, in order).
rootfs_hash() {
  { sha256sum "$0" | cut -d' ' -f1
    (cd "$1" && find . -print0 | LC_ALL=C sort -z | xargs -0 stat -c '%n %a %u:%g %F %N')
    (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
  } | sha256sum | cut -d' ' -f1
}

# import TAG ROOTFS: skips when TAG already carries the rootfs' hash.
import_rootfs() {
  local tag=$1 r=$2 hash have
  hash="$(rootfs_hash "$r")"
  have="$("$docker" image inspect --format '{{ index .Config.Labels "skill-up.test-image.hash" }}' "$tag" 2>/dev/null || true)"
  if [ "$have" = "$hash" ]; then
    echo "build-test-image: $tag is up to date (hash ${hash:0:12})" >&2
    return 0
  fi
  echo "build-test-image: importing $tag (hash ${hash:0:12})" >&2
  tar --numeric-owner -C "$r" -cf - . | "$docker" import \
    --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' \
    --change 'CMD ["/bin/sh"]' \
    --change "LABEL skill-up.test-image.hash=$hash" \
    --change "LABEL skill-up.test-image.node=$3" \
    - "$tag" >/dev/null
}

base_rootfs "$work/busybox"
import_rootfs "$busybox_tag" "$work/busybox" none

base_rootfs "$work/node"
cp "$node_bin" "$work/node/usr/local/bin/node"
for l in $(libs_of "$node_bin"); do put "$work/node" "$l"; done
# The rest of glibc's usual set, as a Debian-based image such as node:20 has it: the engine CLIs
# that are native executables (Claude Code's, Codex's musl one needs none) link librt, libdl, …
for l in /lib/x86_64-linux-gnu/{librt,libdl,libpthread,libm,libresolv,libutil,libnss_files,libnss_dns}.so.*; do
  if [ -e "$l" ]; then put "$work/node" "$l"; fi
done
# bash (Claude Code's, Gemini CLI's and Qwen Code's shell tools need it) with its libraries.
bash_bin="$(readlink -f "$(command -v bash)")"
rm -f "$work/node/usr/bin/bash"; cp "$bash_bin" "$work/node/usr/bin/bash"
for l in $(libs_of "$bash_bin"); do put "$work/node" "$l"; done
import_rootfs "$node_tag" "$work/node" "$node_version"

echo "SKILL_UP_TEST_NODE_IMAGE=$node_tag"
echo "SKILL_UP_TEST_BUSYBOX_IMAGE=$busybox_tag"
