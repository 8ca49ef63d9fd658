/* SPDX-License-Identifier: MIT */
/*
 * The TMA engine through the device: an im2col load of a tensor that spans
 * eight pages of the device's MMU (the core reaches guest memory with the
 * MMU's block reads; some pixels' channels cross a page boundary),
 * every byte of the column checked against tests/unit/im2col_ref.h; and a
 * map that breaks a rule stops the queue with TENSOR_MAP at its address.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "vgpu_dev.h"
#include "qtest_expect.h"
#include "test_device.h"
#include "unit/im2col_ref.h"

/*
 * Thread 0 loads the 4-D column (coordinates R20.., offsets R30..), the
 * warp copies it to out a byte a lane.  Parameters: out, the map, bytes.
 */
static const char k_im2col[] =
	".kernel im2col\n"
	".param ptr out\n.param ptr map\n.param u32 bytes\n"
	".shared bar, 16\n.shared col, 16384\n"
	"  LDP.64 R2, [out] ;\n  LDP.64 R10, [map] ;\n  LDP.32 R12, [bytes] ;\n"
	"  S2R R0, SR_TID.X ;\n  ISETP.EQ.U32 P6, R0, 0x0 ;\n"
	"  MOV R4, 0x0 ;\n  MOV R6, 0x10 ;\n"
	"  MOV R20, 0x0 ;\n  MOV R21, 0xffffffff ;\n  MOV R22, 0xffffffff ;\n  MOV R23, 0x0 ;\n"
	"  MOV R30, 0x2 ;\n  MOV R31, 0x1 ;\n"
	"  @P6 MBAR.INIT [R4], 0x1 ;\n  BAR.SYNC 0x0 ;\n"
	"  @P6 CP.ASYNC.BULK.TENSOR.IM2COL.4D [R6], [R10], R20, [R4], R30 ;\n"
	"  @P6 MBAR.ARRIVE.EXPECT_TX _, [R4], R12 ;\n"
	"w:\n  MBAR.TRY_WAIT.PARITY P1, [R4], RZ ;\n  @!P1 BRA w ;\n"
	"  MOV R13, R0 ;\n"
	"c:\n  ISETP.GE.U32 P2, R13, R12 ;\n  @P2 EXIT ;\n"
	"  LDS.U8 R15, [R13+0x10] ;\n  IADD R16, R2, R13 ;\n  MOV R17, R3 ;\n"
	"  STG.U8 [R16], R15 ;\n  IADD R13, R13, 0x20 ;\n  BRA c ;\n";

/*
 * NHWC int32, 60 channels (240 bytes a pixel): 30240 bytes, 8 pages; the
 * 128 bytes of pixels (0, 1, 8) and (0, 3, 7) cross the first two page
 * boundaries
 */
static const struct icase big = {
	.rank = 4, .es = 4, .channels = 32, .pixels = 100,
	.dims = { 60, 9, 7, 2 }, .estr = { 1, 1, 2, 1 },
	.lower = { -1, -1 }, .upper = { -1, -1 },
	.coord = { 0, -1, -1, 0 }, .off = { 2, 1 },
};

/* Run k_im2col on @t with its map patched by @patch; the completion. */
static struct vgpu_completion run(struct __test_metadata *_metadata, struct dev *d,
				  const struct icase *t, void (*patch)(struct vgpu_tensor_map *),
				  uint8_t *out, uint64_t *map_va)
{
	uint64_t st[4], total = strides_of(t, st), t_pa, t_va, m_pa, o_pa, o_va, p_pa, p_va;
	uint32_t bytes = column_bytes(t);
	struct vgpu_tensor_map map;
	struct vgpu_completion c;
	struct vgpu_cmd_launch cmd;
	struct dev_kernel kern;
	uint8_t params[24] = { 0 }, *data = malloc(total);

	memset(&c, 0, sizeof(c));
	if (!data || dev_kernel_load(d, 0, k_im2col, &kern)) {
		EXPECT_TRUE(false);
		free(data);
		return c;
	}
	for (uint64_t i = 0; i < total; i++)
		data[i] = data_byte(i);
	t_va = dev_buf(d, 0, total, RO, &t_pa);
	qts_memwrite(d->qts, t_pa, data, total);
	*map_va = dev_buf(d, 0, sizeof(map), RO, &m_pa);
	icase_map(t, t_va, &map);
	if (patch)
		patch(&map);
	qts_memwrite(d->qts, m_pa, &map, sizeof(map));
	o_va = dev_buf(d, 0, bytes, RW, &o_pa);
	memcpy(params, &o_va, 8);
	memcpy(params + 8, map_va, 8);
	memcpy(params + 16, &bytes, 4);
	p_va = dev_buf(d, 0, sizeof(params), RO, &p_pa);
	qts_memwrite(d->qts, p_pa, params, sizeof(params));
	cmd = dev_launch_cmd(&kern, 1, 32, p_va, sizeof(params));
	EXPECT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &cmd), &c));
	if (out)
		qts_memread(d->qts, o_pa, out, bytes);
	dev_kernel_free(&kern);
	free(data);
	return c;
}

TEST_F(device, im2col_load_across_pages)
{
	uint32_t bytes = column_bytes(&big);
	uint8_t *out = malloc(bytes);
	struct vgpu_completion c;
	uint64_t map_va;

	ASSERT_NE(NULL, out);
	dev_queue_init(&self->d, 0, 8);
	c = run(_metadata, &self->d, &big, NULL, out, &map_va);
	EXPECT_EQ(VGPU_ERR_NONE, c.status)
		TH_LOG("exception %u: %s", c.exc.code, c.exc.msg);
	for (uint32_t i = 0; i < bytes; i++) {
		uint32_t b = i % big.es, ch = i / big.es % big.channels;
		int64_t src = ref_source(&big, i / big.es / big.channels, ch, b);
		uint8_t want = src < 0 ? 0 : data_byte((uint64_t)src);

		if (out[i] != want) {
			EXPECT_EQ(want, out[i]) TH_LOG("byte %u", i);
			break;
		}
	}
	free(out);
}

static void odd_channels(struct vgpu_tensor_map *m)
{
	m->channels = 3; /* 12 bytes */
}

TEST_F(device, im2col_bad_map_stops_the_queue)
{
	struct vgpu_completion c;
	uint64_t map_va;

	dev_queue_init(&self->d, 0, 8);
	c = run(_metadata, &self->d, &big, odd_channels, NULL, &map_va);
	EXPECT_EQ(VGPU_ERR_EXCEPTION, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_TENSOR_MAP, c.exc.code);
	EXPECT_EQ(map_va, c.exc.addr);
	EXPECT_CONTAINS(c.exc.msg, "channels per pixel are not a multiple of 16 bytes");
	EXPECT_STOPPED(&self->d, 0, VGPU_ERR_EXCEPTION, 0);
}

TEST_HARNESS_MAIN
