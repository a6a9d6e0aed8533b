// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ioctl.c - sroce_misuse: requests of the RDMA_VERBS_IOCTL ioctl, built
 * attribute by attribute, and extended write() commands.
 */

#include "misuse.h"

_Static_assert(offsetof(struct ioc, attr) == sizeof(struct ib_uverbs_ioctl_hdr),
	       "the attributes follow the header");

void ioc_init(struct ioc *c, uint16_t object, uint16_t method)
{
	memset(c, 0, sizeof(*c));
	c->hdr.length = sizeof(c->hdr);
	c->hdr.object_id = object;
	c->hdr.method_id = method;
	c->hdr.driver_id = SROCE_DRIVER_ID;
}

struct ib_uverbs_attr *ioc_add(struct ioc *c, uint16_t id, size_t len, uint64_t data)
{
	struct ib_uverbs_attr *a;

	if (c->hdr.num_attrs >= IOC_MAX_ATTRS)
		setup_die("too many ioctl attributes");
	a = &c->attr[c->hdr.num_attrs++];
	a->attr_id = id;
	a->len = (uint16_t)len;
	a->data = data;
	c->hdr.length = (uint16_t)(sizeof(c->hdr) + c->hdr.num_attrs * sizeof(*a));
	return a;
}

/* An input: inline when it fits in the data field (as ib_core reads it),
 * else a pointer to @p.
 */
struct ib_uverbs_attr *ioc_in(struct ioc *c, uint16_t id, const void *p, size_t len)
{
	struct ib_uverbs_attr *a = ioc_add(c, id, len, (uintptr_t)p);

	if (len <= sizeof(a->data)) {
		a->data = 0;
		memcpy(&a->data, p, len);
	}
	return a;
}

/* A constant (UVERBS_ATTR_CONST_IN: always 8 bytes inline). */
struct ib_uverbs_attr *ioc_const(struct ioc *c, uint16_t id, uint64_t v)
{
	return ioc_add(c, id, sizeof(v), v);
}

struct ib_uverbs_attr *ioc_u32(struct ioc *c, uint16_t id, uint32_t v)
{
	return ioc_in(c, id, &v, sizeof(v));
}

/* An output: always a pointer. */
struct ib_uverbs_attr *ioc_out(struct ioc *c, uint16_t id, void *p, size_t len)
{
	return ioc_add(c, id, len, (uintptr_t)p);
}

/* An object (IDR or FD attribute): its handle or fd in data, length 0. */
struct ib_uverbs_attr *ioc_obj(struct ioc *c, uint16_t id, int64_t h)
{
	return ioc_add(c, id, 0, (uint64_t)h);
}

struct ib_uverbs_attr *ioc_find(struct ioc *c, uint16_t id)
{
	unsigned int i;

	for (i = 0; i < c->hdr.num_attrs; i++)
		if (c->attr[i].attr_id == id)
			return &c->attr[i];
	setup_die("no ioctl attribute %#x", id);
	return NULL;
}

/* Take attribute @id out of the request. */
void ioc_drop(struct ioc *c, uint16_t id)
{
	struct ib_uverbs_attr *a = ioc_find(c, id);

	memmove(a, a + 1, (size_t)(&c->attr[c->hdr.num_attrs] - (a + 1)) * sizeof(*a));
	c->hdr.num_attrs--;
	c->hdr.length = (uint16_t)(c->hdr.length - sizeof(*a));
}

/* The request as built; 0 or -errno. */
int ioc_send(int fd, struct ioc *c)
{
	return ioctl(fd, RDMA_VERBS_IOCTL, &c->hdr) ? -errno : 0;
}

static void ioc_uhw(struct ioc *c, const struct uhw *u)
{
	if (u && u->in)
		ioc_in(c, UVERBS_ATTR_UHW_IN, u->in, u->inlen);
	if (u && u->out)
		ioc_out(c, UVERBS_ATTR_UHW_OUT, u->out, u->outlen);
}

/* DESTROY of object @obj by method @method: handle attribute 0 and, if
 * @resp, the response as attribute 1 (the layout of every destroy method).
 */
