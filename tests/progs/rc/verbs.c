// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs.c - sroce_rc_test: verdicts, the resources a case makes and their
 * release, the devices, and QPs connected in pairs.
 */

#include "rc.h"

#define BOGUS_QPN 0xabcdef	/* a QP number nobody has */

/* --- verdicts --------------------------------------------------------------- */

/* Why the running case failed or was skipped; the first reason wins. */
char why[512];

static int setwhy(int ret, const char *fmt, va_list ap)
{
	if (!why[0])
		vsnprintf(why, sizeof(why), fmt, ap);
	return ret;
}

int failf(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = setwhy(-1, fmt, ap);
	va_end(ap);
	return ret;
}

int skipf(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = setwhy(SKIP, fmt, ap);
	va_end(ap);
	return ret;
}

const char *estr(int err)
{
	return strerror(err < 0 ? -err : err);
}

void vlog(const char *fmt, ...)
{
	va_list ap;

	if (!opt.verbose)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

void sleep_ms(int ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

static const char *const rkind_name[] = { "context", "completion channel", "PD", "CQ",
					   "QP", "MR", "MW", "buffer", "thread domain",
					   "device memory", "XRC domain", "SRQ",
					   "mapping" };
static struct {
	enum rkind kind;
	void *p;
} res[4096];
static int nres;

void *track(enum rkind kind, void *p)
{
	if (!p)
		return NULL;
	if (nres == (int)ARRAY_SIZE(res))
		die("too many resources");
	res[nres].kind = kind;
	res[nres].p = p;
	nres++;
	return p;
}

static int release_one(enum rkind kind, void *p)
{
	switch (kind) {
	case R_QP:
		return ibv_destroy_qp(p);
	case R_CQ:
		return ibv_destroy_cq(p);
	case R_MR:
		return ibv_dereg_mr(p);
	case R_MW:
		return ibv_dealloc_mw(p);
	case R_PD:
		return ibv_dealloc_pd(p);
	case R_TD:
		return ibv_dealloc_td(p);
	case R_DM:
		return ibv_free_dm(p);
	case R_SRQ:
		return ibv_destroy_srq(p);
	case R_XRCD:
		return ibv_close_xrcd(p);
	case R_CH:
		return ibv_destroy_comp_channel(p);
	case R_CTX:
		return ibv_close_device(p);
	case R_MEM:
		free(p);
		return 0;
	case R_MAP:
		if (((struct mapping *)p)->p)
			munmap(((struct mapping *)p)->p, ((struct mapping *)p)->len);
		free(p);
		return 0;
	}
	return 0;
}

/*
 * Release one tracked resource ahead of the rest: 0, or the error of its
 * destroy call (then it stays tracked, for release_all() to try again).
 */
int release_early(void *p)
{
	int i, err;

	for (i = nres - 1; i >= 0 && res[i].p != p; i--)
		;
	if (i < 0)
		die("releasing an untracked resource");
	err = release_one(res[i].kind, p);
	if (!err)
		res[i].p = NULL;
	return err;
}

int release_all(void)
{
	int ret = 0, err;

	while (nres > 0) {
		nres--;
		if (!res[nres].p)
			continue;
		err = release_one(res[nres].kind, res[nres].p);
		if (err)
			ret = failf("destroying a %s: %s", rkind_name[res[nres].kind], estr(err));
	}
	return ret;
}

struct dev devs[2];
union ibv_gid unreach_gid;

static struct ibv_context *ctx_open(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	bool found = false;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list) {
		failf("ibv_get_device_list: %s", strerror(errno));
		return NULL;
	}
	for (i = 0; i < n && !found; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		found = true;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			failf("ibv_open_device(%s): %s", name, strerror(errno));
	}
	ibv_free_device_list(list);
	if (!found)
		failf("no RDMA device %s (or no provider for it)", name);
	return ctx;
}

static bool gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, pfx, sizeof(pfx));
}

const char *gid_str(const union ibv_gid *g)
{
	static char s[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, g->raw, s, sizeof(s));
	return s;
}

/* Use GID index @want, or (want < 0) the first RoCE v2 IPv4 GID. */
static int gid_pick(struct dev *d, int want)
{
	struct ibv_gid_entry e;
	int i, err;

	for (i = want < 0 ? 0 : want; i < d->port.gid_tbl_len; i++) {
		err = ibv_query_gid_ex(d->ctx, 1, i, &e, 0);
		if (err && want >= 0)
			return failf("%s: GID index %d: %s", d->name, i, estr(err));
		if (err || (want < 0 && (e.gid_type != IBV_GID_TYPE_ROCE_V2 || !gid_is_v4(&e.gid))))
			continue;
		CHECK(e.gid_type == IBV_GID_TYPE_ROCE_V2, "%s: GID index %d is not a RoCE v2 GID",
		      d->name, i);
		d->gid = e.gid;
		d->gidx = i;
		return 0;
	}
	return failf("%s: no RoCE v2 IPv4 GID (pass -g)", d->name);
}

