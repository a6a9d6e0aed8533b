// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uverbs.c - sroce_misuse: reporting, write() commands and the objects
 * they make (contexts, PDs, CQs, QPs, SRQs, MRs, MWs, AHs), the rings as
 * the process maps them, WQEs, and a connected world for the ring cases.
 */

#include "misuse.h"

/* --- reporting ------------------------------------------------------------- */

void setup_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "setup error in %s: ", cur_case ? cur_case : "-");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* Record a failure of the running case (it goes on, to report them all). */
void bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s: FAIL ", cur_case);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	case_failed = 1;
}

const char *ename(int e)
{
	static char buf[8][32];
	static int n;
	char *b = buf[n++ % 8];

	if (!e)
		return "success";
	snprintf(b, sizeof(buf[0]), "%s", strerrorname_np(e) ?: "?");
	return b;
}

bool expect_one(const char *what, int got, int want, int line)
{
	if (got == -want)
		return true;
	bad("%s: expected %s, got %s (line %d)", what, ename(want),
	    ename(-got), line);
	return false;
}

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* --- commands ---------------------------------------------------------------- */

/*
 * One write() command: header, then @req (the core command and, behind
 * it, driver data), @resplen bytes of response space.  Returns 0 or
 * -errno.
 */
int cmd_write(int fd, uint32_t command, const void *req, size_t reqlen,
	      size_t resplen)
{
	uint8_t buf[1024];
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	ssize_t n;

	if (reqlen + sizeof(*hdr) > sizeof(buf))
		setup_die("command too large");
	hdr->command = command;
	hdr->in_words = (uint16_t)((sizeof(*hdr) + reqlen) / 4);
	hdr->out_words = (uint16_t)(resplen / 4);
	memcpy(buf + sizeof(*hdr), req, reqlen);
	n = write(fd, buf, sizeof(*hdr) + reqlen);
	if (n < 0)
		return -errno;
	if ((size_t)n != sizeof(*hdr) + reqlen)
		return -EIO;
	return 0;
}

int ctx_open_raw(void)
{
	int fd = open(uverbs_path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		setup_die("open %s: %s", uverbs_path, strerror(errno));
	return fd;
}

struct ctx ctx_open(void)
{
	struct get_context_resp resp = {};
	struct get_context_cmd c = {
		.core.response = (uintptr_t)&resp,
		.drv.provider_abi = SROCE_UVERBS_ABI_VERSION,
	};
	struct ctx x = { .fd = ctx_open_raw() };
	int err;

	err = CMD(x.fd, IB_USER_VERBS_CMD_GET_CONTEXT, c, sizeof(resp));
	if (err)
		setup_die("GET_CONTEXT: %s", ename(-err));
	x.async_fd = (int)resp.core.async_fd;
	return x;
}

void ctx_close(struct ctx *x)
{
	close(x->async_fd);
	close(x->fd);
}

int pd_alloc(struct ctx *x, uint32_t *pd)
{
	uint32_t resp[4] = {};
	struct ib_uverbs_alloc_pd c = { .response = (uintptr_t)resp };
	int err = CMD(x->fd, IB_USER_VERBS_CMD_ALLOC_PD, c, 4);

	*pd = resp[0];
	return err;
}

uint32_t pd_new(struct ctx *x)
{
	uint32_t pd;

	if (pd_alloc(x, &pd))
		setup_die("ALLOC_PD");
	return pd;
}

int pd_dealloc(struct ctx *x, uint32_t pd)
{
	struct ib_uverbs_dealloc_pd c = { .pd_handle = pd };

	return CMD(x->fd, IB_USER_VERBS_CMD_DEALLOC_PD, c, 0);
}

struct sroce_ring_hdr *rhdr(struct ring *r)
{
	return (void *)r->base;
}

void *rslot(struct ring *r, uint32_t i)
{
	return r->base + SROCE_RING_DATA_OFFSET +
	       (size_t)(i & (r->n - 1)) * r->slot;
}

int ring_map(struct ctx *x, const struct sroce_ring_info *info,
	     struct ring *r)
{
	void *p;

	memset(r, 0, sizeof(*r));
	if (!info->num_slots)
		return 0;
	p = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 x->fd, (off_t)info->mmap_offset);
	if (p == MAP_FAILED)
		return -errno;
	r->base = p;
	r->size = info->mmap_size;
	r->n = info->num_slots;
	r->slot = info->slot_size;
	return 0;
}