int ioc_destroy(struct ctx *x, uint16_t obj, uint16_t method, int64_t h,
		void *resp, size_t resplen)
{
	struct ioc c;

	ioc_init(&c, obj, method);
	ioc_obj(&c, 0, h);
	if (resp)
		ioc_out(&c, 1, resp, resplen);
	return ioc_send(x->fd, &c);
}

int ioc_cq_destroy(struct ctx *x, int64_t h)
{
	struct ib_uverbs_destroy_cq_resp resp;

	return ioc_destroy(x, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY, h, &resp, sizeof(resp));
}

int ioc_pd_destroy(struct ctx *x, int64_t h)
{
	return ioc_destroy(x, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, h, NULL, 0);
}

/* How many objects of type @obj the context holds (INFO_HANDLES), or -errno. */
int ioc_count(struct ctx *x, uint16_t obj)
{
	uint32_t list[64], total = 0;
	struct ioc c;
	int err;

	ioc_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INFO_HANDLES);
	ioc_const(&c, UVERBS_ATTR_INFO_OBJECT_ID, obj);
	ioc_out(&c, UVERBS_ATTR_INFO_TOTAL_HANDLES, &total, sizeof(total));
	ioc_out(&c, UVERBS_ATTR_INFO_HANDLES_LIST, list, sizeof(list));
	err = ioc_send(x->fd, &c);
	return err ? err : (int)total;
}

/* QUERY_PORT of @port into @resp, built (not sent). */
void ioc_port(struct ioc *c, uint64_t port, struct ib_uverbs_query_port_resp_ex *resp)
{
	ioc_init(c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT);
	ioc_const(c, UVERBS_ATTR_QUERY_PORT_PORT_NUM, port);
	ioc_out(c, UVERBS_ATTR_QUERY_PORT_RESP, resp, sizeof(*resp));
}

/* GET_CONTEXT by ioctl on the fresh file @fd, with driver data @u. */
int ioc_get_context(int fd, const struct uhw *u, uint32_t *num_comp)
{
	struct ioc c;

	ioc_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT);
	ioc_out(&c, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, num_comp, sizeof(*num_comp));
	ioc_uhw(&c, u);
	return ioc_send(fd, &c);
}

void ioc_cq_build(struct ioc_cq *q, uint32_t cqe)
{
	ioc_init(&q->c, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE);
	q->user_handle = 0xc0ffee;
	q->resp_cqe = 0;
	memset(&q->drv, 0, sizeof(q->drv));
	ioc_obj(&q->c, UVERBS_ATTR_CREATE_CQ_HANDLE, 0);
	ioc_u32(&q->c, UVERBS_ATTR_CREATE_CQ_CQE, cqe);
	ioc_in(&q->c, UVERBS_ATTR_CREATE_CQ_USER_HANDLE, &q->user_handle, sizeof(q->user_handle));
	ioc_u32(&q->c, UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 0);
	ioc_out(&q->c, UVERBS_ATTR_CREATE_CQ_RESP_CQE, &q->resp_cqe, sizeof(q->resp_cqe));
	ioc_out(&q->c, UVERBS_ATTR_UHW_OUT, &q->drv, sizeof(q->drv));
}

uint32_t ioc_cq_handle(struct ioc_cq *q)
{
	return (uint32_t)ioc_find(&q->c, UVERBS_ATTR_CREATE_CQ_HANDLE)->data;
}

