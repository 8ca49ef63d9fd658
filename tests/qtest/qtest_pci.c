/* SPDX-License-Identifier: MIT */
/*
 * PCI configuration space through the host bridge's ports 0xcf8/0xcfc
 * (qtest_client.h), on any implementation of the port primitives: the
 * qtest client's socket, or the in-process fuzzer's (qemu-device/fuzz).
 */
#include "qtest_client.h"

static uint32_t cfg_addr(unsigned devfn, unsigned off)
{
	return 0x80000000u | devfn << 8 | (off & 0xfc);
}

uint32_t qts_cfg_readl(struct qts *s, unsigned devfn, unsigned off)
{
	qts_outl(s, 0xcf8, cfg_addr(devfn, off));
	return qts_inl(s, 0xcfc);
}

uint16_t qts_cfg_readw(struct qts *s, unsigned devfn, unsigned off)
{
	return (uint16_t)(qts_cfg_readl(s, devfn, off) >> (8 * (off & 2)));
}

void qts_cfg_writel(struct qts *s, unsigned devfn, unsigned off, uint32_t v)
{
	qts_outl(s, 0xcf8, cfg_addr(devfn, off));
	qts_outl(s, 0xcfc, v);
}

void qts_cfg_writew(struct qts *s, unsigned devfn, unsigned off, uint16_t v)
{
	qts_outl(s, 0xcf8, cfg_addr(devfn, off));
	qts_outw(s, (uint16_t)(0xcfc + (off & 2)), v);
}

unsigned qts_cfg_find_cap(struct qts *s, unsigned devfn, uint8_t id)
{
	unsigned off = qts_cfg_readl(s, devfn, 0x34) & 0xfc;

	for (int n = 0; off && n < 48; n++) {
		uint32_t w = qts_cfg_readl(s, devfn, off);

		if ((w & 0xff) == id)
			return off;
		off = (w >> 8) & 0xfc;
	}
	return 0;
}
