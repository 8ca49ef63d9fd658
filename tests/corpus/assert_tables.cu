// SPDX-License-Identifier: MIT
/*
 * Tables of addresses and device assert, the way CUDA code writes them:
 * __device__ tables of pointers into other __device__ arrays (read and
 * written through, and the pointers the host reads back are the symbols'
 * addresses), a __constant__ table of strings, a table of structures
 * holding a name, a function pointer and a pointer to a parameter, a
 * packed structure holding a pointer (nvcc writes its bytes with mask()),
 * an assert that holds, and one that fails in one thread: CUDA's line on
 * stdout at the synchronisation, cudaErrorAssert from it, and the error
 * sticky for the rest of the process as CUDA's.
 */
#include <cassert>

#include "corpus.h"

__device__ int tbl_a[4] = { 1, 2, 3, 4 };
__device__ int tbl_b[4] = { 50, 60, 70, 80 };
__device__ int *ptrs[3] = { tbl_a, tbl_b, &tbl_b[2] };

/* out[i] = *ptrs[i]; then *ptrs[i] += 100 * (i + 1) */
__global__ void through_ptrs(int *out)
{
	int i = threadIdx.x;

	if (i < 3) {
		out[i] = *ptrs[i];
		atomicAdd(ptrs[i], 100 * (i + 1));
	}
}

static int t_pointer_tables(void)
{
	dbuf<int> out(3);
	int a[4], b[4];
	int *p[3], *sa, *sb;

	through_ptrs<<<1, 32>>>(out);
	CHECK_LAUNCH();
	CHECK_SAME((std::vector<int>{ 1, 50, 70 }), out.get());
	CHECK_OK(cudaMemcpyFromSymbol(a, tbl_a, sizeof(a)));
	CHECK_OK(cudaMemcpyFromSymbol(b, tbl_b, sizeof(b)));
	CHECK(a[0] == 101 && a[1] == 2 && a[2] == 3 && a[3] == 4);
	CHECK(b[0] == 250 && b[1] == 60 && b[2] == 370 && b[3] == 80);
	/* the table holds the symbols' device addresses */
	CHECK_OK(cudaMemcpyFromSymbol(p, ptrs, sizeof(p)));
	CHECK_OK(cudaGetSymbolAddress((void **)&sa, tbl_a));
	CHECK_OK(cudaGetSymbolAddress((void **)&sb, tbl_b));
	CHECK(p[0] == sa && p[1] == sb && p[2] == sb + 2);
	return 0;
}

__constant__ const char *const names[] = { "zero", "one", "two", "three", "four",
					   "five", "six", "seven" };

/* each thread copies its name, NUL included, to out[16 * i] */
__global__ void copy_names(char *out)
{
	const char *s = names[threadIdx.x];
	int k = 0;

	do
		out[16 * threadIdx.x + k] = s[k];
	while (s[k++]);
}

static int t_string_table(void)
{
	static const char *const want[] = { "zero", "one", "two", "three", "four",
					    "five", "six", "seven" };
	dbuf<char> out(8 * 16);
	std::vector<char> got;

	cudaMemset(out, 'x', 8 * 16);
	copy_names<<<1, 8>>>(out);
	CHECK_LAUNCH();
	got = out.get();
	for (int i = 0; i < 8; i++) {
		CHECK(!strcmp(&got[16 * i], want[i]));
		CHECK(got[16 * i + strlen(want[i]) + 1] == 'x');
	}
	return 0;
}

/* a table of operations: a name, a function and its parameter */
__device__ int add_k(int x, int k) { return x + k; }
__device__ int mul_k(int x, int k) { return x * k; }
__device__ int xor_k(int x, int k) { return x ^ k; }

struct op {
	const char *name;
	int (*fn)(int, int);
	const int *k;
};

__device__ int params[3] = { 7, 3, 0x55 };
__device__ const op ops[3] = { { "add", add_k, &params[0] },
			       { "mul", mul_k, &params[1] },
			       { "xor", xor_k, &params[2] } };

/* out[i] = ops[i % 3] applied to i; names[j] the first letter of each */
__global__ void apply_ops(const int *in, int n, int *out, char *first)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		const op &o = ops[i % 3];

		out[i] = o.fn(in[i], *o.k);
	}
	if (i < 3)
		first[i] = ops[i].name[0];
}