void ioc_qp_build(struct ioc_qp *q, uint32_t type, uint32_t pd, uint32_t cq)
{
	ioc_init(&q->c, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE);
	memset(&q->cap, 0, sizeof(q->cap));
	q->cap.max_send_wr = default_caps.send_wr;
	q->cap.max_recv_wr = default_caps.recv_wr;
	q->cap.max_send_sge = default_caps.send_sge;
	q->cap.max_recv_sge = default_caps.recv_sge;
	q->cap.max_inline_data = default_caps.inline_data;
	memset(&q->resp_cap, 0, sizeof(q->resp_cap));
	q->qpn = 0;
	memset(&q->drv, 0, sizeof(q->drv));
	ioc_obj(&q->c, UVERBS_ATTR_CREATE_QP_HANDLE, 0);
	ioc_obj(&q->c, UVERBS_ATTR_CREATE_QP_PD_HANDLE, pd);
	ioc_obj(&q->c, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, cq);
	ioc_obj(&q->c, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, cq);
	ioc_const(&q->c, UVERBS_ATTR_CREATE_QP_USER_HANDLE, 0x9e0);
	ioc_in(&q->c, UVERBS_ATTR_CREATE_QP_CAP, &q->cap, sizeof(q->cap));
	ioc_const(&q->c, UVERBS_ATTR_CREATE_QP_TYPE, type);
	ioc_out(&q->c, UVERBS_ATTR_CREATE_QP_RESP_CAP, &q->resp_cap, sizeof(q->resp_cap));
	ioc_out(&q->c, UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, &q->qpn, sizeof(q->qpn));
	ioc_out(&q->c, UVERBS_ATTR_UHW_OUT, &q->drv, sizeof(q->drv));
}

uint32_t ioc_qp_handle(struct ioc_qp *q)
{
	return (uint32_t)ioc_find(&q->c, UVERBS_ATTR_CREATE_QP_HANDLE)->data;
}

/* QP_DESTROY; the events the core reported for the QP into *@events. */
int ioc_qp_destroy(struct ctx *x, int64_t h, uint32_t *events)
{
	struct ib_uverbs_destroy_qp_resp resp = {};
	int err = ioc_destroy(x, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_DESTROY, h, &resp,
			      sizeof(resp));

	if (events)
		*events = resp.events_reported;
	return err;
}

void ioc_srq_build(struct ioc_srq *q, uint32_t pd)
{
	ioc_init(&q->c, UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_CREATE);
	q->resp_wr = 0;
	q->resp_sge = 0;
	memset(&q->drv, 0, sizeof(q->drv));
	ioc_obj(&q->c, UVERBS_ATTR_CREATE_SRQ_HANDLE, 0);
	ioc_obj(&q->c, UVERBS_ATTR_CREATE_SRQ_PD_HANDLE, pd);
	ioc_const(&q->c, UVERBS_ATTR_CREATE_SRQ_USER_HANDLE, 0x5e0);
	ioc_u32(&q->c, UVERBS_ATTR_CREATE_SRQ_MAX_WR, 16);
	ioc_u32(&q->c, UVERBS_ATTR_CREATE_SRQ_MAX_SGE, 2);
	ioc_u32(&q->c, UVERBS_ATTR_CREATE_SRQ_LIMIT, 0);
	ioc_const(&q->c, UVERBS_ATTR_CREATE_SRQ_TYPE, IB_UVERBS_SRQT_BASIC);
	ioc_out(&q->c, UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR, &q->resp_wr, sizeof(q->resp_wr));
	ioc_out(&q->c, UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE, &q->resp_sge, sizeof(q->resp_sge));
	ioc_out(&q->c, UVERBS_ATTR_UHW_OUT, &q->drv, sizeof(q->drv));
}

uint32_t ioc_srq_handle(struct ioc_srq *q)
{
	return (uint32_t)ioc_find(&q->c, UVERBS_ATTR_CREATE_SRQ_HANDLE)->data;
}

int ioc_srq_destroy(struct ctx *x, int64_t h)
{
	struct ib_uverbs_destroy_srq_resp resp;

	return ioc_destroy(x, UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_DESTROY, h, &resp,
			   sizeof(resp));
}

/* ASYNC_EVENT_ALLOC: a new async event file; its fd or -errno. */
int ioc_async_alloc(struct ctx *x)
{
	struct ioc c;
	int err;

	ioc_init(&c, UVERBS_OBJECT_ASYNC_EVENT, UVERBS_METHOD_ASYNC_EVENT_ALLOC);
	ioc_obj(&c, UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE, 0);
	err = ioc_send(x->fd, &c);
	return err ? err : (int)c.attr[0].data;
}

