// SPDX-License-Identifier: MIT
/*
 * libvgpu programs: an assembled object (libvgpu/asm/, object.c) whose
 * code lives in a read-only buffer object of the device, and its kernels.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_priv.h"
#include "vgpu_priv.h"
#include "ptx/ptx.h"
#include "ptxcache.h"

static void log_msg(char *log, size_t loglen, const char *msg)
{
	if (log && loglen)
		snprintf(log, loglen, "%s\n", msg);
}

/*
 * The program's module data: the object's, with the addresses its
 * relocations name (pointer tables, PTX's generic(var) initialisers)
 * once the buffer's address is known.
 */
static int data_create(struct vgpu_device *dev, const struct vgpu_object *obj,
		       struct vgpu_bo **out)
{
	uint8_t *data = obj->data;
	int ret;

	if (obj->nrelocs) {
		data = malloc(obj->data_size);
		if (!data)
			return -ENOMEM;
		memcpy(data, obj->data, obj->data_size);
	}
	ret = vgpu_bo_new(dev, obj->data_size, VGPU_BO_NO_EXEC, out);
	if (!ret) {
		vgpu_object_relocate(obj, vgpu_bo_gpu_address(*out), data);
		ret = vgpu_bo_write(*out, 0, data, obj->data_size);
	}
	if (data != obj->data)
		free(data);
	return ret;
}

/* Takes @obj (finished on failure). */
static int program_create(struct vgpu_device *dev, struct vgpu_object *obj,
			  struct vgpu_program **out, char *log, size_t loglen)
{
	struct vgpu_program *prog;
	int ret;

	if (!obj->nkernels || !obj->code_size) {
		log_msg(log, loglen, "the program has no kernel or no code");
		vgpu_object_fini(obj);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < obj->nkernels; i++) {
		const struct vgpu_obj_kernel *k = &obj->kernels[i];

		if (k->first_param > obj->nparams ||
		    k->nparams > obj->nparams - k->first_param ||
		    k->param_size > VGPU_MAX_PARAM_BYTES) {
			log_msg(log, loglen, "corrupt parameter table");
			vgpu_object_fini(obj);
			return -EINVAL;
		}
	}
	prog = calloc(1, sizeof(*prog));
	if (prog)
		prog->kernels = calloc(obj->nkernels, sizeof(*prog->kernels));
	if (!prog || !prog->kernels) {
		free(prog);
		vgpu_object_fini(obj);
		return -ENOMEM;
	}
	prog->obj = *obj;
	for (uint32_t i = 0; i < obj->nkernels; i++) {
		prog->kernels[i].prog = prog;
		prog->kernels[i].obj = &prog->obj.kernels[i];
	}
	ret = vgpu_bo_new(dev, obj->code_size, VGPU_BO_READ_ONLY, &prog->code);
	if (!ret) {
		ret = vgpu_bo_write(prog->code, 0, obj->code, obj->code_size);
		if (!ret)
			ret = vgpu_bo_unmap(prog->code);
	}
	if (!ret && obj->data_size) /* module data, initialised from the object */
		ret = data_create(dev, &prog->obj, &prog->data);
	if (ret) {
		vgpu_bo_free(prog->data);
		vgpu_bo_free(prog->code);
		vgpu_object_fini(&prog->obj);
		free(prog->kernels);
		free(prog);
		return ret;
	}
	for (uint32_t i = 0; i < obj->nrelocs; i++)
		prog->uses_heap |= obj->relocs[i].kind == VGPU_RELOC_HEAP64;
	for (uint32_t i = 0; i < obj->nkernels; i++)
		vgpu_kernel_facts(&prog->kernels[i]);
	vgpu_dev_get(dev);
	prog->dev = dev;
	*out = prog;
	return 0;
}

int vgpu_program_assemble(struct vgpu_device *dev, const char *src, size_t len,
			  const char *filename, struct vgpu_program **out,
			  char *log, size_t loglen)
{
	struct vgpu_object obj = { 0 };
	int ret;

	if (!out || (!src && len))
		return -EINVAL;
	ret = vgpu_dev_check(dev);
	if (ret)
		return ret;
	ret = vgpu_assemble(src ? src : "", len, filename ? filename : "<source>",
			    &obj, log, loglen);
	if (ret)
		return ret;
	return program_create(dev, &obj, out, log, loglen);
}

