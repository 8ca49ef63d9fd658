#!/bin/sh
# SPDX-License-Identifier: MIT
#
# guest-kernel.sh: print the release of the guest kernel, Debian's 6.12 LTS
# for bookworm (from bookworm-security), e.g. "6.12.117+deb12-amd64".
#
# The newest linux-image-6.12.N+deb12-amd64-unsigned that the archive
# offers together with its linux-headers package, resolved from apt's
# lists (never hard-coded: the security suite moves).  KREL in the
# environment overrides it.  Runs `apt-get update` once when the lists
# know no such package.  Used by build-module.sh and build-guest.sh, so
# that the module and the guest always agree.
set -eu

if [ -n "${KREL:-}" ]; then
	echo "$KREL"
	exit 0
fi

resolve() {
	apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' 2>/dev/null |
		sed -n 's/^linux-image-\(6\.12\.[0-9]*+deb12-amd64\)-unsigned .*/\1/p' |
		sort -V -r | while read -r rel; do
			if apt-cache show "linux-headers-$rel" >/dev/null 2>&1; then
				echo "$rel"
				break
			fi
		done
}

rel=$(resolve)
if [ -z "$rel" ]; then
	echo "guest-kernel: no Debian 6.12 kernel in apt's lists: apt-get update" >&2
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	if ! $sudo apt-get update -q >&2; then
		echo "guest-kernel: apt-get update failed (no network to the archive?)" >&2
		exit 1
	fi
	rel=$(resolve)
fi
if [ -z "$rel" ]; then
	echo "guest-kernel: the archive offers no linux-image-6.12.*+deb12-amd64-unsigned with its headers (is bookworm-security in apt's sources?)" >&2
	exit 1
fi
echo "$rel"