int cq_create(struct ctx *x, uint32_t cqe, uint32_t vector,
	      int32_t channel, struct cq *cq)
{
	struct create_cq_resp resp = {};
	struct ib_uverbs_create_cq c = {
		.response = (uintptr_t)&resp,
		.cqe = cqe,
		.comp_vector = vector,
		.comp_channel = channel,
	};
	int err = CMD(x->fd, IB_USER_VERBS_CMD_CREATE_CQ, c, sizeof(resp));

	memset(cq, 0, sizeof(*cq));
	cq->handle = resp.core.cq_handle;
	cq->info = resp.drv.ring;
	return err;
}

struct cq cq_new(struct ctx *x, uint32_t cqe)
{
	struct cq cq;
	int err = cq_create(x, cqe, 0, -1, &cq);

	if (err)
		setup_die("CREATE_CQ: %s", ename(-err));
	err = ring_map(x, &cq.info, &cq.ring);
	if (err)
		setup_die("mmap CQ: %s", ename(-err));
	return cq;
}

int cq_destroy(struct ctx *x, uint32_t h)
{
	struct ib_uverbs_destroy_cq_resp resp;
	struct ib_uverbs_destroy_cq c = { .response = (uintptr_t)&resp,
					  .cq_handle = h };

	return CMD(x->fd, IB_USER_VERBS_CMD_DESTROY_CQ, c, sizeof(resp));
}

int cq_resize(struct ctx *x, uint32_t h, uint32_t cqe,
	      struct sroce_ring_info *info)
{
	struct {
		struct ib_uverbs_resize_cq_resp core;
		struct sroce_create_cq_resp drv;
	} resp = {};
	struct ib_uverbs_resize_cq c = { .response = (uintptr_t)&resp,
					 .cq_handle = h, .cqe = cqe };
	int err = CMD(x->fd, IB_USER_VERBS_CMD_RESIZE_CQ, c, sizeof(resp));

	if (info)
		*info = resp.drv.ring;
	return err;
}

int cq_arm(struct ctx *x, uint32_t h)
{
	struct ib_uverbs_req_notify_cq c = { .cq_handle = h };

	return CMD(x->fd, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, c, 0);
}

/* Take the next completion from a CQ ring; false if none in @ms. */
bool cq_poll(struct cq *cq, struct ib_uverbs_wc *wc, int ms)
{
	struct ring *r = &cq->ring;
	uint64_t end = now_ms() + (uint64_t)ms;

	do {
		uint32_t prod = atomic_load_explicit(
			(_Atomic uint32_t *)&rhdr(r)->producer,
			memory_order_acquire);

		if (prod != r->mine) {
			memcpy(wc, rslot(r, r->mine), sizeof(*wc));
			r->mine++;
			atomic_store_explicit(
				(_Atomic uint32_t *)&rhdr(r)->consumer,
				r->mine, memory_order_release);
			return true;
		}
		usleep(1000);
	} while (now_ms() < end);
	return false;
}

/* Wait for the completion of @wr_id; its status, or -1 if none came. */
int cq_wait(struct cq *cq, uint64_t wr_id, int ms)
{
	struct ib_uverbs_wc wc;
	uint64_t end = now_ms() + (uint64_t)ms;

	while (now_ms() < end) {
		if (!cq_poll(cq, &wc, 100))
			continue;
		if (wc.wr_id == wr_id)
			return (int)wc.status;
	}
	return -1;
}

const struct qp_caps default_caps = { 16, 16, 2, 2, 64 };

