/* SPDX-License-Identifier: MIT */
/*
 * Assembler: labels, directives, objects (written, read back, validated)
 * and multi-kernel sources; the vgpu-as/vgpu-objdump tools and every
 * example of docs/ptx-mapping.md.
 */

#include "asm_test.h"

/* ---- (d) labels, directives, objects ---- */

static uint32_t imm_at(const struct vgpu_object *o, uint32_t pc)
{
	uint64_t w[2];

	load_word(o->code + pc, w);
	return (uint32_t)vgpu_get(w, VGPU_F_IMM32);
}

TEST(labels_and_branches)
{
	struct vgpu_object o;

	ASSERT_EQ(0,
		  assemble("start:\n"
			   "\tNOP\n"
			   "\tBRA fwd            // 0x10 -> 0x40\n"
			   "\tNOP\n"
			   "back: NOP          // 0x30\n"
			   "fwd:  @P1 BRA back // 0x40 -> 0x30\n"
			   "\tBRA start          // 0x50 -> 0x00\n"
			   "\tBRA 0x20           // 0x60 -> 0x20\n"
			   "a: b:\n"
			   "\tBRA end            // 0x70 -> 0x80\n"
			   "end:\n",
			   &o));
	EXPECT_EQ(0x80u, o.code_size);
	EXPECT_EQ(0x30u, imm_at(&o, 0x10));
	EXPECT_EQ((uint32_t)-0x10, imm_at(&o, 0x40));
	EXPECT_EQ((uint32_t)-0x50, imm_at(&o, 0x50));
	EXPECT_EQ((uint32_t)-0x40, imm_at(&o, 0x60));
	EXPECT_EQ(0x10u, imm_at(&o, 0x70));
	vgpu_object_fini(&o);
}

static const char multi_src[] =
	"// two kernels\n"
	".kernel k1\n"
	".param u32 a        // 0\n"
	".param u64 b        // 8\n"
	".param u32 c        // 16\n"
	".param f32 d        // 20\n"
	".shared s1, 100     // 0\n"
	".shared s2, 8, 64   // 128\n"
	".shared 4           // 144: total 148\n"
	".equ FOUR, 4\n"
	"\tLDP R1, [c] ;\n"
	"\tLDP.64 R2, [b]\n"
	"\tMOV R3, s2\n"
	"\tLDS R4, [R0+s2+FOUR]\n"
	"loop: ISETP.LT.U32 P0, R1, FOUR\n"
	"\t@P0 BRA loop\n"
	"\tEXIT\n"
	".kernel k2\n"
	".param ptr p        // 0\n"
	".param u32 a        // 8: same name as k1's, own scope\n"
	".shared buf, 32\n"
	"\tLDP R1, [a]\n"
	"\tMOV R2, buf+16\n"
	"\tBRA loop          // labels are global\n"
	"\tEXIT\n";

TEST(directives_kernels_params_shared)
{
	struct vgpu_object o;
	const struct vgpu_obj_kernel *k;

	ASSERT_EQ(0, assemble(multi_src, &o));
	ASSERT_TRUE(o.nkernels == 2 && o.nparams == 6);
	EXPECT_EQ(11u * 16, o.code_size);
	k = vgpu_object_find_kernel(&o, "k1");
	ASSERT_TRUE(k == &o.kernels[0]);
	EXPECT_EQ(0u, k->entry);
	EXPECT_EQ(24u, k->param_size);
	EXPECT_EQ(148u, k->smem_static);
	EXPECT_EQ(0u, k->first_param);
	EXPECT_EQ(4u, k->nparams);
	EXPECT_STREQ("a", o.params[0].name);
	EXPECT_EQ(0u, o.params[0].offset);
	EXPECT_EQ(8u, o.params[1].offset);
	EXPECT_EQ(8u, o.params[1].size);
	EXPECT_EQ((uint32_t)VGPU_PARAM_U64, o.params[1].type);
	EXPECT_EQ(16u, o.params[2].offset);
	EXPECT_EQ(20u, o.params[3].offset);
	EXPECT_EQ((uint32_t)VGPU_PARAM_F32, o.params[3].type);
	k = vgpu_object_find_kernel(&o, "k2");
	ASSERT_TRUE(k == &o.kernels[1]);
	EXPECT_EQ(7u * 16, k->entry);
	EXPECT_EQ(16u, k->param_size);
	EXPECT_EQ(32u, k->smem_static);
	EXPECT_EQ(4u, k->first_param);
	EXPECT_EQ(2u, k->nparams);
	EXPECT_EQ((uint32_t)VGPU_PARAM_PTR, o.params[4].type);
	EXPECT_EQ(8u, o.params[5].offset);
	EXPECT_TRUE(vgpu_object_find_kernel(&o, NULL) == &o.kernels[0]);
	EXPECT_EQ(NULL, vgpu_object_find_kernel(&o, "k3"));
	/* symbol values in operands */
	EXPECT_EQ(16u, imm_at(&o, 0x00) >> 8);	 /* LDP [c]: off24 = 16 */
	EXPECT_EQ(8u, imm_at(&o, 0x10) >> 8);	 /* LDP.64 [b] */
	EXPECT_EQ(128u, imm_at(&o, 0x20));	 /* MOV R3, s2 */
	EXPECT_EQ(132u, imm_at(&o, 0x30) >> 8);	 /* [R0+s2+FOUR] */
	EXPECT_EQ(4u, imm_at(&o, 0x40));		 /* ISETP ..., FOUR */
	EXPECT_EQ((uint32_t)-0x10, imm_at(&o, 0x50));
	EXPECT_EQ(8u, imm_at(&o, 0x70) >> 8);	 /* k2: LDP [a] */
	EXPECT_EQ(16u, imm_at(&o, 0x80));		 /* MOV R2, buf+16 */
	EXPECT_EQ((uint32_t)(0x40 - 0x90), imm_at(&o, 0x90));
	vgpu_object_fini(&o);
}

