# shellcheck shell=sh
# The guest's test programs, in one place: the selftests Makefile (through
# $(shell)), build.sh, scripts/build-guest.sh and run-in-guest.sh read
# these lists.  A program added here is built, installed, run and counted.
#
# VGPU_KSFT_PROGS   vgpu.ko's kselftests, on the first device alone
# VGPU_LIB_PROGS    libvgpu's tests (tests/unit, built statically) and the
#                   kselftests that use every device, with VGPU_BACKEND=drm
#                   VGPU_TEST_DEVICES=N
# VGPU_PTX_PROGS    the PTX front end's tests on the device
# VGPU_EXTRA_PROGS  installed beside them, not run by the runner: the
#                   benchmark, the timeline tool, the ioctl fuzzer
VGPU_KSFT_PROGS="vgpu_test vgpu_reset vgpu_queue vgpu_mem vgpu_faults vgpu_isolation vgpu_vm vgpu_userq vgpu_race"
VGPU_LIB_PROGS="test_libvgpu test_libvgpu_bo test_libvgpu_launch test_libvgpu_sync test_userq vgpu_multi vgpu_dos"
VGPU_PTX_PROGS="test_ptx test_ptx_kernels test_ptx_numerics test_ptx_errors"
VGPU_EXTRA_PROGS="vgpu_bench vgpu-trace vgpu_fuzz"