int qp_create(struct ctx *x, uint32_t type, uint32_t pd, uint32_t scq,
	      uint32_t rcq, int64_t srq, const struct qp_caps *caps,
	      struct qp *qp)
{
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct sroce_create_qp_resp drv;
	} resp = {};
	struct ib_uverbs_create_qp c = {
		.response = (uintptr_t)&resp,
		.pd_handle = pd, .send_cq_handle = scq, .recv_cq_handle = rcq,
		.srq_handle = srq < 0 ? 0 : (uint32_t)srq, .is_srq = srq >= 0,
		.max_send_wr = caps->send_wr, .max_recv_wr = caps->recv_wr,
		.max_send_sge = caps->send_sge, .max_recv_sge = caps->recv_sge,
		.max_inline_data = caps->inline_data, .qp_type = (uint8_t)type,
	};
	int err = CMD(x->fd, IB_USER_VERBS_CMD_CREATE_QP, c, sizeof(resp));

	memset(qp, 0, sizeof(*qp));
	qp->handle = resp.core.qp_handle;
	qp->qpn = resp.core.qpn;
	qp->type = type;
	qp->drv = resp.drv;
	qp->max_send_sge = resp.core.max_send_sge;
	qp->max_recv_sge = resp.core.max_recv_sge;
	qp->max_inline = resp.core.max_inline_data;
	return err;
}

struct qp qp_new(struct ctx *x, uint32_t type, uint32_t pd,
		 uint32_t scq, uint32_t rcq, int64_t srq)
{
	struct qp qp;
	int err = qp_create(x, type, pd, scq, rcq, srq, &default_caps, &qp);

	if (err)
		setup_die("CREATE_QP: %s", ename(-err));
	if (ring_map(x, &qp.drv.sq, &qp.sq) || ring_map(x, &qp.drv.rq, &qp.rq))
		setup_die("mmap QP rings: %s", strerror(errno));
	return qp;
}

int qp_destroy(struct ctx *x, uint32_t h)
{
	struct ib_uverbs_destroy_qp_resp resp;
	struct ib_uverbs_destroy_qp c = { .response = (uintptr_t)&resp,
					  .qp_handle = h };

	return CMD(x->fd, IB_USER_VERBS_CMD_DESTROY_QP, c, sizeof(resp));
}

int qp_modify(struct ctx *x, struct ib_uverbs_modify_qp *m)
{
	return CMD(x->fd, IB_USER_VERBS_CMD_MODIFY_QP, *m, 0);
}

/* The state of a QP, or -errno. */
int qp_state(struct ctx *x, uint32_t h)
{
	struct ib_uverbs_query_qp_resp resp = {};
	struct ib_uverbs_query_qp c = { .response = (uintptr_t)&resp,
					.qp_handle = h, .attr_mask = M_STATE };
	int err = CMD(x->fd, IB_USER_VERBS_CMD_QUERY_QP, c, sizeof(resp));

	return err ? err : resp.qp_state;
}

bool qp_wait_state(struct ctx *x, uint32_t h, int state, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	do {
		if (qp_state(x, h) == state)
			return true;
		usleep(2000);
	} while (now_ms() < end);
	return false;
}

void dest_fill(struct ib_uverbs_qp_dest *d)
{
	memcpy(d->dgid, gid, 16);
	d->sgid_index = (uint8_t)gid_index;
	d->hop_limit = 64;
	d->is_global = 1;
	d->port_num = 1;
}

int qp_to_init(struct ctx *x, struct qp *qp)
{
	struct ib_uverbs_modify_qp m = {
		.qp_handle = qp->handle, .qp_state = QPS_INIT, .port_num = 1,
		.attr_mask = M_STATE | M_PKEY | M_PORT,
	};

	if (qp->type == QPT_UD) {
		m.attr_mask |= M_QKEY;
		m.qkey = 0x11111111;
	} else {
		m.attr_mask |= M_ACCESS;
		m.qp_access_flags = ACC_LW | ACC_RW | ACC_RR;
	}
	return qp_modify(x, &m);
}