TEST(implicit_main_kernel)
{
	struct vgpu_object o;

	ASSERT_EQ(0, assemble("NOP\n.param ptr out\n.shared 12\nLDP.64 R2, [out]\nEXIT\n", &o));
	ASSERT_EQ(1u, o.nkernels);
	EXPECT_STREQ("main", o.kernels[0].name);
	EXPECT_EQ(0u, o.kernels[0].entry);
	EXPECT_EQ(8u, o.kernels[0].param_size);
	EXPECT_EQ(12u, o.kernels[0].smem_static);
	EXPECT_EQ(1u, o.nparams);
	vgpu_object_fini(&o);
	ASSERT_EQ(0, assemble(".word 0x1, 0xffffffffffffffff\n", &o));
	EXPECT_EQ(16u, o.code_size);
	EXPECT_EQ(1, o.code[0]);
	EXPECT_EQ(0xff, o.code[8]);
	EXPECT_EQ(0xff, o.code[15]);
	vgpu_object_fini(&o);
}


TEST(object_write_read_round_trip)
{
	struct vgpu_object o, r;
	uint8_t *buf, *buf2;
	size_t len, len2;

	ASSERT_EQ(0, assemble(multi_src, &o));
	ASSERT_EQ(0, vgpu_object_write(&o, &buf, &len));
	EXPECT_EQ(32u + 2 * 56 + 6 * 48 + 11 * 16, len);
	EXPECT_EQ('V', buf[0]);
	EXPECT_EQ('U', buf[3]);
	ASSERT_EQ(0, vgpu_object_read(buf, len, &r, errbuf, sizeof(errbuf)));
	check_same_object(_metadata, &o, &r);
	ASSERT_EQ(0, vgpu_object_write(&r, &buf2, &len2));
	EXPECT_EQ(len, len2);
	EXPECT_EQ(0, memcmp(buf, buf2, len));
	free(buf);
	free(buf2);
	vgpu_object_fini(&r);
	vgpu_object_fini(&o);
	EXPECT_TRUE(o.code == NULL && o.nkernels == 0);
}

static void expect_reject(struct __test_metadata *_metadata, const uint8_t *good,
			  size_t len, size_t off, uint32_t v, const char *msg);

