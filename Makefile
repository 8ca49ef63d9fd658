# SPDX-License-Identifier: MIT
#
# vGPU top-level Makefile.
#
#   make            build the core, libvgpu and the host tools into build/
#   make check      every test suite; last line "N passed, N failed"
#   make bench      benchmarks, each figure beside a baseline from the same run
#   make run        the main job: build what is missing, run the examples on
#                   the host, boot the guest with the device (smoke test)
#   make shell      boot the guest with the device, interactive shell
#   make qemu       build QEMU with the vgpu-pci device (scripts/build-qemu.sh)
#
# Variants: BUILD=dir selects the output directory, SAN=1 builds with
# AddressSanitizer + UndefinedBehaviorSanitizer, CC=clang switches compiler.

BUILD ?= build
CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif
OPT ?= -O2
SAN ?= 0

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter
DRM_CFLAGS := $(shell pkg-config --cflags libdrm 2>/dev/null || echo -I/usr/include/libdrm)
DRM_LIBS := $(shell pkg-config --libs libdrm 2>/dev/null || echo -ldrm)
CPPFLAGS += -Iuapi -Iqemu-device/core -Ilibvgpu -Itests -D_GNU_SOURCE $(DRM_CFLAGS)
CFLAGS ?= $(OPT) -g
CFLAGS += -std=c11 $(WARN) -fvisibility=hidden -MMD -MP
LDLIBS += $(DRM_LIBS) -lm -lpthread

ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif

CORE_SRCS := $(wildcard qemu-device/core/*.c)
LIB_SRCS := $(wildcard libvgpu/*.c)
TOOL_SRCS := $(wildcard libvgpu/tools/*.c)
TEST_SRCS := $(wildcard tests/unit/test_*.c)
BENCH_SRCS := $(wildcard tests/bench/bench_*.c)
QTEST_SRCS := $(wildcard tests/qtest/test_*.c tests/qtest/bench_*.c)
QTEST_LIB_SRCS := tests/qtest/qtest_client.c tests/qtest/vgpu_dev.c

CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/%.o)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
TOOLS := $(patsubst libvgpu/tools/%.c,$(BUILD)/bin/%,$(TOOL_SRCS))
TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
BENCHES := $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
QTESTS := $(patsubst tests/qtest/%.c,$(BUILD)/qtest/%,$(QTEST_SRCS))
QTEST_LIB_OBJS := $(QTEST_LIB_SRCS:%.c=$(BUILD)/%.o)
QEMU := build/qemu-build/qemu-system-x86_64

CORE_LIB := $(BUILD)/libvgpucore.a
ASM_LIB := $(BUILD)/libvgpu-asm.a

.PHONY: all check check-host check-asan check-clang bench run clean qemu \
	qtests check-device bench-device guest shell
all: $(CORE_LIB) $(ASM_LIB) $(TOOLS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The core is the simulator's hot loop: -O3 lets the lane loops vectorise.
$(CORE_OBJS): OPT := -O3

$(CORE_LIB): $(CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(ASM_LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/bin/%: $(BUILD)/libvgpu/tools/%.o $(ASM_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(ASM_LIB) $(CORE_LIB) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(ASM_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(ASM_LIB) $(CORE_LIB) $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/tests/bench/%.o $(ASM_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(ASM_LIB) $(CORE_LIB) $(LDLIBS)

# Device tests and benchmarks: clients of QEMU's qtest protocol.
$(BUILD)/qtest/%: $(BUILD)/tests/qtest/%.o $(QTEST_LIB_OBJS) $(ASM_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(QTEST_LIB_OBJS) $(ASM_LIB) $(CORE_LIB) $(LDLIBS)

qtests: $(QTESTS)

# QEMU with the vgpu-pci device grafted in (build/qemu-build); the script
# rebuilds only what changed.
qemu:
	@scripts/build-qemu.sh

$(QEMU):
	@scripts/build-qemu.sh

# The guest: Debian's kernel, a busybox initramfs and the smoke program.
guest: all
	@scripts/build-guest.sh

check-device: all $(QTESTS) qemu
	@scripts/run-tests.sh $(BUILD) $(filter $(BUILD)/qtest/test_%,$(QTESTS))

bench-device: all $(QTESTS) qemu
	@$(BUILD)/qtest/bench_device

# Test suites: host tests (gcc), the same under ASan+UBSan, and a clang
# -Werror build.  scripts/run-tests.sh sums every suite's closing line.
check:
	@scripts/check.sh

check-host: all $(TESTS)
	@scripts/run-tests.sh $(BUILD) $(TESTS)

bench: all $(BENCHES) $(QTESTS) qemu
	@for b in $(BENCHES); do $$b || exit 1; done
	@$(BUILD)/qtest/bench_device
	@$(MAKE) --no-print-directory bench-guest

run: all qemu guest
	@scripts/run-examples.sh $(BUILD)
	@scripts/run-guest.sh --smoke

shell: qemu guest
	@scripts/run-guest.sh

clean:
	rm -rf build build-asan build-clang

-include $(shell find $(BUILD)/qemu-device $(BUILD)/libvgpu $(BUILD)/tests -name '*.d' -type f 2>/dev/null)

# vgpu.ko against the guest kernel's headers (scripts/build-module.sh) and
# the guest selftests (tests/selftests/vgpu/); not part of `all`.
.PHONY: module selftests check-guest bench-guest
module:
	@scripts/build-module.sh
selftests:
	@$(MAKE) -C tests/selftests/vgpu
check-guest: module selftests qemu
	@tests/selftests/vgpu/run-in-guest.sh
# null-job latency and jobs/s through vgpu.ko beside a syncobj loop, in the guest
bench-guest: module selftests qemu
	@tests/selftests/vgpu/run-in-guest.sh --bench