int dev_open(struct dev *d, const char *name, int gidx)
{
	struct ibv_device_attr_ex ax = {};
	int err;

	d->name = name;
	d->ctx = track(R_CTX, ctx_open(name));
	if (!d->ctx)
		return -1;
	err = ibv_query_device(d->ctx, &d->attr);
	CHECK(!err, "ibv_query_device(%s): %s", name, estr(err));
	err = ibv_query_device_ex(d->ctx, NULL, &ax);
	CHECK(!err, "ibv_query_device_ex(%s): %s", name, estr(err));
	d->caps_ex = ax.device_cap_flags_ex;
	d->max_dm_size = ax.max_dm_size;
	err = ibv_query_port(d->ctx, 1, &d->port);
	CHECK(!err, "ibv_query_port(%s): %s", name, estr(err));
	CHECK(d->port.state == IBV_PORT_ACTIVE, "%s: port 1 is %s, not ACTIVE", name,
	      ibv_port_state_str(d->port.state));
	CHECK(d->port.link_layer == IBV_LINK_LAYER_ETHERNET, "%s: port 1 is not Ethernet", name);
	TRY(gid_pick(d, gidx));
	d->pd = track(R_PD, ibv_alloc_pd(d->ctx));
	CHECK(d->pd, "ibv_alloc_pd(%s): %s", name, strerror(errno));
	return 0;
}

/* The GID of a peer that does not exist. */
static int unreach_init(void)
{
	struct in6_addr a6;
	struct in_addr a4;

	unreach_gid = devs[0].gid;
	if (opt.unreach && inet_pton(AF_INET, opt.unreach, &a4) == 1) {
		memcpy(&unreach_gid.raw[12], &a4, 4);
		unreach_gid.raw[10] = unreach_gid.raw[11] = 0xff;
		memset(unreach_gid.raw, 0, 10);
	} else if (opt.unreach) {
		CHECK(inet_pton(AF_INET6, opt.unreach, &a6) == 1, "bad address for -u: %s", opt.unreach);
		memcpy(unreach_gid.raw, &a6, 16);
	} else {
		unreach_gid.raw[15] = unreach_gid.raw[15] == 254 ? 253 : 254;
	}
	return 0;
}

int devs_open(void)
{
	TRY(dev_open(&devs[0], opt.dev[0], opt.gidx[0]));
	TRY(dev_open(&devs[1], opt.dev[1], opt.gidx[1]));
	vlog("A: %s GID[%d] %s, B: %s GID[%d] %s", devs[0].name, devs[0].gidx, gid_str(&devs[0].gid),
	     devs[1].name, devs[1].gidx, gid_str(&devs[1].gid));
	return unreach_init();
}

bool has_atomics(void)
{
	return devs[0].attr.atomic_cap != IBV_ATOMIC_NONE &&
	       devs[1].attr.atomic_cap != IBV_ATOMIC_NONE;
}

static unsigned int remote_access(void)
{
	unsigned int a = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	return has_atomics() ? a | IBV_ACCESS_REMOTE_ATOMIC : a;
}

unsigned int mr_access_all(void)
{
	return IBV_ACCESS_LOCAL_WRITE | remote_access();
}

int min_int(int a, int b)
{
	return a < b ? a : b;
}

void conf_init(struct qp_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->cap.max_send_wr = 64;
	c->cap.max_recv_wr = 64;
	c->cap.max_send_sge = 1;
	c->cap.max_recv_sge = 1;
	c->cqe = 256;
	c->mtu = opt.mtu;
	c->timeout = opt.ack_timeout;
	c->retry_cnt = 7;
	c->rnr_retry = 7;
	c->min_rnr_timer = 12;
	c->access = remote_access();
	/* A's PSN wraps after 16 packets: every multi-packet case crosses it. */
	c->psn_a = 0xfffff0;
	c->psn_b = 0x5a5a5a;
}

struct ibv_cq *cq_new(struct dev *d, int cqe, struct ibv_comp_channel *ch)
{
	struct ibv_cq *cq = track(R_CQ, ibv_create_cq(d->ctx, cqe, NULL, ch, 0));

	if (!cq)
		failf("ibv_create_cq(%s, %d entries): %s", d->name, cqe, strerror(errno));
	return cq;
}