int vgpu_ptx_compile(const char *src, size_t len, const char *filename, char **asm_out,
		     void **obj_out, size_t *obj_len, char *log, size_t loglen)
{
	struct ptx_compiled c;
	uint8_t *obj = NULL;
	int ret;

	if ((!src && len) || (!obj_out != !obj_len))
		return -EINVAL;
	if (asm_out)
		*asm_out = NULL;
	if (obj_out) {
		*obj_out = NULL;
		*obj_len = 0;
	}
	/* compiled, or from the compile cache (ptxcache.c) */
	ret = ptx_compile_cached(src ? src : "", len, filename ? filename : "<ptx>", &c, log,
				 loglen);
	if (ret)
		return ret;
	if (obj_out) {
		ret = vgpu_object_write(&c.obj, &obj, obj_len);
		if (ret) {
			ptx_compiled_fini(&c);
			return ret;
		}
		*obj_out = obj;
	}
	if (asm_out) {
		*asm_out = c.text;
		c.text = NULL;
	}
	ptx_compiled_fini(&c);
	return 0;
}

int vgpu_ptx_link(int n, const char *const *srcs, const size_t *lens, const char *const *names,
		  unsigned int flags, char **out, size_t *out_len, char *log, size_t loglen)
{
	if (!out || (n > 0 && (!srcs || !lens)) ||
	    (flags & ~(VGPU_PTX_LINK_CHECK | VGPU_PTX_LINK_PARTIAL)))
		return -EINVAL;
	for (int i = 0; i < n; i++)
		if (!srcs[i] && lens[i])
			return -EINVAL;
	return ptx_link(n, srcs, lens, names, flags, out, out_len, log, loglen);
}

int vgpu_ptx_link_map_log(const char *linked, size_t len, char *log, size_t loglen)
{
	if (!linked && len)
		return -EINVAL;
	return ptx_link_map_log(linked ? linked : "", len, log, loglen);
}

int vgpu_ptx_to_asm(const char *src, size_t len, const char *filename,
		    char **asm_out, char *log, size_t loglen)
{
	if (!asm_out)
		return -EINVAL;
	return vgpu_ptx_compile(src, len, filename, asm_out, NULL, NULL, log, loglen);
}

int vgpu_program_from_ptx(struct vgpu_device *dev, const char *src, size_t len,
			  const char *filename, struct vgpu_program **out,
			  char *log, size_t loglen)
{
	struct ptx_compiled c;
	int ret;

	if (!out || (!src && len))
		return -EINVAL;
	ret = vgpu_dev_check(dev);
	if (ret)
		return ret;
	/* compiled, or from the compile cache (ptxcache.c) */
	ret = ptx_compile_cached(src ? src : "", len, filename ? filename : "<ptx>", &c, log,
				 loglen);
	if (ret)
		return ret;
	ret = program_create(dev, &c.obj, out, log, loglen); /* takes the object */
	memset(&c.obj, 0, sizeof(c.obj));
	for (int i = 0; !ret && i < c.nattrs; i++) /* the entries' directives, names */
		for (uint32_t k = 0; k < (*out)->obj.nkernels; k++)
			if (!strncmp((*out)->obj.kernels[k].name, c.attrs[i].name,
				     sizeof((*out)->obj.kernels[k].name))) {
				(*out)->kernels[k].attrs = c.attrs[i].attrs;
				vgpu_kernel_attrs_set(&(*out)->kernels[k]);
				(*out)->kernels[k].ptx_name = c.attrs[i].full;
				c.attrs[i].full = NULL;
			}
	ptx_compiled_fini(&c);
	return ret;
}

static bool is_ptx_path(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && !strcmp(path + n - 4, ".ptx");
}

