// SPDX-License-Identifier: MIT
/*
 * test_cudart_rdc (rdc.h): kernels of this unit call devlib.cu's device
 * functions and use its variables; every expected value is computed on
 * the host from rdc.h's definitions.
 */
#include <cstring>

#include "../ktap.h"
#include "rdc.h"

static __device__ int unit_value = 99;

__global__ void main_kernel(int *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		out[i] = rdc_scale(i) + rdc_table[3];
		atomicAdd(&rdc_counter, 2u);
	}
}

/* function pointers into devlib.cu: one in its variable, one returned */
__global__ void fnptr_kernel(int *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = rdc_negate_ptr(5 * i) + rdc_get_op(i & 1)(i);
}

__global__ void main_static(int *out)
{
	*out = unit_value;
}

static const int N = 96;
static const int init_table[4] = { 10, 20, 30, 40 };

static int run(void (*k)(int *, int), int *host)
{
	int *d;

	CHECK_OK(cudaMalloc(&d, N * sizeof(int)));
	k<<<3, 32>>>(d, N);
	CHECK_OK(cudaGetLastError());
	CHECK_OK(cudaMemcpy(host, d, N * sizeof(int), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaFree(d));
	return 0;
}

/* kernels of both units calling devlib.cu's rdc_scale, reading its table */
static int test_cross_unit_calls(void)
{
	int out[N];

	if (run(lib_kernel, out))
		return 1;
	for (int i = 0; i < N; i++)
		CHECK(out[i] == host_scale(i, init_table));
	if (run(main_kernel, out))
		return 1;
	for (int i = 0; i < N; i++)
		CHECK(out[i] == host_scale(i, init_table) + init_table[3]);
	return 0;
}

/* rdc_counter: one variable, both units' kernels add to it */
static int test_shared_counter(void)
{
	unsigned int zero = 0, got = 0;
	int out[N];

	CHECK_OK(cudaMemcpyToSymbol(rdc_counter, &zero, sizeof(zero)));
	if (run(lib_kernel, out) || run(main_kernel, out) || run(lib_kernel, out))
		return 1;
	CHECK_OK(cudaMemcpyFromSymbol(&got, rdc_counter, sizeof(got)));
	CHECK(got == (unsigned int)(N + 2 * N + N));
	return 0;
}

/* the table written from the host: both units see the new values */
static int test_symbol_write(void)
{
	const int table[4] = { -1, 5, 1000, 7 };
	int out[N], back[4] = { 0 }, *addr = nullptr;
	size_t size = 0;

	CHECK_OK(cudaMemcpyToSymbol(rdc_table, table, sizeof(table)));
	CHECK_OK(cudaGetSymbolAddress((void **)&addr, rdc_table));
	CHECK_OK(cudaGetSymbolSize(&size, rdc_table));
	CHECK(size == sizeof(table));
	CHECK_OK(cudaMemcpy(back, addr, sizeof(back), cudaMemcpyDeviceToHost));
	CHECK(!memcmp(back, table, sizeof(table)));
	if (run(main_kernel, out))
		return 1;
	for (int i = 0; i < N; i++)
		CHECK(out[i] == host_scale(i, table) + table[3]);
	if (run(lib_kernel, out))
		return 1;
	for (int i = 0; i < N; i++)
		CHECK(out[i] == host_scale(i, table));
	CHECK_OK(cudaMemcpyToSymbol(rdc_table, init_table, sizeof(init_table)));
	return 0;
}

static int test_function_pointers(void)
{
	int out[N];

	if (run(fnptr_kernel, out))
		return 1;
	for (int i = 0; i < N; i++)
		CHECK(out[i] == -5 * i + ((i & 1) ? host_scale(i, init_table) : -i));
	return 0;
}

/* a static __device__ variable of the same name in each unit */
static int test_unit_statics(void)
{
	int *d, a = 0, b = 0;

	CHECK_OK(cudaMalloc(&d, 2 * sizeof(int)));
	main_static<<<1, 1>>>(d);
	lib_static<<<1, 1>>>(d + 1);
	CHECK_OK(cudaMemcpy(&a, d, sizeof(int), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaMemcpy(&b, d + 1, sizeof(int), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaFree(d));
	CHECK(a == 99);
	CHECK(b == 7);
	return 0;
}

int main(void)
{
	static const ktap_test tests[] = {
		{ "cross_unit_calls", test_cross_unit_calls },
		{ "shared_counter", test_shared_counter },
		{ "symbol_write", test_symbol_write },
		{ "function_pointers", test_function_pointers },
		{ "unit_statics", test_unit_statics },
	};

	return ktap_run(tests, sizeof(tests) / sizeof(tests[0]));
}