/* Module data: .global/.bytes/.param data, object version 2, disassembly. */
TEST(module_data)
{
	static const char src[] = ".global tab, 20, 4\n.global cnt, 8\n"
				  ".bytes tab+1, 7, 255, -1\n.bytes cnt, 9\n"
				  ".kernel k\n.param ptr out\n.param data d\n"
				  "LDP.64 R0, [d] ;\nLDG R2, [R0+tab] ;\nEXIT ;\n";
	static const uint8_t want[40] = { [1] = 7, [2] = 255, [3] = 255, [32] = 9 };
	struct vgpu_object o, r;
	uint8_t *buf;
	size_t len;
	char *text;

	ASSERT_EQ(0, assemble(src, &o)) TH_LOG("%s", errbuf);
	ASSERT_EQ(40u, o.data_size);
	EXPECT_EQ(0, memcmp(want, o.data, 40));
	EXPECT_EQ((uint32_t)VGPU_PARAM_DATA, o.params[1].type);
	ASSERT_EQ(0, vgpu_object_write(&o, &buf, &len));
	EXPECT_EQ(2u, buf[4]); /* version 2: it has data */
	ASSERT_EQ(0, vgpu_object_read(buf, len, &r, errbuf, sizeof(errbuf))) TH_LOG("%s", errbuf);
	ASSERT_EQ(40u, r.data_size);
	EXPECT_EQ(0, memcmp(want, r.data, 40));
	/* the disassembly assembles to the same object */
	text = obj_disasm_text(&r);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, ".global __data, 40, 16\n.bytes __data+0, 0, 7, 255, 255,"));
	EXPECT_EQ(0, obj_reassembles_to(text, buf, len, errbuf, sizeof(errbuf)))
		TH_LOG("%s\n%s", errbuf, text);
	/* a corrupt data section is rejected */
	expect_reject(_metadata, buf, len, 36, 1u << 30, "data of 1073741824 bytes");
	free(text);
	free(buf);
	vgpu_object_fini(&o);
	vgpu_object_fini(&r);

	expect_errors(_metadata, ".bytes 0, 1\nNOP",
		      "t.s:1:8: error: data offset 0 outside the 0 bytes of .global data\n");
	expect_errors(_metadata, ".global x, 0\nNOP",
		      "t.s:1:12: error: data size 0 out of range (1..16777216)\n");
	expect_errors(_metadata, ".global x, 4, 3\nNOP",
		      "t.s:1:15: error: data alignment 3 is not a power of two up to 4096\n");
	expect_errors(_metadata, ".global x, 4\n.bytes x, 300\nNOP",
		      "t.s:2:11: error: byte 300 out of range (-128..255)\n");
	expect_errors(_metadata, ".param data d\nNOP",
		      "t.s:1:1: error: kernel 'main' has a '.param data' but the program has no .global data\n");
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Corrupt a copy of @good at byte @off with @v and expect a rejection. */
static void expect_reject(struct __test_metadata *_metadata,
			  const uint8_t *good, size_t len, size_t off,
			  uint32_t v, const char *msg)
{
	uint8_t *b = malloc(len);
	struct vgpu_object r;

	ASSERT_NE(NULL, b);
	memcpy(b, good, len);
	put32(b + off, v);
	EXPECT_EQ(-EINVAL, vgpu_object_read(b, len, &r, errbuf, sizeof(errbuf)));
	EXPECT_CONTAINS(errbuf, msg);
	EXPECT_EQ(NULL, r.code);
	free(b);
}

