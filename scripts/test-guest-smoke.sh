#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The guest smoke test as a test binary for scripts/run-tests.sh: builds
# the guest if needed, boots it once (scripts/run-guest.sh --smoke) and
# reports in the harness format ("ok   guest_smoke", then
# "N passed, N failed").
set -u
cd "$(dirname "$0")/.."
if scripts/build-guest.sh && scripts/run-guest.sh --smoke; then
	echo "ok   guest_smoke"
	echo "1 passed, 0 failed"
	exit 0
fi
echo "FAIL guest_smoke"
echo "0 passed, 1 failed"
exit 1