int qp_to_rtr(struct ctx *x, struct qp *qp, uint32_t dest_qpn)
{
	struct ib_uverbs_modify_qp m = {
		.qp_handle = qp->handle, .qp_state = QPS_RTR,
		.attr_mask = M_STATE,
	};

	if (qp->type != QPT_UD) {
		m.attr_mask |= M_AV | M_MTU | M_DEST_QPN | M_RQ_PSN;
		dest_fill(&m.dest);
		m.path_mtu = 3;	/* 1024 */
		m.dest_qp_num = dest_qpn;
		m.rq_psn = 100;
	}
	if (qp->type == QPT_RC) {
		m.attr_mask |= M_MAX_DEST_RD | M_MIN_RNR;
		m.max_dest_rd_atomic = 1;
		m.min_rnr_timer = 1;
	}
	return qp_modify(x, &m);
}

int qp_to_rts(struct ctx *x, struct qp *qp, uint8_t timeout)
{
	struct ib_uverbs_modify_qp m = {
		.qp_handle = qp->handle, .qp_state = QPS_RTS,
		.attr_mask = M_STATE | M_SQ_PSN, .sq_psn = 100,
	};

	if (qp->type == QPT_RC) {
		m.attr_mask |= M_TIMEOUT | M_RETRY | M_RNR_RETRY | M_MAX_RD;
		m.timeout = timeout;
		m.retry_cnt = 1;
		m.rnr_retry = 1;
		m.max_rd_atomic = 1;
	}
	return qp_modify(x, &m);
}

/* INIT, RTR (towards @dest_qpn), RTS; or die. */
void qp_connect(struct ctx *x, struct qp *qp, uint32_t dest_qpn,
		uint8_t timeout)
{
	int err = qp_to_init(x, qp);

	if (!err)
		err = qp_to_rtr(x, qp, dest_qpn);
	if (!err)
		err = qp_to_rts(x, qp, timeout);
	if (err)
		setup_die("connecting QP %#x: %s", qp->qpn, ename(-err));
}

int qp_set_state(struct ctx *x, uint32_t h, int state)
{
	struct ib_uverbs_modify_qp m = { .qp_handle = h, .qp_state = (uint8_t)state,
					 .attr_mask = M_STATE };

	return qp_modify(x, &m);
}

static int doorbell(struct ctx *x, uint32_t qp, uint32_t command)
{
	struct ib_uverbs_post_send_resp resp;
	struct ib_uverbs_post_send c = {
		.response = (uintptr_t)&resp, .qp_handle = qp,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};

	return CMD(x->fd, command, c, sizeof(resp));
}

int sq_doorbell(struct ctx *x, uint32_t qp)
{
	return doorbell(x, qp, IB_USER_VERBS_CMD_POST_SEND);
}

int rq_doorbell(struct ctx *x, uint32_t qp)
{
	return doorbell(x, qp, IB_USER_VERBS_CMD_POST_RECV);
}

int srq_create(struct ctx *x, uint32_t pd, uint32_t max_wr,
	       uint32_t max_sge, uint32_t limit, struct srq *s)
{
	struct {
		struct ib_uverbs_create_srq_resp core;
		struct sroce_create_srq_resp drv;
	} resp = {};
	struct ib_uverbs_create_srq c = {
		.response = (uintptr_t)&resp, .pd_handle = pd, .max_wr = max_wr,
		.max_sge = max_sge, .srq_limit = limit,
	};
	int err = CMD(x->fd, IB_USER_VERBS_CMD_CREATE_SRQ, c, sizeof(resp));

	memset(s, 0, sizeof(*s));
	s->handle = resp.core.srq_handle;
	s->max_sge = resp.core.max_sge;
	s->info = resp.drv.ring;
	return err;
}

struct srq srq_new(struct ctx *x, uint32_t pd)
{
	struct srq s;
	int err = srq_create(x, pd, 16, 2, 0, &s);

