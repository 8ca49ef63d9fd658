// SPDX-License-Identifier: MIT
/*
 * libvgpu argument sets: a kernel's parameter buffer, filled by index or
 * pushed in order (vgpu_args_*), and the buffer objects a launch must
 * list because the arguments name them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "asm_priv.h"
#include "vgpu_priv.h"

void vgpu_kernel_facts(struct vgpu_kernel *kernel)
{
	const struct vgpu_program *prog = kernel->prog;
	const struct vgpu_obj_kernel *k = kernel->obj;

	kernel->param_types = 0;
	for (uint32_t i = 0; i < k->nparams; i++) {
		uint32_t type = prog->obj.params[k->first_param + i].type;

		if (type < 32)
			kernel->param_types |= 1u << type;
	}
	kernel->extra_bos = !!k->local_bytes + !!prog->data +
			    vgpu_kernel_has_param(kernel, VGPU_PARAM_PRINTF) + prog->uses_heap +
			    VGPU_CDP_BOS * prog->uses_cdp;
	kernel->needs_args = k->nparams > !!k->local_bytes +
					  vgpu_kernel_has_param(kernel, VGPU_PARAM_DATA) +
					  vgpu_kernel_has_param(kernel, VGPU_PARAM_PRINTF) +
					  vgpu_kernel_has_param(kernel, VGPU_PARAM_PARAMS) +
					  vgpu_kernel_has_param(kernel, VGPU_PARAM_ENVREGS);
	kernel->inline_params = !kernel->extra_bos &&
				!vgpu_kernel_has_param(kernel, VGPU_PARAM_PARAMS) &&
				!vgpu_kernel_has_param(kernel, VGPU_PARAM_ENVREGS);
}


int vgpu_args_new(const struct vgpu_kernel *kernel, struct vgpu_args **out)
{
	struct vgpu_args *args;

	if (!kernel || !out)
		return -EINVAL;
	args = calloc(1, sizeof(*args));
	if (!args)
		return -ENOMEM;
	args->kernel = kernel;
	args->size = kernel->obj->nparams ? kernel->obj->param_size : 0;
	*out = args;
	return 0;
}

void vgpu_args_free(struct vgpu_args *args)
{
	if (!args)
		return;
	free(args->handles);
	free(args);
}

int vgpu_args_use_bo(struct vgpu_args *args, struct vgpu_bo *bo)
{
	if (!bo)
		return -EINVAL;
	if (bo->dev != args->kernel->prog->dev)
		return -EXDEV;
	for (unsigned int i = 0; i < args->nhandles; i++)
		if (args->handles[i] == bo->handle)
			return 0;
	if (args->nhandles + 1 + 2 + vgpu_kernel_extra_bos(args->kernel) >
	    VGPU_SUBMIT_MAX_BOS)
		return -E2BIG; /* the launch adds the code and parameter pages
				  (and local memory, module data) */
	if (args->nhandles == args->cap) {
		unsigned int cap = args->cap ? 2 * args->cap : 8;
		uint32_t *n = realloc(args->handles, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		args->handles = n;
		args->cap = cap;
	}
	args->handles[args->nhandles++] = bo->handle;
	return 0;
}

