# SPDX-License-Identifier: MIT
#
# vGPU top-level Makefile.
#
#   make            build libvgpu (static and shared), the tools and the
#                   example programs into build/
#   make check      every test suite; last line "N passed, N failed"
#   make bench      benchmarks, each figure beside a baseline from the same run
#   make run        the main job: install what is missing, build QEMU with the
#                   device, vgpu.ko, the library, tools and tests; run the
#                   examples on the host (sim backend), boot the guest, load
#                   the driver, run every example there (drm backend), power
#                   off; exit status 0 only if every result matched
#   make shell      boot the guest with the driver loaded, interactive shell
#   make install    library, headers, vgpu.pc and tools under
#                   $(DESTDIR)$(PREFIX) (PREFIX=/usr/local)
#   make qemu       build QEMU with the vgpu-pci device (scripts/build-qemu.sh)
#   make ptx-coverage  docs/ptx-coverage.md from test_ptxgen (tests/ptx/gen)
#   make ptxgen-validate  ptxas -arch=sm_90a on every module ptxgen writes
#
# Variants: BUILD=dir selects the output directory, SAN=1 builds with
# AddressSanitizer + UndefinedBehaviorSanitizer, CC=clang switches compiler.
#
# Outputs (in $(BUILD)/):
#   libvgpu.a          libvgpu: front end, both backends, assembler,
#                      disassembler and the execution core (qemu-device/core)
#   libvgpu.so.2       the same as a shared library, -fPIC objects in pic/;
#   libvgpu.so         exports exactly libvgpu/libvgpu.sym (vgpu.h's API)
#   libvgpucore.a      the execution core alone (tests and benchmarks)
#   bin/               vgpu-as, vgpu-objdump, vgpu-run, vgpu-info
#   examples/          the example programs (examples/*.c)
#   tests/, bench/, qtest/   host tests, benchmarks, device tests
#   guest-bin/         static tools and examples for the guest initramfs
#   guest-cuda/        the CUDA programs for the guest, with their libraries

BUILD ?= build
CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif
OPT ?= -O2
SAN ?= 0

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR ?=

# libvgpu's version (vgpu.pc) and the shared library's ABI version.
VERSION := 1.0.0
SOVERSION := 2

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter
DRM_CFLAGS := $(shell pkg-config --cflags libdrm 2>/dev/null || echo -I/usr/include/libdrm)
DRM_LIBS := $(shell pkg-config --libs libdrm 2>/dev/null || echo -ldrm)
# Static programs for the guest: Debian's libdrm-dev ships libdrm.a.
DRM_STATIC_LIBS := $(shell pkg-config --static --libs libdrm 2>/dev/null || echo -ldrm)
CPPFLAGS += -Iuapi -Iqemu-device/core -Ilibvgpu -Itests -D_GNU_SOURCE $(DRM_CFLAGS)
CFLAGS ?= $(OPT) -g
CFLAGS += -std=c11 $(WARN) -fvisibility=hidden -MMD -MP
LDLIBS += $(DRM_LIBS) -lm -lpthread

