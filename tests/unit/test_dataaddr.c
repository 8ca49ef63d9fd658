// SPDX-License-Identifier: MIT
/*
 * Addresses in module data (docs/assembly.md): the assembler's
 * .dataaddr, the relocations it puts in the object (format version 3),
 * the object reader's checks of them, the disassembly that assembles to
 * the same object, and the loader that writes the data's device address
 * into the program's copy (program.c, the sim backend here; the drm
 * backend shares the loader).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "obj_util.h"
#include "vgpu.h"
#include "vgpu_asm.h"

static char errbuf[8192];

static int assemble(const char *src, struct vgpu_object *o)
{
	return vgpu_assemble(src, strlen(src), "t.s", o, errbuf, sizeof(errbuf));
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* a: 16 bytes at 0; p: 32 at 16 (a pointer to a[4], one to p itself, a
 * byte of a's address at 33, a pointer before a) */
static const char src[] = ".global a, 16, 8\n.global p, 32, 8\n"
			  ".bytes a, 1, 2, 3, 4, 5\n"
			  ".dataaddr p, a+4\n.dataaddr p+8, p\n.dataaddr p+17, a+2, 1\n"
			  ".dataaddr p+24, a-8\n"
			  ".kernel k\n.param data d\nEXIT ;\n";

TEST(dataaddr_in_the_object)
{
	struct vgpu_object o, r;
	uint8_t *buf;
	size_t len;
	char *text;

	ASSERT_EQ(0, assemble(src, &o)) TH_LOG("%s", errbuf);
	ASSERT_EQ(4u, o.nrelocs);
	EXPECT_EQ(16u, o.relocs[0].offset);
	EXPECT_EQ((uint32_t)VGPU_RELOC_ADDR64, o.relocs[0].kind);
	EXPECT_EQ(4u, o.relocs[0].target);
	EXPECT_EQ(24u, o.relocs[1].offset);
	EXPECT_EQ(16u, o.relocs[1].target);
	EXPECT_EQ(33u, o.relocs[2].offset);
	EXPECT_EQ((uint32_t)VGPU_RELOC_ADDR_BYTE0 + 1, o.relocs[2].kind);
	EXPECT_EQ(2u, o.relocs[2].target);
	EXPECT_EQ((uint64_t)-8, o.relocs[3].target);
	for (int i = 16; i < 48; i++) /* the object keeps zeros there */
		EXPECT_EQ(0, o.data[i]);
	ASSERT_EQ(0, vgpu_object_write(&o, &buf, &len));
	EXPECT_EQ(3u, buf[4]); /* version 3: it has relocations */
	ASSERT_EQ(0, vgpu_object_read(buf, len, &r, errbuf, sizeof(errbuf))) TH_LOG("%s", errbuf);
	ASSERT_EQ(4u, r.nrelocs);
	EXPECT_EQ(0, memcmp(o.relocs, r.relocs, 4 * sizeof(*o.relocs)));
	/* the disassembly assembles to the same bytes */
	text = obj_disasm_text(&r);
	ASSERT_NE(NULL, text);
	EXPECT_CONTAINS(text, ".dataaddr __data+16, __data+4\n.dataaddr __data+24, __data+16\n"
			      ".dataaddr __data+33, __data+2, 1\n.dataaddr __data+40, __data-8\n");
	EXPECT_EQ(0, obj_reassembles_to(text, buf, len, errbuf, sizeof(errbuf)))
		TH_LOG("%s\n%s", errbuf, text);
	free(text);
	free(buf);
	vgpu_object_fini(&o);
	vgpu_object_fini(&r);
}