static int cap_check(const struct ibv_qp_cap *got, const struct ibv_qp_cap *req)
{
	CHECK(got->max_send_wr >= req->max_send_wr && got->max_recv_wr >= req->max_recv_wr &&
	      got->max_send_sge >= req->max_send_sge && got->max_recv_sge >= req->max_recv_sge &&
	      got->max_inline_data >= req->max_inline_data,
	      "QP capabilities (wr %u/%u, sge %u/%u, inline %u) are below the request (%u/%u, %u/%u, %u)",
	      got->max_send_wr, got->max_recv_wr, got->max_send_sge, got->max_recv_sge,
	      got->max_inline_data, req->max_send_wr, req->max_recv_wr, req->max_send_sge,
	      req->max_recv_sge, req->max_inline_data);
	return 0;
}

static uint64_t wr_api_ops(void)
{
	uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
		       IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		       IBV_QP_EX_WITH_RDMA_READ;

	if (has_atomics())
		ops |= IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	if (has_atomic_write())
		ops |= IBV_QP_EX_WITH_ATOMIC_WRITE;
	return ops;
}

static int qp_create_plain(struct ep *e, const struct qp_conf *c)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->scq,
		.recv_cq = e->rcq,
		.cap = c->cap,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = c->sig_all,
	};

	e->qp = track(R_QP, ibv_create_qp(e->d->pd, &ia));
	CHECK(e->qp, "ibv_create_qp(%s, RC): %s", e->d->name, strerror(errno));
	e->cap = ia.cap;
	return cap_check(&e->cap, &c->cap);
}

static int qp_create_ex(struct ep *e, const struct qp_conf *c)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = e->scq,
		.recv_cq = e->rcq,
		.cap = c->cap,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = c->sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = e->d->pd,
		.send_ops_flags = wr_api_ops(),
	};

	e->qp = track(R_QP, ibv_create_qp_ex(e->d->ctx, &ia));
	CHECK(e->qp, "ibv_create_qp_ex(%s, RC, ibv_wr_* ops 0x%llx): %s", e->d->name,
	      (unsigned long long)ia.send_ops_flags, strerror(errno));
	e->qpx = ibv_qp_to_qp_ex(e->qp);
	CHECK(e->qpx, "ibv_qp_to_qp_ex(%s) returned NULL", e->d->name);
	e->cap = ia.cap;
	return cap_check(&e->cap, &c->cap);
}

/* An end on @d, which is devs[side] or another context on the same device. */
int ep_create_on(struct ep *e, struct dev *d, int side, const struct qp_conf *c)
{
	memset(e, 0, sizeof(*e));
	e->d = d;
	e->psn = side ? c->psn_b : c->psn_a;
	if (c->events) {
		e->ch = track(R_CH, ibv_create_comp_channel(e->d->ctx));
		CHECK(e->ch, "ibv_create_comp_channel(%s): %s", e->d->name, strerror(errno));
	}
	e->scq = c->scq[side] ? c->scq[side] : cq_new(e->d, c->cqe, NULL);
	e->rcq = c->rcq[side] ? c->rcq[side] : cq_new(e->d, c->cqe, e->ch);
	if (!e->scq || !e->rcq)
		return -1;
	return c->wr_api ? qp_create_ex(e, c) : qp_create_plain(e, c);
}

int ep_create(struct ep *e, int side, const struct qp_conf *c)
{
	return ep_create_on(e, &devs[side], side, c);
}

static const char *const qps_names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

static const char *qps_name(enum ibv_qp_state s)
{
	return (unsigned int)s < ARRAY_SIZE(qps_names) ? qps_names[s] : "?";
}

int qp_modify(struct ep *e, struct ibv_qp_attr *a, int mask)
{
	int err = ibv_modify_qp(e->qp, a, mask);

	CHECK(!err, "ibv_modify_qp(%s QP %u to %s): %s", e->d->name, e->qp->qp_num,
	      qps_name(a->qp_state), estr(err));
	return 0;
}

/* READs/atomics outstanding: @want (0: up to 16), at most the device's. */
uint8_t rd_atom(int dev_max, uint8_t want)
{
	int lim = want ? want : 16;

	return dev_max < 0 ? 0 : dev_max > lim ? (uint8_t)lim : (uint8_t)dev_max;
}