SAN_FLAGS :=
ifeq ($(SAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
CFLAGS += $(SAN_FLAGS)
LDFLAGS += -fsanitize=address,undefined
endif
# SAN=thread: ThreadSanitizer, for the threads of the sim backend
# (VGPU_SIM_THREADS: build test_sim_threads so and run it under
# setarch -R; -Wno-tsan: drm.c's fences are not the sim's); not part of
# make check
ifeq ($(SAN),thread)
SAN_FLAGS := -fsanitize=thread -Wno-tsan
CFLAGS += $(SAN_FLAGS)
LDFLAGS += -fsanitize=thread
endif

CORE_SRCS := $(wildcard qemu-device/core/*.c)
LIB_SRCS := $(wildcard libvgpu/*.c libvgpu/sim/*.c libvgpu/trace/*.c libvgpu/asm/*.c libvgpu/ptx/*.c)
TOOL_SRCS := $(wildcard libvgpu/tools/*.c)
# A tool of several files: libvgpu/tools/NAME.c, the rest in
# libvgpu/tools/NAME/ (its objects are made prerequisites of NAME below)
VGPU_RUN_SRCS := $(wildcard libvgpu/tools/vgpu-run/*.c)
EXAMPLE_SRCS := $(wildcard examples/*.c)
TEST_SRCS := $(wildcard tests/unit/test_*.c)
BENCH_SRCS := $(wildcard tests/bench/bench_*.c)
QTEST_SRCS := $(wildcard tests/qtest/test_*.c tests/qtest/bench_*.c)
QTEST_LIB_SRCS := tests/qtest/qtest_client.c tests/qtest/qtest_pci.c tests/qtest/vgpu_dev.c

CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/%.o)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
PIC_CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/pic/%.o)
PIC_OBJS := $(LIB_SRCS:%.c=$(BUILD)/pic/%.o) $(PIC_CORE_OBJS)
TOOL_NAMES := $(patsubst libvgpu/tools/%.c,%,$(TOOL_SRCS))
TOOLS := $(TOOL_NAMES:%=$(BUILD)/bin/%)
EXAMPLE_NAMES := $(patsubst examples/%.c,%,$(EXAMPLE_SRCS))
EXAMPLES := $(EXAMPLE_NAMES:%=$(BUILD)/examples/%)
TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRCS)) \
	$(BUILD)/tests/test_install $(BUILD)/tests/test_readme_cuda
BENCHES := $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
QTESTS := $(patsubst tests/qtest/%.c,$(BUILD)/qtest/%,$(QTEST_SRCS))
QTEST_LIB_OBJS := $(QTEST_LIB_SRCS:%.c=$(BUILD)/%.o)
GUEST_BINS := $(TOOL_NAMES:%=$(BUILD)/guest-bin/%) \
	$(EXAMPLE_NAMES:%=$(BUILD)/guest-bin/%)
QEMU := build/qemu-build/qemu-system-x86_64

CORE_LIB := $(BUILD)/libvgpucore.a
LIB_A := $(BUILD)/libvgpu.a
LIB_SO := $(BUILD)/libvgpu.so.$(SOVERSION)
LIB_SO_LINK := $(BUILD)/libvgpu.so
LIB_VER := $(BUILD)/libvgpu.ver
# The archive's former name (tests/selftests/vgpu links it): the same archive.
ASM_LIB := $(BUILD)/libvgpu-asm.a

# libcuda.so.1: the CUDA driver API over libvgpu (libvgpu/cuda/, docs/cuda.md).
# It links libvgpu.so.2, found beside it ($$ORIGIN, in build/) or one
# directory up (installed in $(LIBDIR)/vgpu-cuda/, so that it shadows no
# system libcuda); it exports only the cu* entry points (and cuv_rt_launch,
# libcudart's private launch entry: libvgpu/cuda/cuv_rt.h).
CUDA_SRCS := $(wildcard libvgpu/cuda/*.c)
CUDA_OBJS := $(CUDA_SRCS:%.c=$(BUILD)/pic/%.o)
CUDA_SO := $(BUILD)/libcuda.so.1
CUDA_LIBDIR := $(LIBDIR)/vgpu-cuda
CUDA_EXAMPLE := $(BUILD)/examples/cuda/drv_saxpy
# examples/cuda/vectorAdd.cu: the runtime-API program README.md's "Run a
# CUDA program on vGPU" builds with nvcc (rule below, after CUDART_NVCC)
CUDART_EXAMPLE := $(BUILD)/examples/cuda/vectorAdd
# libcudart.so.13: the CUDA runtime API over libcuda.so.1, for programs
# built by nvcc with -cudart shared (libvgpu/cudart/, docs/cuda.md); it
# finds libcuda.so.1 beside it and exports cuda* and __cuda* under the
# version node libcudart.so.13, as nvcc 13's programs import them.
CUDART_SRCS := $(wildcard libvgpu/cudart/*.c)
CUDART_OBJS := $(CUDART_SRCS:%.c=$(BUILD)/pic/%.o)
CUDART_SO := $(BUILD)/libcudart.so.13

# Installed headers: the public API and the uAPI headers it includes.
PUBLIC_HEADERS := libvgpu/vgpu.h $(sort $(wildcard uapi/vgpu_hw*.h)) uapi/vgpu_isa.h \
	uapi/vgpu_isa_table.h uapi/vgpu_drm.h

.PHONY: all check check-host check-schedules check-sim-threads print-tests bench run clean qemu qtests ptxgen-validate ptx-coverage check-device check-device-asan fuzz fuzz-deps fuzz-run fuzz-device \
	bench-device guest guest-bins guest-cuda shell install install-files uninstall \
	examples deps
all: $(CORE_LIB) $(LIB_A) $(ASM_LIB) $(LIB_SO_LINK) $(CUDA_SO) $(CUDART_SO) $(CUDA_EXAMPLE) \
	$(CUDART_EXAMPLE) $(TOOLS) $(EXAMPLES)

# Objects made on the way to a program are kept (no rebuild next time).
.SECONDARY:

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -c -o $@ $<

# The core is the simulator's hot loop: -O3 lets the lane loops vectorise.
$(CORE_OBJS) $(PIC_CORE_OBJS): OPT := -O3

$(CORE_LIB): $(CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIB_A): $(LIB_OBJS) $(CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(ASM_LIB): $(LIB_A)
	cp $< $@

# The version script: node VGPU_1 with the symbols of libvgpu.sym, the
# rest local.  scripts/check-symbols.sh checks the result.
$(LIB_VER): libvgpu/libvgpu.sym
	@mkdir -p $(dir $@)
	{ echo "/* generated from libvgpu/libvgpu.sym by the Makefile */"; \
	  echo "VGPU_1 {"; echo "global:"; \
	  sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$$/d' -e 's/.*/	&;/' $<; \
	  echo "local:"; echo "	*;"; echo "};"; } > $@.tmp && mv $@.tmp $@

$(LIB_SO): $(PIC_OBJS) $(LIB_VER)
	$(CC) -shared $(CFLAGS) $(LDFLAGS) -Wl,-soname,libvgpu.so.$(SOVERSION) \
		-Wl,--version-script=$(LIB_VER) -Wl,-z,defs -o $@ $(PIC_OBJS) \
		$(DRM_LIBS) -lm -lpthread

$(LIB_SO_LINK): $(LIB_SO)
	ln -sf $(notdir $<) $@

# examples/cuda/drv_saxpy.c: a driver-API program, built like a user's
# (our cuda.h, libcuda.so.1); test_install builds it with pkg-config too.
$(CUDA_EXAMPLE): examples/cuda/drv_saxpy.c libvgpu/cuda/cuda.h libvgpu/cuda/cuda_types.h \
		$(CUDA_SO)
	@mkdir -p $(dir $@)
	$(CC) -Ilibvgpu/cuda $(filter-out -fvisibility=hidden,$(CFLAGS)) $(LDFLAGS) -o $@ $< \
		$(CUDA_SO) -Wl,-rpath,$(abspath $(BUILD)) -lm

$(CUDA_SO): $(CUDA_OBJS) $(LIB_SO) libvgpu/cuda/libcuda.ver
	$(CC) -shared $(CFLAGS) $(LDFLAGS) -Wl,-soname,libcuda.so.1 \
		-Wl,--version-script=libvgpu/cuda/libcuda.ver -Wl,-z,defs \
		-Wl,-rpath,'$$ORIGIN:$$ORIGIN/..' -o $@ $(CUDA_OBJS) $(LIB_SO) -lzstd -lpthread

$(CUDART_OBJS): CPPFLAGS += -Ilibvgpu/cuda
$(CUDART_SO): $(CUDART_OBJS) $(CUDA_SO) libvgpu/cudart/libcudart.ver
	$(CC) -shared $(CFLAGS) $(LDFLAGS) -Wl,-soname,libcudart.so.13 \
		-Wl,--version-script=libvgpu/cudart/libcudart.ver -Wl,-z,defs \
		-Wl,-rpath,'$$ORIGIN' -o $@ $(CUDART_OBJS) $(CUDA_SO) -lpthread

# Tools, tests and benchmarks link the static archive.  A tool links its
# own object and those of its directory, when it has one.
$(BUILD)/bin/%: $(BUILD)/libvgpu/tools/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_A) $(LDLIBS)
$(BUILD)/bin/vgpu-run $(BUILD)/guest-bin/vgpu-run: $(VGPU_RUN_SRCS:%.c=$(BUILD)/%.o)

# Example programs: objects in examples/obj/ (not to be taken for programs).
$(BUILD)/examples/obj/%.o: examples/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(EXAMPLES): $(BUILD)/examples/%: $(BUILD)/examples/obj/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS)

examples: $(EXAMPLES)

# The host tests are kselftests: kselftest_harness.h and kselftest.h from
# Debian's linux-source-6.12, extracted into $(KSFT_DIR) (never into the
# repository) when missing or older than the tarball; tests/unit/
# kselftest_host.h includes them.
KSFT_DIR := $(BUILD)/kselftest
KSFT_TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o) \
	$(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/qtest/test_*.c))
$(KSFT_TEST_OBJS): CPPFLAGS += -I$(KSFT_DIR) -Itests/unit
$(KSFT_TEST_OBJS): | $(KSFT_DIR)/kselftest_harness.h
$(KSFT_DIR)/kselftest_harness.h: $(wildcard /usr/src/linux-source-6.12.tar.*)
	@scripts/kselftest-headers.sh $(KSFT_DIR)

# The PTX corpus: tests/ptx/*.cu compiled for sm_90a by Debian's clang
# (no CUDA installation: -nocudainc -nocudalib) and embedded in a header
# by scripts/ptx-corpus.sh, so that test_ptx carries its kernels wherever
# it runs.
PTX_CLANG ?= clang-19
PTX_CFLAGS := -x cuda --cuda-device-only -nocudainc -nocudalib \
	--cuda-gpu-arch=sm_90a -O2 -Wno-unknown-cuda-version