	if (!err)
		err = ring_map(x, &s.info, &s.ring);
	if (err)
		setup_die("CREATE_SRQ: %s", ename(-err));
	return s;
}

int srq_destroy(struct ctx *x, uint32_t h)
{
	struct ib_uverbs_destroy_srq_resp resp;
	struct ib_uverbs_destroy_srq c = { .response = (uintptr_t)&resp,
					   .srq_handle = h };

	return CMD(x->fd, IB_USER_VERBS_CMD_DESTROY_SRQ, c, sizeof(resp));
}

int mr_reg(struct ctx *x, uint32_t pd, uint64_t start, uint64_t len,
	   uint64_t iova, uint32_t access, struct mr *mr)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ib_uverbs_reg_mr c = {
		.response = (uintptr_t)&resp, .start = start, .length = len,
		.hca_va = iova, .pd_handle = pd, .access_flags = access,
	};
	int err = CMD(x->fd, IB_USER_VERBS_CMD_REG_MR, c, sizeof(resp));

	mr->handle = resp.mr_handle;
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	return err;
}

struct mr mr_new(struct ctx *x, uint32_t pd, void *buf, size_t len)
{
	struct mr mr;
	int err = mr_reg(x, pd, (uintptr_t)buf, len, (uintptr_t)buf,
			 ACC_LW | ACC_RW | ACC_RR, &mr);

	if (err)
		setup_die("REG_MR: %s", ename(-err));
	return mr;
}

int mr_dereg(struct ctx *x, uint32_t h)
{
	struct ib_uverbs_dereg_mr c = { .mr_handle = h };

	return CMD(x->fd, IB_USER_VERBS_CMD_DEREG_MR, c, 0);
}

int ah_create(struct ctx *x, uint32_t pd, uint8_t sgid, uint8_t port,
	      uint8_t global, uint32_t *handle, uint32_t *ah_num)
{
	uint32_t resp[4] = {};
	struct ib_uverbs_create_ah c = {
		.response = (uintptr_t)resp, .pd_handle = pd,
		.attr = { .grh = { .sgid_index = sgid, .hop_limit = 64 },
			  .is_global = global, .port_num = port },
	};
	int err;

	memcpy(c.attr.grh.dgid, gid, 16);
	/* ib_uverbs_create_ah_resp (4 bytes), then sroce_create_ah_resp */
	err = CMD(x->fd, IB_USER_VERBS_CMD_CREATE_AH, c, 4 + sizeof(struct sroce_create_ah_resp));
	*handle = resp[0];
	if (ah_num)
		*ah_num = resp[1];
	return err;
}

int ah_destroy(struct ctx *x, uint32_t h)
{
	struct ib_uverbs_destroy_ah c = { .ah_handle = h };

	return CMD(x->fd, IB_USER_VERBS_CMD_DESTROY_AH, c, 0);
}

/* --- WQEs ------------------------------------------------------------------------ */

/* Publish the send WQE @w with @nsge SGEs @sge at the process's producer. */
void sq_put(struct qp *qp, const struct sroce_send_wqe *w,
	    const struct sroce_sge *sge, uint32_t nsge)
{
	uint8_t *slot = rslot(&qp->sq, qp->sq.mine);

	memcpy(slot, w, sizeof(*w));
	if (nsge)
		memcpy(slot + sizeof(*w), sge, nsge * sizeof(*sge));
	qp->sq.mine++;
	atomic_store_explicit((_Atomic uint32_t *)&rhdr(&qp->sq)->producer,
			      qp->sq.mine, memory_order_release);
}

void rq_put(struct ring *r, uint64_t wr_id,
	    const struct sroce_sge *sge, uint32_t nsge)
{
	uint8_t *slot = rslot(r, r->mine);
	struct sroce_recv_wqe w = { .wr_id = wr_id, .num_sge = nsge };

	memcpy(slot, &w, sizeof(w));
	if (nsge)
		memcpy(slot + sizeof(w), sge, nsge * sizeof(*sge));
	r->mine++;
	atomic_store_explicit((_Atomic uint32_t *)&rhdr(r)->producer, r->mine,
			      memory_order_release);
}