TEST(object_read_rejects_corruption)
{
	struct vgpu_object o, r;
	uint8_t *buf;
	size_t len, k0 = 32, p0 = 32 + 2 * 56;

	ASSERT_EQ(0, assemble(multi_src, &o));
	ASSERT_EQ(0, vgpu_object_write(&o, &buf, &len));
	expect_reject(_metadata, buf, len, 0, 0x12345678, "bad magic 0x12345678");
	expect_reject(_metadata, buf, len, 4, 4, "unsupported version 4");
	/* version 2 promises a data section the file does not have */
	expect_reject(_metadata, buf, len, 4, 2, "invalid object: data of 0 bytes");
	expect_reject(_metadata, buf, len, 8, 0, "no kernels");
	expect_reject(_metadata, buf, len, 8, 0x10000000, "kernel table outside the file");
	expect_reject(_metadata, buf, len, 12, 1000, "parameter table outside the file");
	expect_reject(_metadata, buf, len, 16, (uint32_t)len, "kernel table outside the file");
	expect_reject(_metadata, buf, len, 16, 4, "kernel table outside the file");
	expect_reject(_metadata, buf, len, 24, 0x1f8, "not a multiple of 16");
	expect_reject(_metadata, buf, len, 28, 0x18, "not a multiple of 16");
	expect_reject(_metadata, buf, len, 28, 0x1000, "code outside the file");
	expect_reject(_metadata, buf, len, k0 + 32, 0x1000, "entry 0x1000 outside the code");
	expect_reject(_metadata, buf, len, k0 + 32, 0x8, "entry 0x8 outside the code");
	expect_reject(_metadata, buf, len, k0 + 40, 8192, "parameter size 8192 too large");
	expect_reject(_metadata, buf, len, k0 + 40, 20,
		      "kernel 'k1': 20 parameter bytes for parameters ending at 24");
	/* more than the parameters take: the assembler cannot write it */
	expect_reject(_metadata, buf, len, k0 + 40, 32,
		      "kernel 'k1': 32 parameter bytes for parameters ending at 24");
	/* names the assembler would not take: a register, a space */
	expect_reject(_metadata, buf, len, k0, 0x003152, "kernel 0: bad name");
	expect_reject(_metadata, buf, len, p0, 0x00207870, "parameter 0: bad name");
	/* a parameter off the layout (in order, naturally aligned) */
	expect_reject(_metadata, buf, len, p0 + 32, 8, "(the layout puts it at 0)");
	expect_reject(_metadata, buf, len, k0 + 48, 7, "parameters out of range");
	expect_reject(_metadata, buf, len, k0 + 44, 3, "parameters out of range");
	expect_reject(_metadata, buf, len, k0 + 52, 1,
		      "kernel 'k1': 1 bytes of local memory (a multiple of 16, at most 65536)");
	expect_reject(_metadata, buf, len, k0 + 52, 16,
		      "kernel 'k1': 16 bytes of local memory and 0 local parameters (want one)");
	expect_reject(_metadata, buf, len, k0, 0, "kernel 0: bad name");
	expect_reject(_metadata, buf, len, k0 + 56, 0x00316b, "duplicate kernel 'k1'");
	/* the second kernel's parameters where the first's are */
	expect_reject(_metadata, buf, len, k0 + 56 + 44, 0, "(the layout puts them at ");
	expect_reject(_metadata, buf, len, p0 + 36, 8, "type 1 with size 8");
	expect_reject(_metadata, buf, len, p0 + 40, 4, "type 4 with size 4");
	expect_reject(_metadata, buf, len, p0 + 40, 9, "type 9 with size 4");
	expect_reject(_metadata, buf, len, p0 + 32, 2, "misaligned offset 2");
	{
		uint8_t *b = malloc(len);

		ASSERT_NE(NULL, b);
		memcpy(b, buf, len);
		memset(b + k0, 'x', 32); /* no NUL */
		EXPECT_EQ(-EINVAL, vgpu_object_read(b, len, &r, errbuf, sizeof(errbuf)));
		EXPECT_CONTAINS(errbuf, "kernel 0: bad name");
		EXPECT_EQ(-EINVAL, vgpu_object_read(b, 31, &r, errbuf, sizeof(errbuf)));
		EXPECT_CONTAINS(errbuf, "shorter than the header");
		EXPECT_EQ(-EINVAL, vgpu_object_read(buf, len - 16, &r, errbuf, sizeof(errbuf)));
		EXPECT_CONTAINS(errbuf, "code outside the file");
		free(b);
	}
	free(buf);
	vgpu_object_fini(&o);
}


TEST(disasm_object_round_trip)
{
	struct vgpu_object o;
	char *text;

	object_round_trip(_metadata, multi_src);
	ASSERT_EQ(0, assemble(multi_src, &o));
	text = obj_disasm_text(&o);
	ASSERT_NE(NULL, text);
	EXPECT_CONTAINS(text, ".kernel k1\n.param u32 a\n.param u64 b\n.param u32 c\n"
			      ".param f32 d\n.shared 148\n\tLDP R1, [0x10] ;\n");
	EXPECT_CONTAINS(text, "L_0x40:\n\tISETP.LT.U32 P0, R1, 0x4 ;\n\t@P0 BRA L_0x40 ;\n");
	EXPECT_CONTAINS(text, "\n\n.kernel k2\n.param ptr p\n.param u32 a\n.shared 32\n");
	EXPECT_CONTAINS(text, "\tBRA L_0x40 ;\n\tEXIT ;\n");
	free(text);
	vgpu_object_fini(&o);
	object_round_trip(_metadata, "NOP\n.kernel late\nBRA 0x1230\nBRA -0x20\n.word 0, 0\n"
			  "BAR.SYNC 0x0\nend: BRA end\n.word 0x20140, 0\n");
}

/* Every table row in one object, branches to labels included. */

