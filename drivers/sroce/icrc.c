// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * icrc.c - the invariant CRC that closes every RoCEv2 packet.
 *
 * CRC-32 (reflected polynomial 0xedb88320, Linux's crc32_le) over a
 * pseudo-header and the packet: the IP header, the UDP header and the BTH,
 * each with the fields routers may rewrite set to all ones (IPv4 TOS, TTL and
 * header checksum; IPv6 traffic class, flow label and hop limit; UDP
 * checksum; BTH byte 4), then everything after the BTH up to the ICRC.  The
 * register starts where eight 0xff bytes (the masked LRH of native
 * InfiniBand) leave an all-ones register, and the complement of the result
 * is stored little-endian.
 *
 * The CRC is computed through the crypto API's "crc32" (crc32-pclmul on x86
 * CPUs with PCLMULQDQ, several times faster than the table-driven crc32_le
 * of the CRC library on Linux 6.1), keyed with that register value; if no
 * such transform can be had, or it disagrees with crc32_le on a test
 * buffer, crc32_le is used.
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/udp.h>

#include "hdr.h"
#include "icrc.h"

/* crc32_le(~0, eight 0xff bytes): the masked LRH, precomputed. */
#define SROCE_ICRC_SEED 0xdebb20e3U

/*
 * The "crc32" transform, keyed with SROCE_ICRC_SEED; NULL when crc32_le is
 * used instead.  Set before the first device exists and cleared after the
 * last is gone (sroce_net_init(), sroce_net_uninit()); read-only between.
 */
static struct crypto_shash *sroce_icrc_tfm;

#define SROCE_ICRC_PSEUDO_MAX (sizeof(struct ipv6hdr) + \
			       sizeof(struct udphdr) + sizeof(struct sroce_bth))

static unsigned int sroce_icrc_pseudo(u8 *buf, const u8 *ip,
				      unsigned int ip_len, const u8 *roce)
{
	unsigned int len = ip_len + sizeof(struct udphdr) +
			   sizeof(struct sroce_bth);

	memcpy(buf, ip, ip_len);
	memcpy(buf + ip_len, roce, len - ip_len);
	if (ip_len == sizeof(struct iphdr)) {
		buf[1] = 0xff;				/* TOS */
		buf[8] = 0xff;				/* TTL */
		buf[10] = 0xff;				/* checksum */
		buf[11] = 0xff;
	} else {
		buf[0] |= 0x0f;				/* traffic class, */
		buf[1] = 0xff;				/* flow label */
		buf[2] = 0xff;
		buf[3] = 0xff;
		buf[7] = 0xff;				/* hop limit */
	}
	buf[ip_len + 6] = 0xff;				/* UDP checksum */
	buf[ip_len + 7] = 0xff;
	buf[ip_len + sizeof(struct udphdr) + 4] = 0xff;	/* BTH byte 4 */
	return len;
}

/*
 * What an ICRC covers after the pseudo-header: @len bytes at @flat, or the
 * bytes [@from, @to) of @skb, wherever the skb keeps them.
 */
struct sroce_icrc_src {
	const u8 *pseudo;
	unsigned int pseudo_len;
	const u8 *flat;
	unsigned int len;
	const struct sk_buff *skb;
	unsigned int from;
	unsigned int to;
};

/* A running CRC: through the transform (@desc), or crc32_le (@crc). */
struct sroce_icrc_sum {
	struct shash_desc *desc;
	u32 crc;
	int err;
};

static void sroce_icrc_add(struct sroce_icrc_sum *sum, const u8 *p,
			   unsigned int len)
{
	if (!sum->desc)
		sum->crc = crc32_le(sum->crc, p, len);
	else if (!sum->err)
		sum->err = crypto_shash_update(sum->desc, p, len);
}

/* skb_seq_read() hands out whole pieces: the last may run past @to. */
static void sroce_icrc_add_skb(struct sroce_icrc_sum *sum,
			       const struct sroce_icrc_src *src)
{
	unsigned int len = src->to - src->from, done = 0, n;
	struct skb_seq_state st;
	const u8 *data;

	skb_prepare_seq_read((struct sk_buff *)src->skb, src->from, src->to,
			     &st);
	while (done < len) {
		n = skb_seq_read(done, &data, &st);
		if (!n) {
			sum->err = -EFAULT;
			break;
		}
		n = min(n, len - done);
		sroce_icrc_add(sum, data, n);
		done += n;
	}
	skb_abort_seq_read(&st);
}

static void sroce_icrc_add_all(struct sroce_icrc_sum *sum,
			       const struct sroce_icrc_src *src)
{
	sroce_icrc_add(sum, src->pseudo, src->pseudo_len);
	if (src->skb)
		sroce_icrc_add_skb(sum, src);
	else
		sroce_icrc_add(sum, src->flat, src->len);
}