/* Corrupt a copy of @good at byte @off with @v: rejected with @msg. */
static void expect_reject(struct __test_metadata *_metadata, const uint8_t *good, size_t len,
			  size_t off, uint32_t v, const char *msg)
{
	uint8_t *b = malloc(len);
	struct vgpu_object r;

	ASSERT_NE(NULL, b);
	memcpy(b, good, len);
	for (int i = 0; i < 4; i++)
		b[off + (size_t)i] = (uint8_t)(v >> (8 * i));
	EXPECT_EQ(-EINVAL, vgpu_object_read(b, len, &r, errbuf, sizeof(errbuf)));
	EXPECT_CONTAINS(errbuf, msg);
	EXPECT_EQ(NULL, r.code);
	free(b);
}

TEST(dataaddr_object_checks)
{
	struct vgpu_object o;
	uint8_t *buf;
	size_t len, roff;

	ASSERT_EQ(0, assemble(src, &o)) TH_LOG("%s", errbuf);
	ASSERT_EQ(0, vgpu_object_write(&o, &buf, &len));
	roff = buf[40] | (size_t)buf[41] << 8;
	ASSERT_EQ(len, roff + 4 * 16);
	expect_reject(_metadata, buf, len, 44, 0, "0 relocations at");
	expect_reject(_metadata, buf, len, 44, 5, "5 relocations at");
	expect_reject(_metadata, buf, len, 40, (uint32_t)len, "outside the file");
	expect_reject(_metadata, buf, len, roff + 4, 3, "relocation 0: kind 3 at data offset 16");
	expect_reject(_metadata, buf, len, roff + 4, 16, "relocation 0: kind 16");
	expect_reject(_metadata, buf, len, roff, 41, "relocation 0: kind 1 at data offset 41 "
						   "(48 bytes of data)");
	expect_reject(_metadata, buf, len, roff + 32, 48, "relocation 2: kind 9 at data offset 48");
	/* one byte may be the data's last */
	{
		struct vgpu_object r;

		buf[roff + 32] = 47;
		EXPECT_EQ(0, vgpu_object_read(buf, len, &r, errbuf, sizeof(errbuf)));
		vgpu_object_fini(&r);
	}
	free(buf);
	vgpu_object_fini(&o);
}