/*
 * The headers of extended command @command: @reqlen bytes of request,
 * @resplen of response at @resp, @drvlen bytes of driver request and
 * @drvout of driver response (all multiples of 8).
 */
struct ex_hdrs ex_hdrs(uint32_t command, size_t reqlen, void *resp, size_t resplen,
		       size_t drvlen, size_t drvout)
{
	struct ex_hdrs e = {
		.h = { .command = IB_USER_VERBS_CMD_FLAG_EXTENDED | command,
		       .in_words = (uint16_t)(reqlen / 8), .out_words = (uint16_t)(resplen / 8) },
		.x = { .response = (uintptr_t)resp, .provider_in_words = (uint16_t)(drvlen / 8),
		       .provider_out_words = (uint16_t)(drvout / 8) },
	};

	return e;
}

/* Write @e, then @req (@reqlen bytes, the core request and driver data
 * behind it), as one write(); 0 or -errno.
 */
int ex_write(int fd, const struct ex_hdrs *e, const void *req, size_t reqlen)
{
	uint8_t buf[1024];
	ssize_t n;

	if (sizeof(*e) + reqlen > sizeof(buf))
		setup_die("command too large");
	memcpy(buf, e, sizeof(*e));
	memcpy(buf + sizeof(*e), req, reqlen);
	n = write(fd, buf, sizeof(*e) + reqlen);
	if (n < 0)
		return -errno;
	return (size_t)n == sizeof(*e) + reqlen ? 0 : -EIO;
}

/* Extended command @command: request @req (no driver data), response at
 * @resp, @drvout bytes of driver response behind it.
 */
int cmd_ex(int fd, uint32_t command, const void *req, size_t reqlen, void *resp,
	   size_t resplen, size_t drvout)
{
	struct ex_hdrs e = ex_hdrs(command, reqlen, resp, resplen, 0, drvout);

	return ex_write(fd, &e, req, reqlen);
}

int ex_query_device(struct ctx *x, struct ib_uverbs_ex_query_device_resp *resp)
{
	struct ib_uverbs_ex_query_device q = {};

	memset(resp, 0, sizeof(*resp));
	return CMD_EX(x->fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, q, *resp, 0);
}

/* The device's max_cqe, from EX_QUERY_DEVICE. */
uint32_t max_cqe(struct ctx *x)
{
	struct ib_uverbs_ex_query_device_resp r;

	if (ex_query_device(x, &r))
		setup_die("EX_QUERY_DEVICE");
	return r.base.max_cqe;
}

/* EX_CREATE_QP of an RC QP with default caps: the request, to tamper with. */
struct ib_uverbs_ex_create_qp ex_qp_req(uint32_t pd, uint32_t cq)
{
	struct ib_uverbs_ex_create_qp c = {
		.pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq,
		.max_send_wr = default_caps.send_wr, .max_recv_wr = default_caps.recv_wr,
		.max_send_sge = default_caps.send_sge, .max_recv_sge = default_caps.recv_sge,
		.qp_type = QPT_RC,
	};

	return c;
}

int ex_qp_create(struct ctx *x, const struct ib_uverbs_ex_create_qp *c,
		 struct ex_qp_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	return cmd_ex(x->fd, IB_USER_VERBS_EX_CMD_CREATE_QP, c, sizeof(*c), &resp->core,
		      sizeof(resp->core), sizeof(resp->drv));
}

struct ib_uverbs_ex_create_cq ex_cq_req(uint32_t cqe)
{
	struct ib_uverbs_ex_create_cq c = { .cqe = cqe, .comp_channel = -1 };

	return c;
}

int ex_cq_create(struct ctx *x, const struct ib_uverbs_ex_create_cq *c,
		 struct ex_cq_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	return cmd_ex(x->fd, IB_USER_VERBS_EX_CMD_CREATE_CQ, c, sizeof(*c), &resp->core,
		      sizeof(resp->core), sizeof(resp->drv));
}
