// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pkt.c - a received packet's payload, wherever its skb keeps it.
 *
 * The receive path makes only the headers linear (rx.c); the payload stays
 * where it arrived: in the linear area, in page fragments a NIC filled or
 * in the pages of the sender's own region, which a packet sent on this host
 * carries as fragments (mem.c, sroce_sge_attach()).  Each byte of it is
 * copied once, from there to where it goes: a region, a scatter/gather
 * list or, for the few bytes of a header inside the payload, a buffer of
 * the caller's.
 */
#include <linux/skbuff.h>

#include "sroce.h"

/* Called for each contiguous piece of a payload range, in order. */
typedef int (*sroce_pkt_piece_fn)(void *ctx, const u8 *data, u32 done,
				  u32 len);

/*
 * Walk @len bytes of @pkt's payload from @off, piece by piece; stop at the
 * first piece @fn fails.  The range was bounded by the caller against
 * pkt->paylen, so it lies inside the skb.
 */
static int sroce_pkt_walk(const struct sroce_pkt *pkt, u32 off, u32 len,
			  sroce_pkt_piece_fn fn, void *ctx)
{
	u32 from = pkt->payoff + off, done = 0, n;
	struct skb_seq_state st;
	const u8 *data;
	int err = 0;

	if (!len)
		return 0;
	skb_prepare_seq_read(pkt->skb, from, from + len, &st);
	while (done < len) {
		n = skb_seq_read(done, &data, &st);
		if (!n) {
			err = -EFAULT;
			break;
		}
		n = min(n, len - done);	/* a piece may run past the range */
		err = fn(ctx, data, done, n);
		if (err)
			break;
		done += n;
	}
	skb_abort_seq_read(&st);
	return err;
}

/**
 * sroce_pkt_read() - copy a few bytes of a received packet's payload
 * @pkt: the packet
 * @off: offset into the payload
 * @buf: where they go
 * @len: bytes; @off + @len at most pkt->paylen
 *
 * Context: Any context.
 * Return: 0, or -EFAULT if the range is not in the payload.
 */
int sroce_pkt_read(const struct sroce_pkt *pkt, u32 off, void *buf, u32 len)
{
	if (off > pkt->paylen || len > pkt->paylen - off)
		return -EFAULT;
	return skb_copy_bits(pkt->skb, pkt->payoff + off, buf, len);
}

struct sroce_pkt_to_sge {
	struct sroce_qp *qp;
	struct ib_pd *pd;
	const struct sroce_sge *sge;
	u32 num_sge;
	u32 offset;
};

static int sroce_pkt_piece_to_sge(void *ctx, const u8 *data, u32 done,
				  u32 len)
{
	struct sroce_pkt_to_sge *to = ctx;

	return sroce_sge_copy(to->qp, to->pd, to->sge, to->num_sge,
			      to->offset + done, (void *)data, len,
			      SROCE_TO_MR);
}

/**
 * sroce_pkt_to_sge() - copy payload into a scatter/gather list
 * @qp: the QP the list belongs to
 * @pd: the PD its keys must belong to (as for sroce_sge_copy())
 * @sge: the list
 * @num_sge: entries in @sge
 * @offset: bytes of the list to skip first
 * @pkt: the packet
 * @off: offset into its payload
 * @len: bytes from there; @off + @len at most pkt->paylen
 *
 * Context: Any context.
 * Return: as sroce_sge_copy().
 */
int sroce_pkt_to_sge(struct sroce_qp *qp, struct ib_pd *pd,
		     const struct sroce_sge *sge, u32 num_sge, u32 offset,
		     const struct sroce_pkt *pkt, u32 off, u32 len)
{
	struct sroce_pkt_to_sge to = {
		.qp = qp, .pd = pd, .sge = sge, .num_sge = num_sge,
		.offset = offset,
	};

	return sroce_pkt_walk(pkt, off, len, sroce_pkt_piece_to_sge, &to);
}

struct sroce_pkt_to_mr {
	struct sroce_qp *qp;
	struct sroce_mr *mr;
	u64 iova;
};

static int sroce_pkt_piece_to_mr(void *ctx, const u8 *data, u32 done, u32 len)
{
	struct sroce_pkt_to_mr *to = ctx;

	return sroce_mr_copy(to->qp, to->mr, to->iova + done, (void *)data, len,
			     SROCE_TO_MR);
}

/**
 * sroce_pkt_to_mr() - copy a received packet's whole payload into a region
 * @qp: the QP the copy is for
 * @mr: the region; the caller checked the range with sroce_mr_check()
 * @iova: where the payload's first byte goes
 * @pkt: the packet
 *
 * Context: Any context.
 * Return: as sroce_mr_copy().
 */
int sroce_pkt_to_mr(struct sroce_qp *qp, struct sroce_mr *mr, u64 iova,
		    const struct sroce_pkt *pkt)
{
	struct sroce_pkt_to_mr to = { .qp = qp, .mr = mr, .iova = iova };

	return sroce_pkt_walk(pkt, 0, pkt->paylen, sroce_pkt_piece_to_mr, &to);
}