TEST(load_file_text_and_object)
{
	char dir[] = "/tmp/vgpu-test-asm-XXXXXX", path[PATH_MAX];
	struct vgpu_object o, a, b;
	uint8_t *buf;
	size_t len;
	FILE *f;

	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, assemble(multi_src, &o));
	snprintf(path, sizeof(path), "%s/k.s", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs(multi_src, f);
	fclose(f);
	ASSERT_EQ(0, vgpu_object_load_file(path, &a, errbuf, sizeof(errbuf)));
	check_same_object(_metadata, &o, &a);
	ASSERT_EQ(0, vgpu_object_write(&o, &buf, &len));
	snprintf(path, sizeof(path), "%s/k.vgo", dir);
	f = fopen(path, "wb");
	ASSERT_NE(NULL, f);
	fwrite(buf, 1, len, f);
	fclose(f);
	ASSERT_EQ(0, vgpu_object_load_file(path, &b, errbuf, sizeof(errbuf)));
	check_same_object(_metadata, &o, &b);
	vgpu_object_fini(&b);
	/* a truncated object file is rejected, naming the path */
	f = fopen(path, "wb");
	ASSERT_NE(NULL, f);
	fwrite(buf, 1, 40, f);
	fclose(f);
	EXPECT_EQ(-EINVAL, vgpu_object_load_file(path, &b, errbuf, sizeof(errbuf)));
	EXPECT_CONTAINS(errbuf, "k.vgo: invalid object: kernel table outside the file");
	remove(path);
	/* assembly errors name the path */
	snprintf(path, sizeof(path), "%s/bad.s", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("NOP\nFOO\n", f);
	fclose(f);
	EXPECT_EQ(-EINVAL, vgpu_object_load_file(path, &b, errbuf, sizeof(errbuf)));
	EXPECT_CONTAINS(errbuf, "bad.s:2:1: error: unknown mnemonic 'FOO'");
	remove(path);
	snprintf(path, sizeof(path), "%s/missing.s", dir);
	EXPECT_EQ(-ENOENT, vgpu_object_load_file(path, &b, errbuf, sizeof(errbuf)));
	EXPECT_CONTAINS(errbuf, "missing.s: No such file or directory");
	snprintf(path, sizeof(path), "%s/k.s", dir);
	remove(path);
	rmdir(dir);
	free(buf);
	vgpu_object_fini(&a);
	vgpu_object_fini(&o);
}

/* ---- (e) the tools ---- */

static char bindir[PATH_MAX + 16];

static bool find_bindir(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return false;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = 0;
	snprintf(bindir, sizeof(bindir), "%s/../bin", exe);
	return true;
}

__attribute__((format(printf, 1, 2))) static int run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc(n > 0 ? (size_t)n : 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static bool same_files(const char *a, const char *b)
{
	size_t la, lb;
	uint8_t *x = slurp(a, &la), *y = slurp(b, &lb);
	bool same = x && y && la == lb && !memcmp(x, y, la);

	free(x);
	free(y);
	return same;
}

/* Every ```vgpu block of docs/ptx-mapping.md assembles. */
TEST(ptx_mapping_examples_assemble)
{
	bool ok;
	char path[PATH_MAX + 64];
	size_t len;
	uint8_t *doc;
	char *p;
	int blocks = 0;

	ASSERT_TRUE(find_bindir());
	snprintf(path, sizeof(path), "%s/../../docs/ptx-mapping.md", bindir);
	doc = slurp(path, &len);
	ASSERT_NE(NULL, doc);
	doc = realloc(doc, len + 1);
	ASSERT_NE(NULL, doc);
	doc[len] = 0;
	for (p = (char *)doc; (p = strstr(p, "```vgpu\n")); blocks++) {
		char *src = p + 8, *end = strstr(src, "```");
		struct vgpu_object o;
		int line = 1;

		ASSERT_NE(NULL, end);
		*end = 0;
		for (char *q = (char *)doc; q < src; q++)
			line += *q == '\n';
		ok = !assemble(src, &o);
		EXPECT_TRUE(ok)
			TH_LOG("docs/ptx-mapping.md block at line %d:\n%s", line,
			       errbuf);
		if (ok)
			vgpu_object_fini(&o);
		p = end + 3;
	}
	EXPECT_GE(blocks, 20);
	free(doc);
}

TEST(tools_round_trip)
{
	char dir[] = "/tmp/vgpu-test-tools-XXXXXX", p[PATH_MAX];
	char x[PATH_MAX], y[PATH_MAX];
	const char *b = bindir;
	const char *d = dir;
	FILE *f;

	ASSERT_TRUE(find_bindir());
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/a.s", dir);
	f = fopen(p, "w");
	ASSERT_NE(NULL, f);
	fputs(multi_src, f);
	fputs(".kernel seed\nBAR.SYNC 0x0 ;\nBAR.RED.OR R0, !P1;\nB2R R0, 0x0;\n"
	      "BAR.RESULT R0, PT;\nR2B.WARP 0x4, R1;\n.word 0, 7\nEXIT\n", f);
	fclose(f);
	EXPECT_EQ(0, run("%s/vgpu-as %s/a.s", b, d)); /* default output a.vgo */
	EXPECT_EQ(0, run("%s/vgpu-objdump %s/a.vgo > %s/b.s", b, d, d));
	EXPECT_EQ(0, run("%s/vgpu-as -o %s/b.vgo %s/b.s", b, d, d));
	snprintf(x, sizeof(x), "%s/a.vgo", dir);
	snprintf(y, sizeof(y), "%s/b.vgo", dir);
	EXPECT_TRUE(same_files(x, y));
	/* --raw output assembles too; text input is accepted */
	EXPECT_EQ(0, run("%s/vgpu-objdump --raw %s/a.s > %s/c.s", b, d, d));
	EXPECT_EQ(0, run("%s/vgpu-as --output %s/c.vgo %s/c.s", b, d, d));
	snprintf(y, sizeof(y), "%s/c.vgo", dir);
	EXPECT_TRUE(same_files(x, y));
	/* stdin and stdout */
	EXPECT_EQ(0, run("%s/vgpu-as - < %s/a.s > %s/d.vgo", b, d, d));
	snprintf(y, sizeof(y), "%s/d.vgo", dir);
	EXPECT_TRUE(same_files(x, y));
	EXPECT_EQ(0, run("%s/vgpu-objdump - < %s/d.vgo > %s/e.s", b, d, d));
	snprintf(x, sizeof(x), "%s/b.s", dir);
	snprintf(y, sizeof(y), "%s/e.s", dir);
	EXPECT_TRUE(same_files(x, y));
	EXPECT_EQ(0, run("grep -q '// 0x0000: 0x' %s/c.s", d));
	EXPECT_EQ(0,
		  run("cd %s && rm -f a.s a.vgo b.s b.vgo c.s c.vgo d.vgo e.s bad.s && cd / && rmdir %s",
		      d, d));
}

TEST(tools_exit_codes)
{
	char dir[] = "/tmp/vgpu-test-tools-XXXXXX";
	const char *b = bindir, *d = dir;

	ASSERT_TRUE(find_bindir());
	ASSERT_NE(NULL, mkdtemp(dir));
	EXPECT_EQ(0, run("%s/vgpu-as --help > /dev/null", b));
	EXPECT_EQ(0, run("%s/vgpu-objdump --help | grep -q usage", b));
	EXPECT_EQ(2, run("%s/vgpu-as > /dev/null 2>&1", b));
	EXPECT_EQ(2, run("%s/vgpu-as --bogus x.s > /dev/null 2>&1", b));
	EXPECT_EQ(2, run("%s/vgpu-objdump > /dev/null 2>&1", b));
	EXPECT_EQ(2, run("%s/vgpu-objdump a b > /dev/null 2>&1", b));
	EXPECT_EQ(0, run("printf 'NOP\\nFOO\\n' > %s/bad.s", d));
	EXPECT_EQ(1, run("%s/vgpu-as -o %s/bad.vgo %s/bad.s 2> %s/err.txt", b, d, d, d));
	EXPECT_EQ(0, run("grep -q 'bad.s:2:1: error: unknown mnemonic' %s/err.txt", d));
	EXPECT_EQ(0, run("test ! -e %s/bad.vgo", d));
	EXPECT_EQ(1, run("%s/vgpu-objdump %s/bad.s > /dev/null 2>&1", b, d));
	EXPECT_EQ(1, run("%s/vgpu-objdump %s/missing.vgo > /dev/null 2>&1", b, d));
	EXPECT_EQ(1, run("%s/vgpu-as %s/missing.s > /dev/null 2>&1", b, d));
	EXPECT_EQ(0, run("printf 'VGPU' > %s/trunc.vgo", d));
	EXPECT_EQ(0, run("%s/vgpu-objdump %s/trunc.vgo 2>&1 | grep -q 'invalid object'", b, d));
	EXPECT_EQ(0, run("rm -f %s/bad.s %s/err.txt %s/trunc.vgo && rmdir %s", d, d, d, d));
}


TEST_HARNESS_MAIN