static int t_op_table(void)
{
	const int n = 1000;
	std::vector<int> h = corpus_ints<int>(n, 77, 1 << 20), want(n);
	dbuf<int> in(h), out(n);
	dbuf<char> first(3);

	apply_ops<<<(n + 127) / 128, 128>>>(in, n, out, first);
	CHECK_LAUNCH();
	for (int i = 0; i < n; i++)
		want[i] = i % 3 == 0 ? h[i] + 7 : i % 3 == 1 ? h[i] * 3 : h[i] ^ 0x55;
	CHECK_SAME(want, out.get());
	CHECK_SAME((std::vector<char>{ 'a', 'm', 'x' }), first.get());
	return 0;
}

/* a pointer at an odd offset: nvcc writes it as eight mask() bytes */
struct __attribute__((packed)) tagged {
	char tag;
	const int *p;
};

__device__ const tagged tags[2] = { { 'a', &tbl_a[3] }, { 'b', &tbl_b[1] } };

__global__ void read_tagged(int *out)
{
	int i = threadIdx.x;

	if (i < 2)
		out[i] = tags[i].tag * 1000 + *tags[i].p;
}

static int t_packed_pointer(void)
{
	dbuf<int> out(2);

	read_tagged<<<1, 32>>>(out);
	CHECK_LAUNCH();
	CHECK_SAME((std::vector<int>{ 'a' * 1000 + 4, 'b' * 1000 + 60 }), out.get());
	return 0;
}

/* the assert's line, for the message (it is 7 lines below) */
enum { CHECK_LINE = __LINE__ + 7 };

__global__ void check_positive(const int *v, int n, int *sum)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		assert(v[i] > 0);
		atomicAdd(sum, v[i]);
	}
}

static int t_assert_holds(void)
{
	const int n = 5000;
	std::vector<int> h = corpus_ints<int>(n, 5, 1000);
	dbuf<int> sum(1);
	long long want = 0;

	for (int &x : h) {
		x += 1;
		want += x;
	}
	dbuf<int> v(h);
	sum.zero();
	check_positive<<<(n + 255) / 256, 256>>>(v, n, sum);
	CHECK_LAUNCH();
	CHECK_SAME((std::vector<int>{ (int)want }), sum.get());
	return 0;
}

/*
 * v[1000] = 0: thread 232 of block 3 fails.  CUDA prints the line at the
 * synchronisation (stdout, caught here in a file), the synchronisation
 * answers cudaErrorAssert, and every later call that needs the device
 * answers it too: the error is sticky, as on NVIDIA's GPUs.
 */
static int t_assert_fails(void)
{
	const int n = 2000;
	std::vector<int> h(n, 1);
	char want[256], got[512] = "";
	FILE *cap = tmpfile();
	int saved, *p = nullptr;
	size_t len;
	cudaError_t e;

	CHECK(cap);
	h[1000] = 0;
	dbuf<int> v(h), sum(1);
	fflush(stdout);
	saved = dup(1);
	CHECK(saved >= 0 && dup2(fileno(cap), 1) == 1);
	check_positive<<<(n + 255) / 256, 256>>>(v, n, sum);
	e = cudaDeviceSynchronize();
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(cap);
	len = fread(got, 1, sizeof(got) - 1, cap);
	got[len] = '\0';
	fclose(cap);
	snprintf(want, sizeof(want),
		 "%s:%d: void check_positive(const int *, int, int *): block: [3,0,0], "
		 "thread: [232,0,0] Assertion `v[i] > 0` failed.\n",
		 __FILE__, (int)CHECK_LINE);
	printf("# the kernel printed: %s", got);
	CHECK(!strcmp(want, got));
	CHECK(e == cudaErrorAssert);
	CHECK(cudaGetLastError() == cudaErrorAssert);
	CHECK(cudaMalloc(&p, 16) == cudaErrorAssert);
	CHECK(cudaDeviceSynchronize() == cudaErrorAssert);
	CHECK(!strcmp(cudaGetErrorName(cudaErrorAssert), "cudaErrorAssert"));
	return CORPUS_PASS_STICKY;
}

CORPUS_MAIN(T(t_pointer_tables), T(t_string_table), T(t_op_table), T(t_packed_pointer),
	    T(t_assert_holds), T(t_assert_fails))
