#!/usr/bin/env bash
# Passes when welcome.txt follows the house style: marker line first, greeting ending in "!".
set -u
file=welcome.txt
first=$(head -n 1 "$file")
second=$(sed -n 2p "$file")
if [ "$first" != "<!-- house-style: v2 -->" ]; then
  echo "first line is '$first', expected the house-style marker"
  exit 1
fi
case "$second" in
  *!) echo "house style ok: '$second'" ;;
  *) echo "greeting '$second' does not end with '!'"; exit 1 ;;
esac