void set_prod(struct ring *r, uint32_t v)
{
	atomic_store_explicit((_Atomic uint32_t *)&rhdr(r)->producer, v,
			      memory_order_release);
}

void set_cons(struct ring *r, uint32_t v)
{
	atomic_store_explicit((_Atomic uint32_t *)&rhdr(r)->consumer, v,
			      memory_order_release);
}

void world_open(struct world *w, uint32_t type)
{
	memset(w, 0, sizeof(*w));
	w->x = ctx_open();
	w->pd = pd_new(&w->x);
	w->buf = aligned_alloc(4096, BUF_SIZE);
	if (!w->buf)
		setup_die("out of memory");
	memset(w->buf, 0, BUF_SIZE);
	w->mr = mr_new(&w->x, w->pd, w->buf, BUF_SIZE);
	w->ca = cq_new(&w->x, 64);
	w->cb = cq_new(&w->x, 64);
	w->a = qp_new(&w->x, type, w->pd, w->ca.handle, w->ca.handle, -1);
	w->b = qp_new(&w->x, type, w->pd, w->cb.handle, w->cb.handle, -1);
	qp_connect(&w->x, &w->a, w->b.qpn, 14);
	qp_connect(&w->x, &w->b, w->a.qpn, 14);
}

void world_close(struct world *w)
{
	ctx_close(&w->x);
	free(w->buf);
}

struct sroce_sge sge_of(struct world *w, uint32_t off, uint32_t len)
{
	struct sroce_sge s = { .addr = (uintptr_t)w->buf + off, .length = len,
			       .lkey = w->mr.lkey };

	return s;
}

/* A signalled SEND of @len bytes at @off from a to b's receive at @roff. */
struct sroce_send_wqe send_wqe(uint64_t wr_id)
{
	struct sroce_send_wqe s = { .wr_id = wr_id, .opcode = IB_UVERBS_WR_SEND,
				    .send_flags = SROCE_SEND_SIGNALED };

	return s;
}

/* One verified SEND a -> b; true if it arrived intact. */
bool world_send_ok(struct world *w, uint32_t len, uint64_t tag)
{
	struct sroce_sge s = sge_of(w, 0, len), r = sge_of(w, 32768, len);
	struct sroce_send_wqe sw = send_wqe(tag);
	uint32_t i;
	int st;

	for (i = 0; i < len; i++)
		w->buf[i] = (uint8_t)(tag + i * 7);
	memset(w->buf + 32768, 0, len);
	sw.num_sge = 1;
	rq_put(&w->b.rq, tag, &r, 1);
	sq_put(&w->a, &sw, &s, 1);
	if (sq_doorbell(&w->x, w->a.handle))
		return false;
	st = cq_wait(&w->ca, tag, 20000);
	if (st != WC_SUCCESS) {
		bad("send %#llx: send status %d", (unsigned long long)tag, st);
		return false;
	}
	st = cq_wait(&w->cb, tag, 20000);
	if (st != WC_SUCCESS) {
		bad("send %#llx: receive status %d", (unsigned long long)tag, st);
		return false;
	}
	if (memcmp(w->buf, w->buf + 32768, len)) {
		bad("send %#llx: data differs", (unsigned long long)tag);
		return false;
	}
	return true;
}

/* Wait for an async event of @type on the context; true if it came. */
bool async_wait(struct ctx *x, uint32_t type, int ms)
{
	struct ib_uverbs_async_event_desc ev;
	uint64_t end = now_ms() + (uint64_t)ms;
	struct pollfd p = { .fd = x->async_fd, .events = POLLIN };

	while (now_ms() < end) {
		if (poll(&p, 1, 100) <= 0)
			continue;
		if (read(x->async_fd, &ev, sizeof(ev)) != sizeof(ev))
			return false;
		if (ev.event_type == type)
			return true;
	}
	return false;
}