static __le32 sroce_icrc_sum(const struct sroce_icrc_src *src)
{
	struct sroce_icrc_sum sum = { .crc = SROCE_ICRC_SEED };
	__le32 out;

	if (sroce_icrc_tfm) {
		SHASH_DESC_ON_STACK(desc, sroce_icrc_tfm);
		struct sroce_icrc_sum tfm_sum = { .desc = desc };

		desc->tfm = sroce_icrc_tfm;
		tfm_sum.err = crypto_shash_init(desc);
		sroce_icrc_add_all(&tfm_sum, src);
		/* "crc32" ends without complementing: its final is the register. */
		if (!tfm_sum.err && !crypto_shash_final(desc, (u8 *)&out))
			return ~out;
	}
	sroce_icrc_add_all(&sum, src);
	return cpu_to_le32(~sum.crc);
}

/**
 * sroce_icrc_buf() - the ICRC of a packet in flat buffers
 * @ip: the IP header (20 bytes for IPv4, without options, or 40 for IPv6)
 * @ip_len: its length
 * @roce: the UDP header, followed by the rest of the packet
 * @roce_len: bytes from the UDP header up to, not including, the ICRC; at
 *	least UDP header plus BTH
 *
 * Context: Any context.
 * Return: the ICRC as it goes on the wire.
 */
__le32 sroce_icrc_buf(const void *ip, unsigned int ip_len, const void *roce,
		      unsigned int roce_len)
{
	unsigned int skip = sizeof(struct udphdr) + sizeof(struct sroce_bth);
	u8 pseudo[SROCE_ICRC_PSEUDO_MAX];
	struct sroce_icrc_src src = {
		.pseudo = pseudo,
		.flat = (const u8 *)roce + skip,
		.len = roce_len - skip,
	};

	src.pseudo_len = sroce_icrc_pseudo(pseudo, ip, ip_len, roce);
	return sroce_icrc_sum(&src);
}

/**
 * sroce_icrc() - the ICRC of a packet in an skb
 * @skb: the packet; its network header is the IP header, its transport
 *	header the UDP header, both followed by the BTH in the linear area;
 *	the rest may be in page fragments.  It ends with the 4-byte ICRC
 *	field.
 *
 * Context: Any context.
 * Return: the ICRC the packet should carry.
 */
__le32 sroce_icrc(const struct sk_buff *skb)
{
	const u8 *ip = skb_network_header(skb);
	const u8 *udp = skb_transport_header(skb);
	u8 pseudo[SROCE_ICRC_PSEUDO_MAX];
	struct sroce_icrc_src src = {
		.pseudo = pseudo,
		.skb = skb,
		.from = skb_transport_offset(skb) + sizeof(struct udphdr) +
			sizeof(struct sroce_bth),
		.to = skb->len - SROCE_ICRC_SIZE,
	};

	src.pseudo_len = sroce_icrc_pseudo(pseudo, ip, udp - ip, udp);
	return sroce_icrc_sum(&src);
}

/* The transform must agree with crc32_le, from every alignment. */
static bool sroce_icrc_tfm_ok(struct crypto_shash *tfm)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	static const unsigned int offs[] = { 0, 1, 3, 8 };
	unsigned int i, n = 1024;
	__le32 out;
	bool ok = true;
	u8 *buf;

	buf = kmalloc(n + 8, GFP_KERNEL);
	if (!buf)
		return false;
	for (i = 0; i < n + 8; i++)
		buf[i] = i * 7 + (i >> 8);
	desc->tfm = tfm;
	for (i = 0; i < ARRAY_SIZE(offs) && ok; i++)
		ok = !crypto_shash_digest(desc, buf + offs[i], n - i * 100,
					  (u8 *)&out) &&
		     le32_to_cpu(out) == crc32_le(SROCE_ICRC_SEED, buf + offs[i],
						  n - i * 100);
	kfree(buf);
	return ok;
}

/**
 * sroce_icrc_init() - pick the CRC engine
 *
 * Context: Process context, before any device exists.
 */
void sroce_icrc_init(void)
{
	__le32 seed = cpu_to_le32(SROCE_ICRC_SEED);
	struct crypto_shash *tfm;

	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm)) {
		pr_info("no crc32 transform (%ld), using crc32_le\n", PTR_ERR(tfm));
		return;
	}
	if (crypto_shash_setkey(tfm, (const u8 *)&seed, sizeof(seed)) ||
	    !sroce_icrc_tfm_ok(tfm)) {
		pr_info("%s disagrees with crc32_le, using crc32_le\n",
			crypto_shash_driver_name(tfm));
		crypto_free_shash(tfm);
		return;
	}
	pr_debug("ICRC through %s\n", crypto_shash_driver_name(tfm));
	sroce_icrc_tfm = tfm;
}

/**
 * sroce_icrc_uninit() - release the CRC engine
 *
 * Context: Process context, after the last device is gone and every
 * receive handler has finished.
 */
void sroce_icrc_uninit(void)
{
	crypto_free_shash(sroce_icrc_tfm);
	sroce_icrc_tfm = NULL;
}