int qp_to_init(struct ep *e, const struct qp_conf *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = c->access,
	};

	return qp_modify(e, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int qp_to_rtr(struct ep *e, const struct peer_info *pi, const struct qp_conf *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = c->mtu,
		.dest_qp_num = pi->qpn,
		.rq_psn = pi->psn,
		.max_dest_rd_atomic = rd_atom(e->d->attr.max_qp_rd_atom, c->rd_atom),
		.min_rnr_timer = c->min_rnr_timer,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = {
				.dgid = pi->gid,
				.sgid_index = (uint8_t)e->d->gidx,
				.hop_limit = 64,
			},
		},
	};

	return qp_modify(e, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

int qp_to_rts(struct ep *e, const struct qp_conf *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = c->timeout,
		.retry_cnt = c->retry_cnt,
		.rnr_retry = c->rnr_retry,
		.sq_psn = e->psn,
		.max_rd_atomic = rd_atom(e->d->attr.max_qp_init_rd_atom, c->rd_atom),
	};

	return qp_modify(e, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

int qp_to_err(struct ep *e)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	return qp_modify(e, &a, IBV_QP_STATE);
}

struct peer_info info_of(const struct ep *e)
{
	struct peer_info pi = { .qpn = e->qp->qp_num, .psn = e->psn, .gid = e->d->gid };

	return pi;
}

/* Where A sends: B, or with c->unreach a GID and a QPN nobody has. */
static struct peer_info a_target(const struct pair *p, const struct qp_conf *c)
{
	struct peer_info pi = info_of(&p->b);

	if (c->unreach) {
		pi.gid = unreach_gid;
		pi.qpn = BOGUS_QPN;
	}
	return pi;
}

int ep_connect(struct ep *e, const struct peer_info *pi, const struct qp_conf *c)
{
	TRY(qp_to_init(e, c));
	TRY(qp_to_rtr(e, pi, c));
	return qp_to_rts(e, c);
}

int pair_create(struct pair *p, const struct qp_conf *c)
{
	TRY(ep_create(&p->a, 0, c));
	return ep_create(&p->b, 1, c);
}

int pair_up(struct pair *p, const struct qp_conf *c)
{
	struct peer_info to_a, to_b;

	TRY(pair_create(p, c));
	to_a = info_of(&p->a);
	to_b = a_target(p, c);
	TRY(ep_connect(&p->b, &to_a, c));
	TRY(ep_connect(&p->a, &to_b, c));
	vlog("pair: A QP %u (PSN 0x%x) <-> B QP %u (PSN 0x%x), MTU %d", p->a.qp->qp_num, p->a.psn,
	     p->b.qp->qp_num, p->b.psn, 128 << c->mtu);
	return 0;
}

int expect_state(const struct ep *e, enum ibv_qp_state want, const char *what)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	int err;

	err = ibv_query_qp(e->qp, &a, IBV_QP_STATE, &ia);
	CHECK(!err, "%s: ibv_query_qp: %s", what, estr(err));
	CHECK(a.qp_state == want, "%s: QP %u is in state %s, expected %s", what, e->qp->qp_num,
	      qps_name(a.qp_state), qps_name(want));
	return 0;
}

/* The QP's capabilities as ibv_query_qp reports them. */
int query_cap(const struct ep *e, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	int err;

	err = ibv_query_qp(e->qp, &a, IBV_QP_CAP, &ia);
	CHECK(!err, "ibv_query_qp: %s", estr(err));
	*cap = ia.cap;
	return 0;
}

/*
 * The largest inline size a QP on @d accepts (0 if none): what the device
 * advertises, since no attribute of ibv_query_device does.  Only EINVAL
 * means "too much inline data"; any other failure fails the case rather
 * than passing for a device without inline data.
 */
int probe_inline(struct dev *d, uint32_t *max)
{
	static const uint32_t tries[] = { 4096, 1024, 512, 256, 128, 64, 32, 16, 8, 4, 1 };
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	size_t i;

	cq = cq_new(d, 4, NULL);
	if (!cq)
		return -1;
	*max = 0;
	for (i = 0; i < ARRAY_SIZE(tries) && !*max; i++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = ia.recv_cq = cq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = ia.cap.max_recv_wr = ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		ia.cap.max_inline_data = tries[i];
		qp = ibv_create_qp(d->pd, &ia);
		if (!qp) {
			CHECK(errno == EINVAL, "%s: ibv_create_qp with %u bytes of inline data: %s",
			      d->name, tries[i], strerror(errno));
			continue;
		}
		*max = ia.cap.max_inline_data;
		CHECK(*max >= tries[i], "%s: asked for %u bytes of inline data, got %u", d->name,
		      tries[i], *max);
		CHECK(!ibv_destroy_qp(qp), "ibv_destroy_qp: %s", strerror(errno));
	}
	vlog("%s: max_inline_data %u", d->name, *max);
	return 0;
}