PTX_CU := $(wildcard tests/ptx/*.cu)
PTX_GEN := $(PTX_CU:tests/ptx/%.cu=$(BUILD)/ptx/%.ptx)
$(BUILD)/ptx/%.ptx: tests/ptx/%.cu tests/ptx/cuda_min.h
	@mkdir -p $(dir $@)
	$(PTX_CLANG) $(PTX_CFLAGS) -S -o $@ $<
# nvcc's PTX and what an H100 computed for it, made on the accelerator
# machine and committed (tests/ptx/nvcc/kernels.cu says how)
PTX_NVCC := $(wildcard tests/ptx/nvcc/*.ptx) $(wildcard tests/ptx/nvcc/*.expected)
$(BUILD)/ptx/ptx_corpus.h: $(PTX_GEN) $(PTX_NVCC) scripts/ptx-corpus.sh
	scripts/ptx-corpus.sh $@ $(PTX_GEN) $(PTX_NVCC)
# tests/ptx/nvcc_call/*.cu (real calls): compiled at build time by the
# machine's nvcc 13 (offline, no GPU) and embedded for test_ptx_call
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),/usr/local/cuda/bin/nvcc)
PTX_CALL_GEN := $(patsubst tests/ptx/nvcc_call/%.cu,$(BUILD)/ptx/nvcc_call/%.ptx,\
	$(wildcard tests/ptx/nvcc_call/*.cu))
$(BUILD)/ptx/nvcc_call/%.ptx: tests/ptx/nvcc_call/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -arch=sm_90a -O3 -ptx -o $@ $<
$(BUILD)/ptx/ptx_call_corpus.h: $(PTX_CALL_GEN) scripts/ptx-corpus.sh
	scripts/ptx-corpus.sh $@ $(PTX_CALL_GEN)
$(BUILD)/tests/unit/test_ptx_call.o: $(BUILD)/ptx/ptx_call_corpus.h
$(BUILD)/tests/unit/test_ptx_call.o: CPPFLAGS += -I$(BUILD)/ptx
# ptxgen (tests/ptx/gen): one small kernel per form of each PTX instruction,
# written into $(BUILD)/ptxgen/ (MODULE.ptx, MODULE.manifest, modules.txt)
# by a deterministic generator that needs no GPU and no ptxas (ptxas's
# verdicts are committed); test_ptxgen runs them and compares with the
# GPU's results committed as tests/ptx/gen/MODULE.expected.
PTXGEN_SRCS := tests/ptx/gen/ptxgen $(wildcard tests/ptx/gen/*.py) tests/ptx/gen/ptxas-verdicts.txt
$(BUILD)/ptxgen/modules.txt: $(PTXGEN_SRCS)
	python3 tests/ptx/gen/ptxgen $(BUILD)/ptxgen
$(BUILD)/tests/test_ptxgen: $(BUILD)/ptxgen/modules.txt
# every generated module through ptxas -arch=sm_90a (CUDA 13.0 is on every
# build machine): each form it emits is PTX for sm_90a
ptxgen-validate: $(BUILD)/ptxgen/modules.txt
	@set -e; for m in $$(cat $(BUILD)/ptxgen/modules.txt); do \
		ptxas -arch=sm_90a $(BUILD)/ptxgen/$$m.ptx -o $(BUILD)/ptxgen/$$m.cubin; \
		echo "ptxas -arch=sm_90a: $$m.ptx: ok"; done
# docs/ptx-coverage.md from test_ptxgen's results on the sim backend
ptx-coverage: $(BUILD)/tests/test_ptxgen
	@$(BUILD)/tests/test_ptxgen --coverage docs/ptx-coverage.md > $(BUILD)/ptxgen/coverage.log; \
		grep -E '^# (ptxgen|wrote|Totals)' $(BUILD)/ptxgen/coverage.log
# examples/cuda/NAME.cu: CUDA ports of examples/NAME.vgs; test_examples
# runs their PTX with the same flags and wants the same NAME.expected
# (vectorAdd.cu is the runtime-API example, built by nvcc: CUDART_EXAMPLE)
EXAMPLE_CU := $(filter-out examples/cuda/vectorAdd.cu,$(wildcard examples/cuda/*.cu))
EXAMPLE_PTX := $(EXAMPLE_CU:examples/cuda/%.cu=$(BUILD)/ptx/examples/%.ptx)
$(BUILD)/ptx/examples/%.ptx: examples/cuda/%.cu tests/ptx/cuda_min.h
	@mkdir -p $(dir $@)
	$(PTX_CLANG) $(PTX_CFLAGS) -S -o $@ $<
$(BUILD)/tests/test_examples: $(EXAMPLE_PTX)
# test_timeline parses the JSON it checks with jansson (libjansson-dev)
$(BUILD)/tests/test_timeline: LDLIBS += -ljansson
PTX_CORPUS_TESTS := test_ptx test_ptx_kernels test_ptx_numerics test_ptx_errors test_ptx_gaps
$(PTX_CORPUS_TESTS:%=$(BUILD)/tests/unit/%.o): $(BUILD)/ptx/ptx_corpus.h
$(PTX_CORPUS_TESTS:%=$(BUILD)/tests/unit/%.o): CPPFLAGS += -I$(BUILD)/ptx -Itests/fuzz

# make fuzz: the libFuzzer targets (Debian's clang-19 with its runtime,
# libclang-rt-19-dev), one per oracle of tests/fuzz/ (tests/fuzz/
# fuzz_target.c), each FUZZ_SECONDS with libFuzzer's -seed=FUZZ_SEED from
# the seeds test_fuzz writes (and the PTX corpus); scripts/fuzz.sh prints
# executions, coverage and crashes.  Crashers land in build-fuzz/; keep
# them in tests/fuzz/regressions/TARGET/ (make check replays them).
FUZZ_CC ?= clang-19
FUZZ_SECONDS ?= 60
FUZZ_SEED ?= 1
FUZZ_DIR := build-fuzz
FUZZERS := asm obj exec ptx tmap launch
FUZZ_BINS := $(FUZZERS:%=$(FUZZ_DIR)/fuzz_%)
FUZZ_CFLAGS := -std=c11 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
# the library and the core compiled once, instrumented for every target
FUZZ_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(LIB_SRCS) $(CORE_SRCS))
$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<
-include $(FUZZ_OBJS:.o=.d)
oracle_header = $(if $(filter obj,$(1)),asm,$(1))_oracle.h
$(FUZZ_BINS): $(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_target.c $(wildcard tests/fuzz/*.h) \
		$(FUZZ_OBJS) $(wildcard libvgpu/*.h libvgpu/sim/*.h libvgpu/trace/*.h libvgpu/asm/*.h qemu-device/core/*.h uapi/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -Itests/fuzz -DORACLE=$*_oracle \
		-DORACLE_HEADER='"$(call oracle_header,$*)"' $(FUZZ_CFLAGS) -fsanitize=fuzzer \
		-o $@ $< $(FUZZ_OBJS) $(DRM_LIBS) -lm -lpthread
fuzz: fuzz-deps
	@$(MAKE) --no-print-directory -j$(shell nproc) $(FUZZ_BINS) $(PTX_GEN) $(BUILD)/tests/test_fuzz
	@$(MAKE) --no-print-directory fuzz-run

fuzz-deps:
	@scripts/install-deps.sh --fuzz

# make fuzz-device: QEMU built with libFuzzer, ASan and UBSan
# (build/qemu-fuzz, scripts/build-qemu.sh VGPU_QEMU_FLAVOUR=fuzz) and its
# vgpu-fuzz target (qemu-device/fuzz/vgpu-fuzz.c), as long.
fuzz-device: fuzz-deps all $(BUILD)/tests/test_fuzz
	@VGPU_QEMU_FLAVOUR=fuzz scripts/build-qemu.sh
	@rm -rf $(FUZZ_DIR)/seeds && mkdir -p $(FUZZ_DIR)/seeds
	@$(BUILD)/tests/test_fuzz --write-seeds $(FUZZ_DIR)/seeds >/dev/null
	@scripts/fuzz.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_SEED) device

fuzz-run: $(FUZZ_BINS) $(PTX_GEN) $(BUILD)/tests/test_fuzz
	@rm -rf $(FUZZ_DIR)/seeds && mkdir -p $(FUZZ_DIR)/seeds/ptx
	@$(BUILD)/tests/test_fuzz --write-seeds $(FUZZ_DIR)/seeds >/dev/null
	@cp $(PTX_GEN) $(wildcard tests/ptx/nvcc/*.ptx) $(FUZZ_DIR)/seeds/ptx/
	@scripts/fuzz.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_SEED) $(FUZZERS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS)

# test_occupancy: libcuda's occupancy arithmetic (cu_occupancy.c, plain
# arithmetic) linked on its own, fed the H200's answers
$(BUILD)/tests/unit/test_occupancy.o $(BUILD)/libvgpu/cuda/cu_occupancy.o: \
	CPPFLAGS += -Ilibvgpu/cuda
$(BUILD)/tests/test_occupancy: $(BUILD)/tests/unit/test_occupancy.o \
		$(BUILD)/libvgpu/cuda/cu_occupancy.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The driver-API tests: tests/cuda/*.cu compiled by nvcc (CUDA 13 at
# /usr/local/cuda, DESIGN.md) into $(BUILD)/cuda: PTX, a fatbin with
# zstd-compressed PTX and SASS, one with uncompressed PTX, one with SASS
# only and a cubin (the last two must be refused).  test_cuda,
# test_cuda_lib and test_cuda_managed include our cuda.h, test_cuda_abi and
# test_cuda_lib_abi the first two's sources with NVIDIA's; all link
# libcuda.so.1 only.
NVCC ?= $(or $(wildcard /usr/local/cuda/bin/nvcc),nvcc)
# nvcc -c (the CUDA programs: about 4 minutes of 2 CPUs from a clean
# clone) through ccache when it is installed, in the cache QEMU's builds
# use (scripts/build-qemu.sh: outside the clone, paths hashed relative to
# it); -ptx, -fatbin and the links are cheap, and ccache does not cache
# them.  NVCC_CACHE= (empty) compiles without it.
NVCC_CACHE ?= $(if $(shell command -v ccache 2>/dev/null),ccache)
export CCACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vgpu/ccache
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true
CUDA_INCLUDE ?= /usr/local/cuda/include
CUDA_GENCODE := -gencode 'arch=compute_90a,code=[sm_90a,compute_90a]'
CUDA_TEST_DIR := $(BUILD)/cuda
CUDA_TEST_CU := $(wildcard tests/cuda/*.cu)
CUDA_TEST_DATA := $(CUDA_TEST_CU:tests/cuda/%.cu=$(CUDA_TEST_DIR)/%.ptx) \
	$(addprefix $(CUDA_TEST_DIR)/kernels.,fatbin nc.fatbin sass.fatbin cubin)
$(CUDA_TEST_DIR)/%.ptx: tests/cuda/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -arch=sm_90a -ptx -o $@ $<
$(CUDA_TEST_DIR)/%.nc.fatbin: tests/cuda/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin --no-compress $(CUDA_GENCODE) -o $@ $<
$(CUDA_TEST_DIR)/%.sass.fatbin: tests/cuda/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin -gencode arch=compute_90a,code=sm_90a -o $@ $<
$(CUDA_TEST_DIR)/%.fatbin: tests/cuda/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin $(CUDA_GENCODE) -o $@ $<
$(CUDA_TEST_DIR)/%.cubin: tests/cuda/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cubin -arch=sm_90a -o $@ $<
CUDA_TESTS := $(addprefix $(BUILD)/tests/,test_cuda test_cuda_abi test_cuda_ptds test_cuda_lib \
	test_cuda_lib_abi test_cuda_managed test_cuda_link)
$(CUDA_TESTS:$(BUILD)/tests/%=$(BUILD)/tests/unit/%.o): \
	CPPFLAGS += -DCUDA_TEST_DIR='"$(abspath $(CUDA_TEST_DIR))"'
$(BUILD)/tests/unit/test_cuda.o $(BUILD)/tests/unit/test_cuda_lib.o \
	$(BUILD)/tests/unit/test_cuda_managed.o $(BUILD)/tests/unit/test_cuda_link.o \
	$(BUILD)/tests/unit/test_cuda_cache.o: \
	CPPFLAGS += -Ilibvgpu/cuda
$(BUILD)/tests/unit/test_cuda_abi.o $(BUILD)/tests/unit/test_cuda_lib_abi.o \
	$(BUILD)/tests/unit/test_cuda_ptds.o: \
	CPPFLAGS += -isystem $(CUDA_INCLUDE)
$(CUDA_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(CUDA_SO) $(CUDA_TEST_DATA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(CUDA_SO) \
		-Wl,-rpath,$(abspath $(BUILD)) -lm -lpthread

# The runtime-API tests: CUDA programs (tests/cudart/*.cu) built by nvcc
# as users build them (-cudart shared, PTX embedded) with a RUNPATH to
# $(BUILD), so they run against vGPU's libcudart.so.13, not NVIDIA's.
# test_cudart_fault links nopx.cu compiled without PTX (SASS only).
# nvcc compiles each program once, into NVCC_OBJ (build/nvcc-obj, shared by
# every BUILD: the objects do not depend on CC or SAN, nvcc's host compiler
# is g++ in every lane); each BUILD links its own, against its libraries.
# With SAN=1 the program links the sanitizers' runtimes, which the
# instrumented libraries need first (nvcc hands -Xcompiler to its g++).
NVCC_OBJ := build/nvcc-obj
CUDART_NVCC := $(NVCC) -cudart shared -Xlinker -rpath,$(abspath $(BUILD)) \
	$(if $(filter 1,$(SAN)),-Xcompiler -fsanitize=address -Xcompiler -fsanitize=undefined)
CUDART_TESTS := $(BUILD)/tests/test_cudart $(BUILD)/tests/test_cudart_fault \
	$(BUILD)/tests/test_cudart_ptds $(BUILD)/tests/test_cudart_streams
TESTS += $(CUDART_TESTS)
$(NVCC_OBJ)/cudart/%.o: tests/cudart/%.cu tests/cudart/ktap.h
	@mkdir -p $(dir $@)
	$(NVCC_CACHE) $(NVCC) -c $(CUDA_GENCODE) -o $@ $<
$(NVCC_OBJ)/cudart/nopx.o: tests/cudart/nopx.cu
	@mkdir -p $(dir $@)
	$(NVCC_CACHE) $(NVCC) -c -gencode arch=compute_90a,code=sm_90a -o $@ $<
# test_cudart.cu again with --default-stream per-thread (the _ptds/_ptsz calls)
$(NVCC_OBJ)/cudart/test_cudart_ptds.o: tests/cudart/test_cudart.cu tests/cudart/ktap.h
	@mkdir -p $(dir $@)
	$(NVCC_CACHE) $(NVCC) -c --default-stream per-thread $(CUDA_GENCODE) -o $@ $<
$(BUILD)/tests/test_cudart_fault: $(NVCC_OBJ)/cudart/test_cudart_fault.o $(NVCC_OBJ)/cudart/nopx.o
$(CUDART_TESTS): $(BUILD)/tests/%: $(NVCC_OBJ)/cudart/%.o $(CUDART_SO)
	@mkdir -p $(dir $@)
	$(CUDART_NVCC) -o $@ $(filter %.o,$^)
# test_cudart_rdc: tests/cudart/rdc/*.cu built with nvcc -rdc=true
# (separate compilation, nvcc's device link); vGPU's libcudart links the
# units' PTX at first use (docs/cuda.md, "Separate compilation")
RDC_OBJS := $(patsubst tests/cudart/rdc/%.cu,$(NVCC_OBJ)/rdc/%.o,$(wildcard tests/cudart/rdc/*.cu))
$(NVCC_OBJ)/rdc/%.o: tests/cudart/rdc/%.cu tests/cudart/rdc/rdc.h tests/cudart/ktap.h
	@mkdir -p $(dir $@)
	$(NVCC_CACHE) $(NVCC) -c -rdc=true $(CUDA_GENCODE) -o $@ $<
$(BUILD)/tests/test_cudart_rdc: $(RDC_OBJS) $(CUDART_SO)
	@mkdir -p $(dir $@)
	$(CUDART_NVCC) -rdc=true $(CUDA_GENCODE) -o $@ $(filter %.o,$^)
TESTS += $(BUILD)/tests/test_cudart_rdc
# test_cudart_rdc_cdp: a device-side launch (libcudadevrt), refused at the link
$(NVCC_OBJ)/rdc/rdc_cdp.o: tests/cudart/rdc_cdp.cu tests/cudart/cdp_skip.h tests/cudart/ktap.h
	@mkdir -p $(dir $@)
	$(NVCC_CACHE) $(NVCC) -c -rdc=true $(CUDA_GENCODE) -o $@ $<
$(BUILD)/tests/test_cudart_rdc_cdp: $(NVCC_OBJ)/rdc/rdc_cdp.o $(CUDART_SO)
	@mkdir -p $(dir $@)
	$(CUDART_NVCC) -rdc=true $(CUDA_GENCODE) -o $@ $(filter %.o,$^)
TESTS += $(BUILD)/tests/test_cudart_rdc_cdp
# test_cudart_rdc_devrt: the device runtime's cudaMalloc, streams, events
$(NVCC_OBJ)/rdc/rdc_devrt.o: tests/cudart/rdc_devrt.cu tests/cudart/cdp_skip.h tests/cudart/ktap.h
	@mkdir -p $(dir $@)
	$(NVCC_CACHE) $(NVCC) -c -rdc=true $(CUDA_GENCODE) -o $@ $<
$(BUILD)/tests/test_cudart_rdc_devrt: $(NVCC_OBJ)/rdc/rdc_devrt.o $(CUDART_SO)
	@mkdir -p $(dir $@)
	$(CUDART_NVCC) -rdc=true $(CUDA_GENCODE) -o $@ $(filter %.o,$^)
TESTS += $(BUILD)/tests/test_cudart_rdc_devrt

# The corpus of real CUDA code (tests/corpus/, docs/ptx-corpus.md): CUDA
# programs in the style of the CUDA samples, CCCL (cub, libcu++) and
# CUTLASS, built by nvcc like test_cudart, each test one kernel checked
# on the host.  CORPUS_G: the same sources again at -G (device debug
# code, nvcc's other PTX).  tests/corpus/known-failures.txt lists the
# tests that fail today, reported as SKIP with the reason.
CORPUS := reduction scan transpose_matmul coop_groups coop_grid cub_block cub_device async_copy \
	atomics atomics128 tma_multicast assert_tables device_heap tma_im2col tma_reduce tma_ring
CORPUS_G := reduction scan transpose_matmul atomics assert_tables tma_ring
CORPUS_TESTS := $(CORPUS:%=$(BUILD)/tests/test_corpus_%) \
	$(CORPUS_G:%=$(BUILD)/tests/test_corpus_%_g)
CORPUS_KNOWN := -DCORPUS_KNOWN='"$(abspath tests/corpus/known-failures.txt)"'
TESTS += $(CORPUS_TESTS)
$(CORPUS:%=$(NVCC_OBJ)/corpus/%.o): $(NVCC_OBJ)/corpus/%.o: tests/corpus/%.cu tests/corpus/corpus.h
	@mkdir -p $(dir $@)
	$(NVCC_CACHE) $(NVCC) -c $(CUDA_GENCODE) -O3 $(CORPUS_KNOWN) -o $@ $<
$(CORPUS_G:%=$(NVCC_OBJ)/corpus/%_g.o): $(NVCC_OBJ)/corpus/%_g.o: tests/corpus/%.cu tests/corpus/corpus.h
	@mkdir -p $(dir $@)
	$(NVCC_CACHE) $(NVCC) -c $(CUDA_GENCODE) -G $(CORPUS_KNOWN) -o $@ $<
$(CORPUS_TESTS): $(BUILD)/tests/test_corpus_%: $(NVCC_OBJ)/corpus/%.o $(CUDART_SO)
	@mkdir -p $(dir $@)
	$(CUDART_NVCC) -o $@ $<
$(NVCC_OBJ)/corpus/tma_ring.o $(NVCC_OBJ)/corpus/tma_ring_g.o: tests/corpus/tma_ring.h

# The same sources through clang-19's CUDA mode (issue 31 §4), host and
# device, as test_corpus_NAME_clang: clang compiles the device code to PTX
# (ptxas to SASS), CUDA's fatbinary packs both (clang's --cuda-include-ptx:
# vGPU runs the PTX), the host code registers the fatbin as clang writes
# it; linked against CUDA's libcudart.so as nvcc's -cudart shared does,
# with a RUNPATH to $(BUILD), so they run against vGPU's libcudart.so.13.
# tests/corpus/clang-shim/: the empty texture_fetch_functions.h that
# clang-19's CUDA wrapper still includes (CUDA 13 removed it), and a
# fatbinary that turns clang-19's --image=profile= (gone since CUDA 12.9)
# into --image3= as clang 22 writes it (-B puts it first).  CORPUS_CLANG:
# the programs clang-19 compiles (docs/ptx-corpus.md says why the others
# do not).  One object per program in CLANG_OBJ, shared by every BUILD like
# NVCC_OBJ; with SAN=1 g++ links it, as nvcc's g++ does, with gcc's
# sanitizer runtimes (clang's would clash with the libraries').
CORPUS_CLANGXX ?= clang++-19
CUDA_PATH ?= /usr/local/cuda
CLANG_OBJ := build/clang-obj
CORPUS_CLANG := reduction scan transpose_matmul coop_grid cub_block cub_device \
	assert_tables device_heap
CORPUS_CLANG_TESTS := $(CORPUS_CLANG:%=$(BUILD)/tests/test_corpus_%_clang)
CORPUS_CLANG_SHIM := tests/corpus/clang-shim/fatbinary tests/corpus/clang-shim/texture_fetch_functions.h
CORPUS_CLANG_FLAGS := -x cuda --cuda-path=$(CUDA_PATH) --cuda-gpu-arch=sm_90a \
	--cuda-include-ptx=sm_90a -O3 -Wall -Werror -Wno-unknown-cuda-version -Wno-pass-failed -Wno-comment \
	-Wno-deprecated-declarations \
	-B tests/corpus/clang-shim -isystem tests/corpus/clang-shim -isystem $(CUDA_PATH)/include/cccl
CORPUS_CLANG_LD := $(if $(filter 1,$(SAN)),g++ -fsanitize=address -fsanitize=undefined,$(CORPUS_CLANGXX))
TESTS += $(CORPUS_CLANG_TESTS)
$(CORPUS_CLANG:%=$(CLANG_OBJ)/corpus/%.o): $(CLANG_OBJ)/corpus/%.o: tests/corpus/%.cu tests/corpus/corpus.h \
		$(CORPUS_CLANG_SHIM)
	@mkdir -p $(dir $@)
	FATBINARY=$(CUDA_PATH)/bin/fatbinary $(CORPUS_CLANGXX) $(CORPUS_CLANG_FLAGS) $(CORPUS_KNOWN) -c -o $@ $<
$(CORPUS_CLANG_TESTS): $(BUILD)/tests/test_corpus_%_clang: $(CLANG_OBJ)/corpus/%.o $(CUDART_SO)
	@mkdir -p $(dir $@)
	$(CORPUS_CLANG_LD) -o $@ $< -L$(CUDA_PATH)/lib64 -lcudart -Wl,-rpath,$(abspath $(BUILD))

# The corpus under SCHEDULES random schedules (VGPU_RANDOM_SCHEDULE=SEED
# for seeds 1..SCHEDULES, scripts/corpus-schedules.sh); make check runs 10.
SCHEDULES ?= 100
check-schedules: all $(CORPUS_TESTS)
	@scripts/corpus-schedules.sh $(BUILD) $(SCHEDULES)

# The corpus with each launch shared by SIM_THREADS SMs on host threads
# (VGPU_SIM_THREADS, docs/libvgpu.md); make check runs it with 4.
SIM_THREADS ?= 4
check-sim-threads: all $(CORPUS_TESTS)
	@VGPU_SIM_THREADS=$(SIM_THREADS) scripts/run-tests.sh $(BUILD) $(CORPUS_TESTS)

# The samples: CUDA programs as users write them, after NVIDIA's CUDA
# samples (tests/cudart/samples/*.cu: vectorAdd, simpleStreams, ...), one
# program and one KTAP test each, built and linked like test_cudart.
CUDART_SAMPLES := $(patsubst tests/cudart/samples/%.cu,$(BUILD)/tests/sample_%,\
	$(wildcard tests/cudart/samples/*.cu))
TESTS += $(CUDART_SAMPLES)
$(NVCC_OBJ)/samples/%.o: tests/cudart/samples/%.cu tests/cudart/samples/sample.h
	@mkdir -p $(dir $@)
	$(NVCC_CACHE) $(NVCC) -c $(CUDA_GENCODE) -o $@ $<
$(CUDART_SAMPLES): $(BUILD)/tests/sample_%: $(NVCC_OBJ)/samples/%.o $(CUDART_SO)
	@mkdir -p $(dir $@)
	$(CUDART_NVCC) -o $@ $<

# The CUDA programs that run in the guest too, on the drm backend with
# every device bound (run-in-guest.sh, through kselftest's runner: each a
# vgpu:NAME test): the runtime-API tests, the samples and the corpus (the
# drm backend's SMs run on several host threads, the sim backend's on one;
# the preempt lanes preempt them; the debug kernel's lane leaves the corpus
# out: VGPU_GUEST_CORPUS=0, docs/ptx-corpus.md).  The corpus's PTX is
# compiled once on the host into a cache the guest reads
# (scripts/guest-cuda.sh).
# scripts/guest-cuda.sh lays them out in $(BUILD)/guest-cuda/root, a tree
# that run-in-guest.sh and build-guest.sh copy into their initramfs, with
# libcudart.so.13, libcuda.so.1 and libvgpu.so.2 in /usr/lib/vgpu-cuda and
# the host's shared libraries they load (libstdc++, libc, libdrm, libzstd,
# ..., the loader) at the host's paths.  The guest's are made in build/.
# (the -rdc=true programs too: their PTX linked in the guest's libcudart)
GUEST_CUDA := $(CUDART_TESTS) $(CUDART_SAMPLES) $(CORPUS_TESTS) $(CORPUS_CLANG_TESTS) \
	$(BUILD)/tests/test_cudart_rdc $(BUILD)/tests/test_cudart_rdc_cdp \
	$(BUILD)/tests/test_cudart_rdc_devrt
GUEST_CUDA_DIR := $(BUILD)/guest-cuda
$(GUEST_CUDA_DIR)/programs.txt: scripts/guest-cuda.sh $(CUDART_SO) $(CUDA_SO) $(LIB_SO) $(GUEST_CUDA) \
		tests/corpus/known-failures.txt
	scripts/guest-cuda.sh $(GUEST_CUDA_DIR) $(CUDART_SO) $(CUDA_SO) $(LIB_SO) $(GUEST_CUDA) \
		tests/corpus/known-failures.txt
guest-cuda: $(GUEST_CUDA_DIR)/programs.txt

# README.md's commands for a CUDA program, run as written against this
# build (tests/unit/test_readme_cuda.sh); the example built by `make` too,
# with a RUNPATH to $(BUILD) so that it runs from the tree as it is.
$(NVCC_OBJ)/examples/vectorAdd.o: examples/cuda/vectorAdd.cu
	@mkdir -p $(dir $@)
	$(NVCC_CACHE) $(NVCC) -c $(CUDA_GENCODE) -o $@ $<
$(CUDART_EXAMPLE): $(NVCC_OBJ)/examples/vectorAdd.o $(CUDART_SO)
	@mkdir -p $(dir $@)
	$(CUDART_NVCC) -o $@ $<
$(BUILD)/tests/test_readme_cuda: tests/unit/test_readme_cuda.sh README.md $(CUDART_SO) Makefile
	@mkdir -p $(dir $@)
	{ echo '#!/bin/sh'; echo '# generated by the Makefile'; \
	  echo "exec '$(CURDIR)/tests/unit/test_readme_cuda.sh' '$(abspath $(BUILD))' SAN='$(SAN)'"; \
	} > $@.tmp
	chmod 755 $@.tmp && mv $@.tmp $@

# The library as installed: symbols, make install, pkg-config, the C
# example built against the installed copy (tests/unit/test_install.sh).
# A wrapper, so that scripts/run-tests.sh runs it like the other tests.
$(BUILD)/tests/test_install: tests/unit/test_install.sh $(LIB_SO_LINK) $(LIB_A) $(CUDA_SO) $(TOOLS) \
		$(CUDART_SO) $(BUILD)/tests/test_cudart Makefile
	@mkdir -p $(dir $@)
	{ echo '#!/bin/sh'; echo '# generated by the Makefile'; \
	  echo "exec '$(CURDIR)/tests/unit/test_install.sh' '$(abspath $(BUILD))' CC='$(CC)' SAN='$(SAN)' 'SAN_FLAGS=$(SAN_FLAGS)'"; \
	} > $@.tmp
	chmod 755 $@.tmp && mv $@.tmp $@

$(BUILD)/tests/bench/bench_ptx.o: $(BUILD)/ptx/ptx_corpus.h
$(BUILD)/tests/bench/bench_ptx.o: CPPFLAGS += -I$(BUILD)/ptx -DVGPU_BUILD_DIR='"$(BUILD)"'
$(BUILD)/bench/bench_ptx: $(EXAMPLE_PTX)
# bench_cuda: libcuda.so.1 beside libvgpu.so.2 (both shared: one libvgpu)
$(BUILD)/tests/bench/bench_cuda.o: CPPFLAGS += -Ilibvgpu/cuda
$(BUILD)/bench/bench_cuda: $(BUILD)/tests/bench/bench_cuda.o $(CUDA_SO) $(LIB_SO_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(CUDA_SO) $(LIB_SO) \
		-Wl,-rpath,$(abspath $(BUILD)) -lm -lpthread
# bench_cudart: <<<>>> through libcudart.so.13 beside libvgpu.so.2, built
# by nvcc as the CUDA tests are (its object in NVCC_OBJ like theirs)
$(NVCC_OBJ)/bench/bench_cudart.o: tests/bench/bench_cudart.cu tests/bench/bench_launch.h \
		tests/bench/bench_summary.h libvgpu/vgpu.h
	@mkdir -p $(dir $@)
	$(NVCC_CACHE) $(NVCC) -c -O2 $(CUDA_GENCODE) -Iuapi -Ilibvgpu -Itests -I/usr/include/libdrm -o $@ $<
$(BUILD)/bench/bench_cudart: $(NVCC_OBJ)/bench/bench_cudart.o $(CUDART_SO) $(LIB_SO_LINK)
	@mkdir -p $(dir $@)
	$(CUDART_NVCC) -o $@ $< -L$(BUILD) -lvgpu
BENCHES += $(BUILD)/bench/bench_cudart
# bench_tma: the corpus's TMA ring (tests/corpus/tma_ring.h) through
# libcudart.so.13 on the sim backend, bytes a second beside memcpy
$(NVCC_OBJ)/bench/bench_tma.o: tests/bench/bench_tma.cu tests/corpus/tma_ring.h \
		tests/bench/bench_summary.h
	@mkdir -p $(dir $@)
	$(NVCC_CACHE) $(NVCC) -c -O3 $(CUDA_GENCODE) -Itests -Itests/corpus -o $@ $<
$(BUILD)/bench/bench_tma: $(NVCC_OBJ)/bench/bench_tma.o $(CUDART_SO)
	@mkdir -p $(dir $@)
	$(CUDART_NVCC) -o $@ $<
BENCHES += $(BUILD)/bench/bench_tma
$(BUILD)/bench/%: $(BUILD)/tests/bench/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS)

# Device tests and benchmarks: clients of QEMU's qtest protocol.
$(BUILD)/qtest/%: $(BUILD)/tests/qtest/%.o $(QTEST_LIB_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(QTEST_LIB_OBJS) $(LIB_A) $(LDLIBS)

qtests: $(QTESTS)

# Static tools and examples for the guest's initramfs (glibc and libdrm.a);
# only from a build without sanitizers (make run and make shell use build/).
$(TOOL_NAMES:%=$(BUILD)/guest-bin/%): $(BUILD)/guest-bin/%: $(BUILD)/libvgpu/tools/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -static -o $@ $(filter %.o,$^) $(LIB_A) $(DRM_STATIC_LIBS) -lm -lpthread
$(EXAMPLE_NAMES:%=$(BUILD)/guest-bin/%): $(BUILD)/guest-bin/%: $(BUILD)/examples/obj/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -static -o $@ $< $(LIB_A) $(DRM_STATIC_LIBS) -lm -lpthread

guest-bins: $(GUEST_BINS)

# ---- install ----

# install-files copies what `all` built, building nothing (the install
# test uses it, so that a test never compiles).
install: all
	@$(MAKE) --no-print-directory install-files

install-files:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR)/vgpu $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libvgpu.a
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libvgpu.so.$(SOVERSION)
	ln -sf libvgpu.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libvgpu.so
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/vgpu/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		libvgpu/vgpu.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/vgpu.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/vgpu.pc
	install -m 755 $(TOOLS) $(DESTDIR)$(BINDIR)/
	install -d $(DESTDIR)$(CUDA_LIBDIR) $(DESTDIR)$(INCLUDEDIR)/vgpu/cuda
	install -m 755 $(CUDA_SO) $(DESTDIR)$(CUDA_LIBDIR)/libcuda.so.1
	ln -sf libcuda.so.1 $(DESTDIR)$(CUDA_LIBDIR)/libcuda.so
	install -m 755 $(CUDART_SO) $(DESTDIR)$(CUDA_LIBDIR)/libcudart.so.13
	ln -sf libcudart.so.13 $(DESTDIR)$(CUDA_LIBDIR)/libcudart.so
	install -m 644 libvgpu/cuda/cuda.h libvgpu/cuda/cuda_types.h $(DESTDIR)$(INCLUDEDIR)/vgpu/cuda/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		libvgpu/cuda/vgpu-cuda.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/vgpu-cuda.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/vgpu-cuda.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libvgpu.a $(DESTDIR)$(LIBDIR)/libvgpu.so \
		$(DESTDIR)$(LIBDIR)/libvgpu.so.$(SOVERSION) \
		$(DESTDIR)$(PKGCONFIGDIR)/vgpu.pc \
		$(TOOL_NAMES:%=$(DESTDIR)$(BINDIR)/%) \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/vgpu/,$(notdir $(PUBLIC_HEADERS)))
	rm -f $(DESTDIR)$(CUDA_LIBDIR)/libcuda.so.1 $(DESTDIR)$(CUDA_LIBDIR)/libcuda.so \
		$(DESTDIR)$(CUDA_LIBDIR)/libcudart.so.13 $(DESTDIR)$(CUDA_LIBDIR)/libcudart.so \
		$(DESTDIR)$(INCLUDEDIR)/vgpu/cuda/cuda.h $(DESTDIR)$(INCLUDEDIR)/vgpu/cuda/cuda_types.h \
		$(DESTDIR)$(PKGCONFIGDIR)/vgpu-cuda.pc
	-rmdir $(DESTDIR)$(CUDA_LIBDIR) $(DESTDIR)$(INCLUDEDIR)/vgpu/cuda
	-rmdir $(DESTDIR)$(INCLUDEDIR)/vgpu

# ---- QEMU, the module, the guest ----

# QEMU with the vgpu-pci device grafted in (build/qemu-build); the script
# rebuilds only what changed.
qemu:
	@scripts/build-qemu.sh

$(QEMU):
	@scripts/build-qemu.sh

# The guest: Debian's kernel and modules, vgpu.ko when built, a busybox
# initramfs with the smoke program, the static tools and examples, and
# the CUDA programs with their libraries (guest-cuda).
guest: all guest-bins guest-cuda
	@scripts/build-guest.sh

check-device: all $(QTESTS) qemu
	@scripts/run-tests.sh $(BUILD) $(filter $(BUILD)/qtest/test_%,$(QTESTS))

# The same qtests against QEMU built with ASan and UBSan (build/qemu-asan,
# VGPU_QEMU_FLAVOUR=asan): a report stops QEMU, which fails the test that
# drove it.  Leaks are not checked (QEMU 7.2 leaves some at exit).
check-device-asan: all $(QTESTS)
	@VGPU_QEMU_FLAVOUR=asan scripts/build-qemu.sh
	@VGPU_QEMU=build/qemu-asan/qemu-system-x86_64 \
		ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1 \
		scripts/run-tests.sh $(BUILD) $(filter $(BUILD)/qtest/test_%,$(QTESTS))

bench-device: all $(QTESTS) qemu
	@$(BUILD)/qtest/bench_device

# Test suites: host tests (gcc), the same under ASan+UBSan, and a clang
# -Werror build.  scripts/run-tests.sh sums every suite's closing line.
check:
	@scripts/check.sh

check-host: all $(TESTS)
	@scripts/run-tests.sh $(BUILD) $(TESTS)
# The host tests of this BUILD, one per line: scripts/check.sh runs the
# same list in each of its lanes (gcc, clang, ASan + UBSan).
print-tests:
	@printf '%s\n' $(TESTS)

# Every benchmark, then one table of every figure beside its baseline
# (scripts/bench.sh; the whole output in $(BUILD)/bench.log).
bench: all $(BENCHES) $(QTESTS) qemu
	@scripts/bench.sh $(BUILD) $(BENCHES)

# Host packages first, in a make of its own: the rest of the build reads
# pkg-config when it starts.
deps:
	@scripts/install-deps.sh

# The front door (README): every step below installs what it needs.
run: deps
	@$(MAKE) --no-print-directory -j2 BUILD=build all $(TESTS)
	@scripts/build-qemu.sh
	@scripts/build-module.sh
	@$(MAKE) --no-print-directory -C tests/selftests/vgpu
	@$(MAKE) --no-print-directory BUILD=build CC=gcc SAN=0 guest
	@scripts/run-examples.sh build --backend sim
	@scripts/run-guest.sh --run
	@echo "make run: PASS: every example matched its expected output on the host (sim) and on the device in the guest (drm)"

shell: deps
	@$(MAKE) --no-print-directory -j2 BUILD=build all
	@scripts/build-qemu.sh
	@scripts/build-module.sh
	@$(MAKE) --no-print-directory -C tests/selftests/vgpu
	@$(MAKE) --no-print-directory BUILD=build CC=gcc SAN=0 guest
	@scripts/run-guest.sh

clean:
	rm -rf build build-asan build-clang

-include $(shell find $(BUILD)/qemu-device $(BUILD)/libvgpu $(BUILD)/tests \
	$(BUILD)/examples $(BUILD)/pic -name '*.d' -type f 2>/dev/null)

# vgpu.ko against the guest kernel's headers (scripts/build-module.sh) and
# the guest selftests (tests/selftests/vgpu/); not part of `all`.
.PHONY: module selftests check-guest check-guest-debug check-guest-preempt debug-kernel bench-guest fuzz fuzz-guest
module:
	@scripts/build-module.sh
selftests:
	@$(MAKE) -C tests/selftests/vgpu
check-guest: module selftests qemu
	@tests/selftests/vgpu/run-in-guest.sh
# The debug kernel (lockdep, KASAN, kmemleak, ...: kernel/debug.config),
# cached outside the clone, and vgpu.ko built against it.
debug-kernel:
	@scripts/build-debug-kernel.sh
# The same suites on the debug kernel, with the driver's KUnit suites; any
# lockdep, KASAN, KFENCE, DEBUG_OBJECTS, list, refcount or WARN report, or
# a kmemleak report after the final scan, fails it.
check-guest-debug: debug-kernel selftests qemu
	@VGPU_GUEST_DIR=build/guest-debug VGPU_MODULE=build/module-debug/vgpu.ko \
		VGPU_GUEST_MEM=2G VGPU_TIMEOUT_SCALE=$${VGPU_TIMEOUT_SCALE:-4} \
		VGPU_GUEST_CORPUS=$${VGPU_GUEST_CORPUS:-0} \
		tests/selftests/vgpu/run-in-guest.sh
# The kselftests, test_libvgpu* and test_ptx* again with every launch preempted
# (saved and restored) every N warp-instructions of an SM, for two N: the
# results must not change, and the device must have preempted.  With the
# CUDA corpus: CTAs that spin on the one before (decoupled look-backs) need
# the device's forward progress under preemption (docs/ptx-corpus.md); the
# corpus runs there under the device's random schedules too, seed N
# (VGPU_GUEST_SCHEDULE, empty: the default schedule).
PREEMPT_EVERY ?= 997 4099
check-guest-preempt: module selftests qemu
	@rc=0; for n in $(PREEMPT_EVERY); do \
		echo "check-guest-preempt: preempt-every=$$n"; \
		VGPU_DEVICE_PROPS=preempt-every=$$n VGPU_EXPECT_PREEMPTIONS=1 \
		VGPU_GUEST_SCHEDULE=$${VGPU_GUEST_SCHEDULE-$$n} \
			tests/selftests/vgpu/run-in-guest.sh || rc=1; \
	done; exit $$rc
# The guest's ioctl fuzzer (tests/selftests/vgpu/vgpu_fuzz.c) on the debug
# kernel for FUZZ_SECONDS, then an unload, a reload and a job; any kernel
# report fails it.
fuzz-guest: debug-kernel selftests qemu
	@VGPU_GUEST_DIR=build/guest-debug VGPU_MODULE=build/module-debug/vgpu.ko \
		VGPU_GUEST_MEM=2G VGPU_TIMEOUT_SCALE=$${VGPU_TIMEOUT_SCALE:-4} \
		VGPU_FUZZ_SECONDS=$(FUZZ_SECONDS) VGPU_FUZZ_SEED=$(FUZZ_SEED) \
		tests/selftests/vgpu/run-in-guest.sh --fuzz
# null-job latency and jobs/s through vgpu.ko beside a syncobj loop, in the guest
bench-guest: module selftests qemu
	@tests/selftests/vgpu/run-in-guest.sh --bench