void vgpu_put_le(uint8_t *p, uint64_t v, uint32_t size)
{
	for (uint32_t i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * Write @value as declared parameter @index if its type is one of
 * @types (a bit per enum vgpu_arg_type).
 */
static int set_arg(struct vgpu_args *args, unsigned int index, uint32_t types,
		   uint64_t value)
{
	const struct vgpu_kernel *kernel = args->kernel;
	const struct vgpu_obj_param *a;
	uint8_t *p;

	/* vgpu_kernel_arg()'s parameter, without the copy */
	if (index >= kernel->obj->nparams)
		return -ENOENT;
	a = &kernel->prog->obj.params[kernel->obj->first_param + index];
	if (!(types & (1u << a->type)))
		return -EINVAL;
	if ((a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8) ||
	    a->offset + a->size > args->size)
		return -EINVAL; /* a corrupt object */
	p = args->data + a->offset;
	switch (a->size) { /* constant sizes: one store each */
	case 1:
		vgpu_put_le(p, value, 1);
		break;
	case 2:
		vgpu_put_le(p, value, 2);
		break;
	case 4:
		vgpu_put_le(p, value, 4);
		break;
	default:
		vgpu_put_le(p, value, 8);
		break;
	}
	return 0;
}

#define PTR_TYPES ((1u << VGPU_ARG_PTR) | (1u << VGPU_ARG_U64))
#define INT_TYPES ((1u << VGPU_ARG_U32) | (1u << VGPU_ARG_S32) | (1u << VGPU_ARG_U8) | \
		   (1u << VGPU_ARG_U16))

int vgpu_args_set_bo(struct vgpu_args *args, unsigned int index,
		     struct vgpu_bo *bo, uint64_t offset)
{
	struct vgpu_arg_info a;
	int ret;

	if (!bo || offset > bo->size)
		return -EINVAL;
	ret = vgpu_kernel_arg(args->kernel, index, &a);
	if (ret)
		return ret;
	if (!(PTR_TYPES & (1u << a.type)))
		return -EINVAL;
	ret = vgpu_args_use_bo(args, bo);
	if (ret)
		return ret;
	return set_arg(args, index, PTR_TYPES, bo->va + offset);
}

int vgpu_args_set_u64(struct vgpu_args *args, unsigned int index,
		      uint64_t value)
{
	/* .param s64 too: no other setter writes 8 bytes to it */
	return set_arg(args, index, PTR_TYPES | (1u << VGPU_PARAM_S64), value);
}

int vgpu_args_set_u32(struct vgpu_args *args, unsigned int index,
		      uint32_t value)
{
	return set_arg(args, index, INT_TYPES, value);
}

int vgpu_args_set_s32(struct vgpu_args *args, unsigned int index,
		      int32_t value)
{
	return set_arg(args, index, INT_TYPES, (uint32_t)value);
}

int vgpu_args_set_f32(struct vgpu_args *args, unsigned int index, float value)
{
	uint32_t bits;

	memcpy(&bits, &value, sizeof(bits));
	return set_arg(args, index, 1u << VGPU_ARG_F32, bits);
}

int vgpu_args_set_envreg(struct vgpu_args *args, unsigned int index, uint32_t value)
{
	if (!args || index >= VGPU_ENVREGS)
		return -EINVAL;
	args->envreg[index] = value;
	return 0;
}

int vgpu_args_set_raw(struct vgpu_args *args, uint32_t offset,
		      const void *data, uint32_t len)
{
	if (!data && len)
		return -EINVAL;
	if (offset > VGPU_MAX_PARAM_BYTES || len > VGPU_MAX_PARAM_BYTES - offset)
		return -E2BIG;
	if (len)
		memcpy(args->data + offset, data, len);
	if (offset + len > args->size)
		args->size = offset + len;
	return 0;
}

int vgpu_args_bytes(struct vgpu_args *args, uint32_t len, void **out)
{
	if (!args || !out)
		return -EINVAL;
	if (len > VGPU_MAX_PARAM_BYTES)
		return -E2BIG;
	if (len > args->size)
		args->size = len;
	*out = args->data;
	return 0;
}

static int push_u64(struct vgpu_args *args, uint64_t value)
{
	uint8_t b[8];

	if (args->kernel->obj->nparams)
		return -EINVAL; /* declared parameters: use the setters */
	vgpu_put_le(b, value, 8);
	return vgpu_args_set_raw(args, args->size, b, 8);
}

int vgpu_args_push_u64(struct vgpu_args *args, uint64_t value)
{
	return push_u64(args, value);
}

int vgpu_args_push_bo(struct vgpu_args *args, struct vgpu_bo *bo,
		      uint64_t offset)
{
	int ret;

	if (!bo || offset > bo->size)
		return -EINVAL;
	if (args->kernel->obj->nparams)
		return -EINVAL;
	if (args->size + 8 > VGPU_MAX_PARAM_BYTES)
		return -E2BIG;
	ret = vgpu_args_use_bo(args, bo);
	if (ret)
		return ret;
	return push_u64(args, bo->va + offset);
}

