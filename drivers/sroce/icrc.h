/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* icrc.h - the RoCEv2 invariant CRC. */
#ifndef SROCE_ICRC_H
#define SROCE_ICRC_H

#include <linux/types.h>

struct sk_buff;

__le32 sroce_icrc(const struct sk_buff *skb);
__le32 sroce_icrc_buf(const void *ip, unsigned int ip_len, const void *roce,
		      unsigned int roce_len);
void sroce_icrc_init(void);
void sroce_icrc_uninit(void);

#endif /* SROCE_ICRC_H */
