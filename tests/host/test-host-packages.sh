#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test-host-packages.sh: the host is the user's workstation, and
# `make run` / `make check` must not put a kernel on it (KTAP output for
# scripts/run-tests.sh).
#
#   no_direct_apt_install  no script, Makefile or test installs a Debian
#                          package except through scripts/apt-install.sh
#   kernel_plan_refused    apt-install.sh refuses linux-headers-KREL, whose
#                          plan would install linux-image-KREL
#   headers_unpacked       vgpu.ko's build tree is Debian's headers unpacked
#                          into build/kernel-headers/, and neither the
#                          headers nor the image of the guest kernel is
#                          installed on the host
#   no_kernel_installed    no linux-image-* or linux-headers-* package
#                          was installed since make check began (whose
#                          list scripts/check.sh keeps in the file
#                          $VGPU_HOST_KERNELS_BEFORE names)
set -u
cd "$(dirname "$0")/../.."
before=${VGPU_HOST_KERNELS_BEFORE-}

n=0 failed=0 passed=0 skipped=0
ok() { n=$((n + 1)); passed=$((passed + 1)); echo "ok $n $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $1"; }
skip() { n=$((n + 1)); skipped=$((skipped + 1)); echo "ok $n $1 # SKIP $2"; }
installed() { [[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]; }
kernels() {
	dpkg-query -W -f='${db:Status-Status} ${Package}\n' 'linux-image-*' 'linux-headers-*' 2>/dev/null |
		sed -n 's/^installed //p' | sort
}

echo "TAP version 13"
echo "1..4"

# 1: `apt-get install` or `apt install` in code (not in a comment)
hits=$(grep -rnE '^[^#]*\bapt(-get)? +([^ ]+ +)*install\b' scripts tests Makefile .ci \
	--include='*.sh' --include=Makefile --include='*.mk' --include=run 2>/dev/null |
	grep -v '^scripts/apt-install\.sh:' | grep -v '^tests/host/test-host-packages\.sh:' || true)
if [[ -z $hits ]]; then
	ok no_direct_apt_install
else
	echo "# installs that bypass scripts/apt-install.sh:"
	sed 's/^/#   /' <<<"$hits"
	notok no_direct_apt_install
fi

# 2
krel=$(scripts/guest-kernel.sh 2>/dev/null || true)
if [[ -z $krel ]]; then
	skip kernel_plan_refused "no guest kernel in apt's lists"
elif installed "linux-headers-$krel"; then
	skip kernel_plan_refused "linux-headers-$krel is installed on this host already"
else
	out=$(VGPU_APT_SIMULATE=1 scripts/apt-install.sh "linux-headers-$krel" 2>&1)
	rc=$?
	echo "# $out"
	if ((rc == 2)) && [[ $out == *"linux-image-$krel"* ]]; then
		ok kernel_plan_refused
	else
		echo "# expected exit status 2 naming linux-image-$krel, got $rc"
		notok kernel_plan_refused
	fi
fi

# 3
kdir=build/kernel-headers/$krel/usr/src/linux-headers-$krel
if [[ -z $krel || ! -f build/module/kernel-release ]]; then
	skip headers_unpacked "vgpu.ko not built"
elif [[ -f $kdir/Module.symvers && -f build/kernel-headers/$krel/.complete ]] &&
	! installed "linux-image-$krel" && ! installed "linux-image-$krel-unsigned" &&
	! installed "linux-headers-$krel"; then
	ok headers_unpacked
else
	echo "# $kdir missing, or linux-image/linux-headers-$krel installed on the host"
	notok headers_unpacked
fi

# 4
if [[ -z $before || ! -f $before ]]; then
	skip no_kernel_installed "no list of the packages installed before"
else
	new=$(comm -13 "$before" <(kernels))
	if [[ -z $new ]]; then
		ok no_kernel_installed
	else
		echo "# installed on the host during make check: $(echo $new)"
		notok no_kernel_installed
	fi
fi

echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:$skipped error:0"
((failed == 0))
