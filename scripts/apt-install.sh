#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# apt-install.sh [--tag NAME] PACKAGE...: install the packages of the list
# that are not installed yet, with apt-get (through sudo when not root).
# The one place the project's scripts install Debian packages
# (tests/host/test-apt-install.sh checks that no script calls
# `apt-get install` itself).
#
# The host is the user's workstation: before installing, apt's plan for the
# missing packages is simulated (`apt-get install -s`), and a plan that
# would install a kernel (linux-image-*, or linux-headers-* which depends
# on one) is refused with exit status 2, naming the package, and nothing is
# installed.  Kernels for the guest are fetched with `apt-get download` and
# unpacked into build/ (scripts/build-guest.sh, scripts/kernel-headers.sh).
#
# Idempotent: does nothing, and runs no apt-get, when every package is
# installed.  Runs `apt-get update` once, before the install, or when the
# lists do not know a package.  Waits for a dpkg lock another install
# holds, and for another of the project's own installs (a lock in /tmp).  --tag NAME prefixes its messages (the calling script's name).
# VGPU_APT_SIMULATE=1: print the plan's verdict and install nothing.
set -euo pipefail

tag=apt-install
if [[ ${1-} == --tag ]]; then
	tag=$2
	shift 2
fi
log() { echo "$tag: $*" >&2; }

missing=()
for p in "$@"; do
	if [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) != installed ]]; then
		missing+=("$p")
	fi
done
((${#missing[@]})) || exit 0

# one of the project's installs at a time (make check's background builds
# install beside its lanes): apt-get waits for dpkg's lock, but an
# `apt-get update` fails at once on the lists' lock
exec 8>"${TMPDIR:-/tmp}/vgpu-apt-install.$EUID.lock"
if ! flock -n 8; then
	log "waiting for another of the project's installs"
	flock -w 1800 8 || { log "still waiting after 30 minutes: giving up"; exit 1; }
	# it may have installed some of them
	left=()
	for p in "${missing[@]}"; do
		[[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] || left+=("$p")
	done
	((${#left[@]})) || exit 0
	missing=("${left[@]}")
fi

sudo=()
((EUID == 0)) || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
apt=(apt-get -q -o DPkg::Lock::Timeout=600)

# plan: the packages `apt-get install` would unpack ("Inst NAME ...")
plan() {
	"${apt[@]}" install -s --no-install-recommends "${missing[@]}" 2>&1 |
		sed -n 's/^Inst \([^ ]*\) .*/\1/p'
}
if ! out=$(plan) || [[ -z $out ]]; then
	log "updating apt's lists"
	"${sudo[@]+"${sudo[@]}"}" "${apt[@]}" update >&2 ||
		{ log "apt-get update failed (no network to the archive?)"; exit 1; }
	out=$(plan) || true
fi
kernels=$(grep -E '^linux-(image|headers)-' <<<"$out" || true)
if [[ -n $kernels ]]; then
	log "refusing to install ${missing[*]}: it would install a kernel on this host ($(echo $kernels))"
	exit 2
fi
if [[ ${VGPU_APT_SIMULATE:-0} == 1 ]]; then
	log "would install ${missing[*]}"
	exit 0
fi
log "installing ${missing[*]}"
"${sudo[@]+"${sudo[@]}"}" "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >&2 ||
	{ log "cannot install ${missing[*]} (no network to the archive, or not in its lists?)"; exit 1; }