TEST(dataaddr_errors)
{
	static const struct {
		const char *src, *err;
	} cases[] = {
		{ ".global a, 8\n.dataaddr a+1, a\nNOP",
		  "t.s:2:11: error: data offset 1 outside the 8 bytes of .global data\n" },
		{ ".global a, 8\n.dataaddr a+8, a, 0\nNOP",
		  "t.s:2:11: error: data offset 8 outside the 8 bytes of .global data\n" },
		{ ".global a, 8\n.dataaddr a, a, 8\nNOP",
		  "t.s:2:17: error: byte 8 of an address out of range (0..7)\n" },
		{ ".global a, 8\n.dataaddr a\nNOP", "t.s:2:12: error: expected ',' before end of line\n" },
		{ ".global a, 8\n.dataaddr a, b\nNOP", "t.s:2:14: error: unknown symbol 'b'\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vgpu_object o;

		EXPECT_EQ(-EINVAL, assemble(cases[i].src, &o));
		EXPECT_STREQ(cases[i].err, errbuf);
	}
}

/*
 * .heapaddr: a VGPU_RELOC_HEAP64 word (device malloc's heap address), in
 * the object, its disassembly and the loaded data, where it stays 0 until
 * a launch (test_ptx_heap.c runs it).
 */
TEST(heapaddr)
{
	static const char hsrc[] = ".global a, 16, 8\n.heapaddr a+8\n.kernel k\n.param data d\nEXIT ;\n";
	struct vgpu_device *dev = NULL;
	struct vgpu_program *prog = NULL;
	struct vgpu_object o, r;
	struct vgpu_bo *data;
	uint8_t *buf, d[16];
	size_t len;
	char *text;

	ASSERT_EQ(0, assemble(hsrc, &o)) TH_LOG("%s", errbuf);
	ASSERT_EQ(1u, o.nrelocs);
	EXPECT_EQ(8u, o.relocs[0].offset);
	EXPECT_EQ((uint32_t)VGPU_RELOC_HEAP64, o.relocs[0].kind);
	EXPECT_EQ(0u, o.relocs[0].target);
	ASSERT_EQ(0, vgpu_object_write(&o, &buf, &len));
	ASSERT_EQ(0, vgpu_object_read(buf, len, &r, errbuf, sizeof(errbuf))) TH_LOG("%s", errbuf);
	EXPECT_EQ(0, memcmp(o.relocs, r.relocs, sizeof(*o.relocs)));
	text = obj_disasm_text(&r);
	ASSERT_NE(NULL, text);
	EXPECT_CONTAINS(text, ".heapaddr __data+8\n");
	EXPECT_EQ(0, obj_reassembles_to(text, buf, len, errbuf, sizeof(errbuf)))
		TH_LOG("%s\n%s", errbuf, text);
	ASSERT_EQ(0, vgpu_device_open(NULL, &dev));
	ASSERT_EQ(0, vgpu_program_load_binary(dev, buf, len, &prog, errbuf, sizeof(errbuf)))
		TH_LOG("%s", errbuf);
	ASSERT_EQ(0, vgpu_program_data(prog, &data));
	ASSERT_EQ(0, vgpu_bo_read(data, 0, d, sizeof(d)));
	EXPECT_EQ(0u, le64(d + 8));
	vgpu_object_fini(&o);
	EXPECT_EQ(-EINVAL, assemble(".global a, 8\n.heapaddr a+1\nNOP", &o));
	EXPECT_STREQ("t.s:2:11: error: data offset 1 outside the 8 bytes of .global data\n", errbuf);
	vgpu_program_free(prog);
	vgpu_device_close(dev);
	free(text);
	free(buf);
	vgpu_object_fini(&r);
}

/* The loader writes the data's device address into the program's data. */
TEST(dataaddr_loaded)
{
	struct vgpu_device *dev = NULL;
	struct vgpu_program *prog = NULL;
	struct vgpu_object o, back;
	struct vgpu_bo *data;
	uint8_t *buf, d[48];
	void *bin;
	size_t len, blen;
	uint64_t va;

	ASSERT_EQ(0, assemble(src, &o)) TH_LOG("%s", errbuf);
	ASSERT_EQ(0, vgpu_object_write(&o, &buf, &len));
	ASSERT_EQ(0, vgpu_device_open(NULL, &dev));
	ASSERT_EQ(0, vgpu_program_load_binary(dev, buf, len, &prog, errbuf, sizeof(errbuf)))
		TH_LOG("%s", errbuf);
	ASSERT_EQ(0, vgpu_program_data(prog, &data));
	va = vgpu_bo_gpu_address(data);
	ASSERT_NE(0u, va);
	ASSERT_EQ(0, vgpu_bo_read(data, 0, d, sizeof(d)));
	EXPECT_EQ(0, memcmp(d, "\1\2\3\4\5", 5));
	EXPECT_EQ(va + 4, le64(d + 16));
	EXPECT_EQ(va + 16, le64(d + 24));
	EXPECT_EQ(0, d[32]);
	EXPECT_EQ((uint8_t)((va + 2) >> 8), d[33]);
	EXPECT_EQ(0, d[34]);
	EXPECT_EQ(va - 8, le64(d + 40));
	/* the program's object still holds the relocations, not addresses */
	ASSERT_EQ(0, vgpu_program_binary(prog, &bin, &blen));
	EXPECT_EQ(len, blen);
	EXPECT_EQ(0, memcmp(buf, bin, len));
	ASSERT_EQ(0, vgpu_object_read(bin, blen, &back, errbuf, sizeof(errbuf)));
	EXPECT_EQ(4u, back.nrelocs);
	EXPECT_EQ(0u, le64(back.data + 16));
	vgpu_object_fini(&back);
	free(bin);
	vgpu_program_free(prog);
	vgpu_device_close(dev);
	free(buf);
	vgpu_object_fini(&o);
}

TEST_HARNESS_MAIN
