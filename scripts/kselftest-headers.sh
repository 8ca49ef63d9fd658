#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# kselftest-headers.sh DIR
#
# Put kselftest_harness.h and kselftest.h from Debian's linux-source-6.12
# (tools/testing/selftests/) into DIR: the host tests (tests/unit,
# tests/qtest) and the guest's test_libvgpu are built on that harness,
# which is never copied into the repository.  Extracts only when a header
# is missing from DIR or older than the tarball (the extracted files get
# the time of extraction), so a newer linux-source-6.12 is picked up.
# Installs linux-source-6.12 with apt-get when the tarball is absent.
set -eu -o pipefail

dir=${1:?usage: kselftest-headers.sh DIR}
headers=(kselftest_harness.h kselftest.h)

tarball() {
	local t

	for t in /usr/src/linux-source-6.12.tar.xz /usr/src/linux-source-6.12.tar.*; do
		if [[ -f $t ]]; then
			echo "$t"
			return 0
		fi
	done
	return 1
}

if ! tb=$(tarball); then
	"$(dirname "$0")/apt-install.sh" --tag kselftest-headers linux-source-6.12
	tb=$(tarball) || {
		echo "kselftest-headers: no /usr/src/linux-source-6.12.tar.* after installing linux-source-6.12" >&2
		exit 1
	}
fi

fresh=1
for h in "${headers[@]}"; do
	[[ -f $dir/$h && $dir/$h -nt $tb ]] || fresh=0
done
((fresh)) && exit 0

# into a directory of our own first, then renamed into place: a build
# that reads DIR meanwhile sees the old headers or the new, never half
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "kselftest-headers: ${headers[*]} from $tb into $dir" >&2
# -m: stamped with the time of extraction, newer than the tarball
tar -xf "$tb" -C "$tmp" -m --strip-components=4 \
	"${headers[@]/#/linux-source-6.12/tools/testing/selftests/}"
for h in "${headers[@]}"; do
	[[ -s $tmp/$h ]] || { echo "kselftest-headers: $h not in $tb" >&2; exit 1; }
done
# kselftest.h first: the harness is the file make watches
mv -f "$tmp/kselftest.h" "$dir/kselftest.h"
mv -f "$tmp/kselftest_harness.h" "$dir/kselftest_harness.h"
