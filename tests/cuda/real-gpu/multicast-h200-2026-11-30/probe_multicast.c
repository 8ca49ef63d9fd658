#include <stdio.h>
#include <stdlib.h>
#include <cuda.h>
#define M (2u << 20)
#define PR(n, s, t, f) (&(CUmulticastObjectProp){ n, s, t, f })
#define GP PR(1, M, 0, 0)
static int st, in, cx, k;
static size_t g;
static unsigned long long h;
static CUdeviceptr dp;
static void pre(void)
{
	if (k >= 8 && !in) {
		in = 1;
		printf("cuInit -> %d\n", cuInit(0));
	}
	if (k >= 16 && !cx) {
		CUcontext c;
		cx = 1;
		printf("ctx -> %d %d %d\n", cuDevicePrimaryCtxRetain(&c, 0), cuCtxSetCurrent(c),
		       cuMemAlloc(&dp, 4 * M));
	}
	g = 77;
	h = 0xdead;
}
#define T(call)                                                                         \
	do {                                                                            \
		if (st <= k) {                                                          \
			pre();                                                          \
			printf("#%d %s", k, #call);                                     \
			fflush(stdout);                                                 \
			CUresult r = call;                                              \
			printf(" -> %d g=%zu h=%llx\n", (int)r, g, h);                  \
			fflush(stdout);                                                 \
		}                                                                       \
		k++;                                                                    \
	} while (0)
#define SIX()                                                   \
	T(cuMulticastGetGranularity(&g, GP, 0));                \
	T(cuMulticastCreate(&h, GP));                           \
	T(cuMulticastAddDevice(0, 0));                          \
	T(cuMulticastBindMem(0, 0, 0, 0, M, 0));                \
	T(cuMulticastBindAddr(0, 0, dp, M, 0));                 \
	T(cuMulticastUnbind(0, 0, 0, M));                       \
	T(cuMulticastGetGranularity(NULL, GP, 0));              \
	T(cuMulticastCreate(NULL, GP))
int main(int argc, char **argv)
{
	void *fn;
	CUdriverProcAddressQueryResult qs;
	int v = -1;

	st = argc > 1 ? atoi(argv[1]) : 0;
	SIX();
	SIX();
	SIX();
	T(cuMulticastGetGranularity(&g, GP, 1));
	T(cuMulticastGetGranularity(&g, NULL, 0));
	T(cuMulticastGetGranularity(&g, GP, 2));
	T(cuMulticastGetGranularity(&g, PR(0, M, 0, 0), 0));
	T(cuMulticastGetGranularity(&g, PR(1, 0, 0, 0), 0));
	T(cuMulticastGetGranularity(&g, PR(1, M, 8, 0), 0));
	T(cuMulticastGetGranularity(&g, PR(1, M, 1, 0), 0));
	T(cuMulticastGetGranularity(&g, PR(1, M, 0x100, 0), 0));
	T(cuMulticastGetGranularity(&g, PR(1, M, 0, 1), 0));
	T(cuMulticastCreate(&h, NULL));
	T(cuMulticastCreate(&h, PR(0, M, 0, 0)));
	T(cuMulticastCreate(&h, PR(1, 0, 0, 0)));
	T(cuMulticastCreate(&h, PR(1, 1, 0, 0)));
	T(cuMulticastCreate(&h, PR(1, M, 8, 0)));
	T(cuMulticastCreate(&h, PR(1, M, 0, 1)));
	T(cuMulticastAddDevice(0x1234, 0));
	T(cuMulticastAddDevice(0, 99));
	T(cuMulticastAddDevice(0, -1));
	T(cuMulticastBindMem(0, 0, 0, 0, M, 1));
	T(cuMulticastBindMem(0x1234, 0, 0x1234, 0, 0, 0));
	T(cuMulticastBindAddr(0, 0, dp, M, 1));
	T(cuMulticastBindAddr(0, 0, 0, 0, 0));
	T(cuMulticastUnbind(0, 99, 0, M));
	T(cuMulticastUnbind(0x1234, 0, 1, 0));
	T(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0));
	printf("attribute %d\n", v);
	T(cuGetProcAddress("cuMulticastCreate", &fn, 13000, 0, &qs));
	printf("fn %d status %d\n", fn != NULL, (int)qs);
	T(cuGetProcAddress("cuMulticastBindAddr", &fn, 12000, 0, &qs));
	printf("fn %d status %d\n", fn != NULL, (int)qs);
	T(cuGetProcAddress("cuMulticastUnbind", &fn, 12010, 0, &qs));
	printf("fn %d status %d\n", fn != NULL, (int)qs);
	printf("END %d\n", k);
	return 0;
}