/* A .ptx file goes through the PTX front end. */
static int load_ptx_file(struct vgpu_device *dev, const char *path,
			 struct vgpu_program **out, char *log, size_t loglen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size;
	int ret;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	buf = malloc((size_t)size + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
		free(buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	ret = vgpu_program_from_ptx(dev, buf, (size_t)size, path, out, log, loglen);
	free(buf);
	return ret;
}

int vgpu_program_load_file(struct vgpu_device *dev, const char *path,
			   struct vgpu_program **out, char *log, size_t loglen)
{
	struct vgpu_object obj = { 0 };
	int ret;

	if (!out || !path)
		return -EINVAL;
	ret = vgpu_dev_check(dev);
	if (ret)
		return ret;
	if (log && loglen)
		log[0] = '\0';
	if (is_ptx_path(path))
		return load_ptx_file(dev, path, out, log, loglen);
	ret = vgpu_object_load_file(path, &obj, log, loglen);
	if (ret)
		return ret;
	return program_create(dev, &obj, out, log, loglen);
}

int vgpu_program_load_binary(struct vgpu_device *dev, const void *data,
			     size_t len, struct vgpu_program **out, char *log,
			     size_t loglen)
{
	struct vgpu_object obj = { 0 };
	int ret;

	if (!out || !data)
		return -EINVAL;
	ret = vgpu_dev_check(dev);
	if (ret)
		return ret;
	ret = vgpu_object_read(data, len, &obj, log, loglen);
	if (ret)
		return ret;
	return program_create(dev, &obj, out, log, loglen);
}

void vgpu_program_free(struct vgpu_program *prog)
{
	struct vgpu_device *dev;

	if (!prog)
		return;
	dev = prog->dev;
	vgpu_bo_free(prog->data);
	vgpu_bo_free(prog->code);
	for (uint32_t i = 0; prog->kernels && i < prog->obj.nkernels; i++)
		free(prog->kernels[i].ptx_name);
	vgpu_object_fini(&prog->obj);
	free(prog->kernels);
	free(prog);
	vgpu_dev_put(dev);
}

int vgpu_program_binary(const struct vgpu_program *prog, void **data,
			size_t *len)
{
	uint8_t *buf;
	int ret;

	if (!data || !len)
		return -EINVAL;
	ret = vgpu_object_write(&prog->obj, &buf, len);
	if (!ret)
		*data = buf;
	return ret;
}

int vgpu_program_disassemble(const struct vgpu_program *prog, FILE *out)
{
	if (!out)
		return -EINVAL;
	return vgpu_disasm_object(&prog->obj, out);
}

unsigned int vgpu_program_kernel_count(const struct vgpu_program *prog)
{
	return prog->obj.nkernels;
}

int vgpu_program_data(const struct vgpu_program *prog, struct vgpu_bo **bo)
{
	if (!prog || !bo)
		return -EINVAL;
	if (!prog->data)
		return -ENOENT;
	*bo = prog->data;
	return 0;
}

int vgpu_program_kernel(const struct vgpu_program *prog, unsigned int index,
			const struct vgpu_kernel **out)
{
	if (!out)
		return -EINVAL;
	if (index >= prog->obj.nkernels)
		return -ENOENT;
	*out = &prog->kernels[index];
	return 0;
}

int vgpu_program_find_kernel(const struct vgpu_program *prog, const char *name,
			     const struct vgpu_kernel **out)
{
	if (!out || !name)
		return -EINVAL;
	for (uint32_t i = 0; i < prog->obj.nkernels; i++) {
		if (!strncmp(prog->obj.kernels[i].name, name, VGPU_OBJ_NAME_MAX) ||
		    (prog->kernels[i].ptx_name && !strcmp(prog->kernels[i].ptx_name, name))) {
			*out = &prog->kernels[i];
			return 0;
		}
	}
	return -ENOENT;
}

void vgpu_kernel_info(const struct vgpu_kernel *kernel,
		      struct vgpu_kernel_info *info)
{
	const struct vgpu_obj_kernel *k = kernel->obj;

	info->name = kernel->ptx_name ? kernel->ptx_name : k->name;
	info->entry = k->entry;
	info->smem_static = k->smem_static;
	info->param_size = k->param_size;
	info->nparams = k->nparams;
}

int vgpu_kernel_arg(const struct vgpu_kernel *kernel, unsigned int index,
		    struct vgpu_arg_info *info)
{
	const struct vgpu_obj_kernel *k = kernel->obj;
	const struct vgpu_obj_param *p;

	if (!info)
		return -EINVAL;
	if (index >= k->nparams)
		return -ENOENT;
	p = &kernel->prog->obj.params[k->first_param + index];
	info->name = p->name;
	info->type = p->type;
	info->offset = p->offset;
	info->size = p->size;
	return 0;
}

int vgpu_kernel_arg_index(const struct vgpu_kernel *kernel, const char *name)
{
	const struct vgpu_obj_kernel *k = kernel->obj;

	if (!name)
		return -EINVAL;
	for (uint32_t i = 0; i < k->nparams; i++)
		if (!strncmp(kernel->prog->obj.params[k->first_param + i].name,
			     name, VGPU_OBJ_NAME_MAX))
			return (int)i;
	return -ENOENT;
}
