// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cmd_ioctl.c - sroce_misuse: command cases through the ioctl ABI.
 */

#include "misuse.h"

/* ==== command cases: the ioctl ABI ================================================= */

/* Malformed ioctl headers, attributes, objects and methods (ib_core's parser). */
void c_ioctl_hdr(void)
{
	struct ib_uverbs_query_port_resp_ex pr;
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *two = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ib_uverbs_ioctl_hdr *edge;
	int fd = ctx_open_raw();
	struct ctx x;
	struct ioc c;

	if (two == MAP_FAILED)
		setup_die("mmap");
	munmap(two + pg, (size_t)pg);
	ioc_port(&c, 1, &pr);
	expect("QUERY_PORT before GET_CONTEXT", ioc_send(fd, &c), EINVAL);
	close(fd);
	x = ctx_open();
	expect("QUERY_PORT", ioc_send(x.fd, &c), 0);
	expect("another ioctl number",
	       ioctl(x.fd, _IOWR(RDMA_IOCTL_MAGIC, 2, struct ib_uverbs_ioctl_hdr), &c.hdr) ? -errno : 0,
	       ENOTTY);
	expect("header at an unmapped address",
	       ioctl(x.fd, RDMA_VERBS_IOCTL, (void *)0x10) ? -errno : 0, EFAULT);
	expect("header at a kernel address",
	       ioctl(x.fd, RDMA_VERBS_IOCTL, (void *)KERNEL_ADDR) ? -errno : 0, EFAULT);
	/* the attributes run onto an unmapped page */
	edge = (void *)(two + pg - sizeof(*edge));
	memcpy(edge, &c.hdr, sizeof(*edge));
	expect("attributes at an unmapped address",
	       ioctl(x.fd, RDMA_VERBS_IOCTL, edge) ? -errno : 0, EFAULT);

#define HDR(what, want, ...) do {						\
		ioc_port(&c, 1, &pr);						\
		__VA_ARGS__;							\
		expect(what, ioc_send(x.fd, &c), want);				\
	} while (0)
	HDR("length one byte long", EINVAL, c.hdr.length++);
	HDR("length one attribute short", EINVAL, c.hdr.length -= sizeof(c.attr[0]));
	HDR("num_attrs 0xffff", EINVAL, c.hdr.num_attrs = 0xffff);
	HDR("length past a page, num_attrs to match", EINVAL,
	    c.hdr.num_attrs = (uint16_t)(pg / sizeof(c.attr[0]));
	    c.hdr.length = (uint16_t)(sizeof(c.hdr) + c.hdr.num_attrs * sizeof(c.attr[0])));
	HDR("reserved1 set", EPROTONOSUPPORT, c.hdr.reserved1 = 1);
	HDR("reserved2 set", EPROTONOSUPPORT, c.hdr.reserved2 = 1);
	HDR("another driver's id", EINVAL, c.hdr.driver_id = 4);
	HDR("unknown object 0x777", EPROTONOSUPPORT, c.hdr.object_id = 0x777);
	HDR("unknown device method 99", EPROTONOSUPPORT, c.hdr.method_id = 99);
	/* objects sroce has no verbs for are not in its tree at all */
	HDR("WQ_CREATE (no WQs)", EPROTONOSUPPORT, c.hdr.object_id = UVERBS_OBJECT_WQ;
	    c.hdr.method_id = UVERBS_METHOD_WQ_CREATE);
	HDR("FLOW_ACTION_ESP_CREATE (no flow actions)", EPROTONOSUPPORT,
	    c.hdr.object_id = UVERBS_OBJECT_FLOW_ACTION;
	    c.hdr.method_id = UVERBS_METHOD_FLOW_ACTION_ESP_CREATE);
	HDR("COUNTERS_CREATE (no counters objects)", EPROTONOSUPPORT,
	    c.hdr.object_id = UVERBS_OBJECT_COUNTERS; c.hdr.method_id = UVERBS_METHOD_COUNTERS_CREATE);
	HDR("unknown optional attribute (ignored)", 0, ioc_const(&c, 0x99, 7));
	HDR("unknown mandatory attribute", EPROTONOSUPPORT,
	    ioc_const(&c, 0x99, 7)->flags = UVERBS_ATTR_F_MANDATORY);
	HDR("unknown flag bits on an attribute (ignored)", 0,
	    ioc_find(&c, UVERBS_ATTR_QUERY_PORT_RESP)->flags = 0xfff0);
	HDR("an attribute twice", EINVAL, ioc_const(&c, UVERBS_ATTR_QUERY_PORT_PORT_NUM, 1));
	HDR("a mandatory attribute left out", EINVAL, ioc_drop(&c, UVERBS_ATTR_QUERY_PORT_RESP));
	HDR("no attributes", EINVAL, c.hdr.num_attrs = 0; c.hdr.length = sizeof(c.hdr));
	HDR("attribute reserved field set", EINVAL,
	    ioc_find(&c, UVERBS_ATTR_QUERY_PORT_RESP)->attr_data.reserved = 1);
	HDR("constant of 4 bytes", EINVAL, ioc_find(&c, UVERBS_ATTR_QUERY_PORT_PORT_NUM)->len = 4);
	HDR("constant of 16 bytes", EINVAL, ioc_find(&c, UVERBS_ATTR_QUERY_PORT_PORT_NUM)->len = 16);
	HDR("response shorter than the minimum", EINVAL,
	    ioc_find(&c, UVERBS_ATTR_QUERY_PORT_RESP)->len = 8);
	HDR("response at an unmapped address", EFAULT,
	    ioc_find(&c, UVERBS_ATTR_QUERY_PORT_RESP)->data = 0x10);
	HDR("response at a kernel address", EFAULT,
	    ioc_find(&c, UVERBS_ATTR_QUERY_PORT_RESP)->data = KERNEL_ADDR);
	HDR("response on the edge of an unmapped page", EFAULT,
	    ioc_find(&c, UVERBS_ATTR_QUERY_PORT_RESP)->data = (uintptr_t)(two + pg - 8));
#undef HDR
	ctx_close(&x);
	munmap(two, (size_t)pg);
}

/* A GID index of the port whose entry is empty (zero in sysfs), or -1. */
static int gid_empty_index(uint32_t tbl_len)
{
	char path[512], line[128];
	int i;

	for (i = (int)tbl_len - 1; i >= 0; i--) {
		FILE *f;
		bool zero;

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gids/%d", dev_name, i);
		f = fopen(path, "r");
		if (!f)
			continue;
		zero = fgets(line, sizeof(line), f) &&
		       !strncmp(line, "0000:0000:0000:0000:0000:0000:0000:0000", 39);
		fclose(f);
		if (zero)
			return i;
	}
	return -1;
}

/* GET_CONTEXT by ioctl with bad driver data; device, port and GID queries. */
void c_ioctl_device(void)
{
	struct sroce_alloc_ucontext_req req = { .provider_abi = SROCE_UVERBS_ABI_VERSION };
	struct sroce_alloc_ucontext_resp resp;
	struct uhw u = { &req, sizeof(req), &resp, sizeof(resp) };
	uint32_t long_req[4] = { SROCE_UVERBS_ABI_VERSION, 0, 0, 9 }, ncomp = 0, pd;
	struct ib_uverbs_query_port_resp_ex pr;
	struct ib_uverbs_gid_entry ge, tbl[16];
	uint64_t nent;
	struct ioc c;
	struct ctx x = { .fd = ctx_open_raw(), .async_fd = -1 };
	int empty;
	size_t i;

	req.provider_abi = 99;
	expect("GET_CONTEXT, unknown provider ABI", ioc_get_context(x.fd, &u, &ncomp), EINVAL);
	req.provider_abi = SROCE_UVERBS_ABI_VERSION;
	req.reserved = 1;
	expect("GET_CONTEXT, reserved field set", ioc_get_context(x.fd, &u, &ncomp), EINVAL);
	req.reserved = 0;
	u.in = long_req;
	u.inlen = sizeof(long_req);
	expect("GET_CONTEXT, longer request, unknown bytes set", ioc_get_context(x.fd, &u, &ncomp),
	       EOPNOTSUPP);
	u.in = (void *)0x10;
	expect("GET_CONTEXT, driver request at an unmapped address",
	       ioc_get_context(x.fd, &u, &ncomp), EFAULT);
	u.in = &req;
	u.inlen = sizeof(req);
	u.out = (void *)0x20;
	expect("GET_CONTEXT, driver response at an unmapped address",
	       ioc_get_context(x.fd, &u, &ncomp), EFAULT);
	u.out = &resp;
	expect("GET_CONTEXT, NUM_COMP_VECTORS at an unmapped address",
	       ioc_get_context(x.fd, &u, (uint32_t *)0x30), EFAULT);
	memset(&resp, 0xee, sizeof(resp));
	expect("GET_CONTEXT", ioc_get_context(x.fd, &u, &ncomp), 0);
	if (!case_failed && (resp.abi_version != SROCE_UVERBS_ABI_VERSION || !ncomp))
		bad("GET_CONTEXT answered abi_version %u, %u vectors", resp.abi_version, ncomp);
	expect("GET_CONTEXT twice", ioc_get_context(x.fd, &u, &ncomp), EINVAL);
	/* the context made by ioctl serves write() commands and ioctl destroys */
	expect("ALLOC_PD on it", pd_alloc(&x, &pd), 0);
	expect("PD_DESTROY", ioc_pd_destroy(&x, pd), 0);
	close(x.fd);

	x = ctx_open();
#define PORT(what, want, port) do {						\
		ioc_port(&c, port, &pr);					\
		expect(what, ioc_send(x.fd, &c), want);				\
	} while (0)
	PORT("QUERY_PORT port 0", EINVAL, 0);
	PORT("QUERY_PORT port 2", EINVAL, 2);
	PORT("QUERY_PORT port 255", EINVAL, 255);
	PORT("QUERY_PORT port 256 (not a u8)", EINVAL, 256);
	PORT("QUERY_PORT port 2^32 + 1", EINVAL, (1ull << 32) + 1);
	memset(&pr, 0, sizeof(pr));
	PORT("QUERY_PORT port 1", 0, 1);
	if (!case_failed && (pr.legacy_resp.gid_tbl_len <= (uint32_t)gid_index ||
			     pr.legacy_resp.link_layer != 2 /* Ethernet */))
		bad("QUERY_PORT: gid_tbl_len %u link_layer %u", pr.legacy_resp.gid_tbl_len,
		    pr.legacy_resp.link_layer);
#undef PORT
	/* QUERY_CONTEXT, with sroce's attribute (what GET_CONTEXT said) */
	ioc_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT);
	ncomp = 0;
	ioc_out(&c, UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, &ncomp, sizeof(ncomp));
	expect("QUERY_CONTEXT", ioc_send(x.fd, &c), 0);
	if (!case_failed && !ncomp)
		bad("QUERY_CONTEXT answered 0 completion vectors");
	memset(&resp, 0xee, sizeof(resp));
	ioc_out(&c, SROCE_ATTR_QUERY_CONTEXT_RESP, &resp, sizeof(resp));
	expect("QUERY_CONTEXT with the driver response", ioc_send(x.fd, &c), 0);
	if (!case_failed && (resp.abi_version != SROCE_UVERBS_ABI_VERSION ||
			     !(resp.features & SROCE_FEATURE_DM) || resp.reserved))
		bad("QUERY_CONTEXT answered abi_version %u, features 0x%x, reserved 0x%llx",
		    resp.abi_version, resp.features, (unsigned long long)resp.reserved);
	ioc_find(&c, SROCE_ATTR_QUERY_CONTEXT_RESP)->len = 8;
	expect("QUERY_CONTEXT, driver response too short", ioc_send(x.fd, &c), EINVAL);
	ioc_find(&c, SROCE_ATTR_QUERY_CONTEXT_RESP)->len = sizeof(resp);
	ioc_find(&c, SROCE_ATTR_QUERY_CONTEXT_RESP)->data = 0x40;
	expect("QUERY_CONTEXT, driver response at an unmapped address", ioc_send(x.fd, &c),
	       EFAULT);

#define GIDE(what, want, port, index, ...) do {				\
		ioc_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_ENTRY); \
		ioc_const(&c, UVERBS_ATTR_QUERY_GID_ENTRY_PORT, port);		\
		ioc_const(&c, UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX, index);	\
		ioc_u32(&c, UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS, 0);		\
		ioc_out(&c, UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY, &ge, sizeof(ge)); \
		__VA_ARGS__;							\
		expect(what, ioc_send(x.fd, &c), want);				\
	} while (0)
	GIDE("QUERY_GID_ENTRY port 0", EINVAL, 0, (uint64_t)gid_index);
	GIDE("QUERY_GID_ENTRY port 2", EINVAL, 2, (uint64_t)gid_index);
	GIDE("QUERY_GID_ENTRY index past the table", EINVAL, 1, pr.legacy_resp.gid_tbl_len);
	GIDE("QUERY_GID_ENTRY index -1", EINVAL, 1, 0xffffffffu);
	GIDE("QUERY_GID_ENTRY index 2^32 (not a u32)", EINVAL, 1, 1ull << 32);
	empty = gid_empty_index(pr.legacy_resp.gid_tbl_len);
	if (empty >= 0)
		GIDE("QUERY_GID_ENTRY of an empty entry", ENODATA, 1, (uint64_t)empty);
	GIDE("QUERY_GID_ENTRY flags 1", EINVAL, 1, (uint64_t)gid_index,
	     ioc_find(&c, UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS)->data = 1);
	GIDE("QUERY_GID_ENTRY flags of 2 bytes", EINVAL, 1, (uint64_t)gid_index,
	     ioc_find(&c, UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS)->len = 2);
	GIDE("QUERY_GID_ENTRY flags of 6 bytes", EINVAL, 1, (uint64_t)gid_index,
	     ioc_find(&c, UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS)->len = 6);
	GIDE("QUERY_GID_ENTRY entry too small", EINVAL, 1, (uint64_t)gid_index,
	     ioc_find(&c, UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY)->len = 8);
	GIDE("QUERY_GID_ENTRY entry at an unmapped address", EFAULT, 1, (uint64_t)gid_index,
	     ioc_find(&c, UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY)->data = 0x40);
	memset(&ge, 0, sizeof(ge));
	GIDE("QUERY_GID_ENTRY", 0, 1, (uint64_t)gid_index);
	if (!case_failed && (memcmp(ge.gid, gid, 16) || ge.gid_index != (uint32_t)gid_index ||
			     ge.port_num != 1 || !ge.netdev_ifindex))
		bad("QUERY_GID_ENTRY answered another entry (index %u port %u)", ge.gid_index,
		    ge.port_num);
#undef GIDE

#define GIDT(what, want, esize, ...) do {					\
		ioc_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_TABLE); \
		ioc_const(&c, UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE, esize);	\
		ioc_out(&c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES, tbl, sizeof(tbl)); \
		ioc_out(&c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES, &nent, sizeof(nent)); \
		__VA_ARGS__;							\
		expect(what, ioc_send(x.fd, &c), want);				\
	} while (0)
	GIDT("QUERY_GID_TABLE entry size 0", EINVAL, 0);
	GIDT("QUERY_GID_TABLE entry size 2^40", EINVAL, 1ull << 40);
	GIDT("QUERY_GID_TABLE entries not a multiple of the size", EINVAL, sizeof(tbl[0]),
	     ioc_find(&c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES)->len = 40);
	GIDT("QUERY_GID_TABLE no room for entries", EINVAL, sizeof(tbl[0]),
	     ioc_find(&c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES)->len = 0);
	GIDT("QUERY_GID_TABLE flags 1", EINVAL, sizeof(tbl[0]),
	     ioc_u32(&c, UVERBS_ATTR_QUERY_GID_TABLE_FLAGS, 1));
	GIDT("QUERY_GID_TABLE entries at an unmapped address", EFAULT, sizeof(tbl[0]),
	     ioc_find(&c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES)->data = 0x40);
	GIDT("QUERY_GID_TABLE entries at a kernel address", EFAULT, sizeof(tbl[0]),
	     ioc_find(&c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES)->data = KERNEL_ADDR);
	nent = 0;
	GIDT("QUERY_GID_TABLE", 0, sizeof(tbl[0]));
	for (i = 0; i < nent && i < 16; i++)
		if (!memcmp(tbl[i].gid, gid, 16))
			break;
	if (!case_failed && (!nent || nent > 16 || i == nent))
		bad("QUERY_GID_TABLE: %llu entries, none the GID", (unsigned long long)nent);
#undef GIDT

	ioc_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INFO_HANDLES);
	ioc_const(&c, UVERBS_ATTR_INFO_OBJECT_ID, 0x777);
	ioc_out(&c, UVERBS_ATTR_INFO_HANDLES_LIST, tbl, sizeof(tbl));
	expect("INFO_HANDLES of an unknown object", ioc_send(x.fd, &c), ENOENT);
	ioc_find(&c, UVERBS_ATTR_INFO_OBJECT_ID)->data = UVERBS_OBJECT_PD;
	ioc_find(&c, UVERBS_ATTR_INFO_HANDLES_LIST)->len = 6;
	expect("INFO_HANDLES list not a multiple of 4", ioc_send(x.fd, &c), EINVAL);
	expect("INFO_HANDLES of PDs", ioc_count(&x, UVERBS_OBJECT_PD), 0);
	ctx_close(&x);
}

/* CQ_CREATE by ioctl: driver data of every wrong shape, bad sizes, flags,
 * channels; destroy by ioctl twice, of the wrong type, while in use.
 */
void c_ioctl_cq(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x), maxcqe = max_cqe(&x), zero[8] = {}, junk[8] = { [7] = 1 };
	struct ioc_cq q;
	struct qp qp;
	struct cq cq;
	uint32_t h;

#define ICQ(what, want, cqe, ...) do {						\
		ioc_cq_build(&q, cqe);						\
		__VA_ARGS__;							\
		expect(what, ioc_send(x.fd, &q.c), want);			\
	} while (0)
	ICQ("0 entries", EINVAL, 0);
	ICQ("max_cqe + 1 entries", EINVAL, maxcqe + 1);
	ICQ("2^31 entries", EINVAL, 1u << 31);
	ICQ("-1 entries", EINVAL, 0xffffffffu);
	ICQ("CQE attribute of 8 bytes", EINVAL, 4, ioc_find(&q.c, UVERBS_ATTR_CREATE_CQ_CQE)->len = 8);
	ICQ("vector 1000", EINVAL, 4, ioc_find(&q.c, UVERBS_ATTR_CREATE_CQ_COMP_VECTOR)->data = 1000);
	/* TIMESTAMP_COMPLETION is taken: a CQ with timestamps (rc's cases). */
	ICQ("flag IGNORE_OVERRUN", EOPNOTSUPP, 4,
	    ioc_u32(&q.c, UVERBS_ATTR_CREATE_CQ_FLAGS, IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN));
	ICQ("unknown flag 1 << 5", EINVAL, 4, ioc_u32(&q.c, UVERBS_ATTR_CREATE_CQ_FLAGS, 1u << 5));
	ICQ("channel fd 1000", EBADF, 4, ioc_obj(&q.c, UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, 1000));
	ICQ("channel that is stdin", EBADF, 4, ioc_obj(&q.c, UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, 0));
	ICQ("channel that is the uverbs file", EBADF, 4,
	    ioc_obj(&q.c, UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, x.fd));
	ICQ("channel -1", EBADF, 4, ioc_obj(&q.c, UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, -1));
	ICQ("async event fd that is stdin", EBADF, 4,
	    ioc_obj(&q.c, UVERBS_ATTR_CREATE_CQ_EVENT_FD, 0));
	ICQ("handle attribute with a length", EINVAL, 4,
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_CQ_HANDLE)->len = 4);
	ICQ("response CQE left out", EINVAL, 4, ioc_drop(&q.c, UVERBS_ATTR_CREATE_CQ_RESP_CQE));
	/* The request is struct sroce_create_cq_req; bytes past it unknown. */
	ICQ("driver request with its reserved field set", EINVAL, 4,
	    ioc_in(&q.c, UVERBS_ATTR_UHW_IN, junk + 6, 8));
	ICQ("driver request of 32 bytes, the last non-zero", EOPNOTSUPP, 4,
	    ioc_in(&q.c, UVERBS_ATTR_UHW_IN, junk, sizeof(junk)));
	ICQ("driver request at an unmapped address", EFAULT, 4,
	    ioc_add(&q.c, UVERBS_ATTR_UHW_IN, 32, 0x10));
	ICQ("driver response at an unmapped address", EFAULT, 4,
	    ioc_find(&q.c, UVERBS_ATTR_UHW_OUT)->data = 0x20);
	ICQ("driver response at a kernel address", EFAULT, 4,
	    ioc_find(&q.c, UVERBS_ATTR_UHW_OUT)->data = KERNEL_ADDR);
	/* the core copies the CQE count out after sroce made the CQ: the CQ
	 * is destroyed again, and its handle never appears
	 */
	ICQ("response CQE at an unmapped address", EFAULT, 4,
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_CQ_RESP_CQE)->data = 0x30);
	expect("no CQ left behind by the refused creates", ioc_count(&x, UVERBS_OBJECT_CQ), 0);

	/* accepted shapes: zero driver request, short or no driver response */
	ICQ("driver request of 32 zero bytes", 0, 4, ioc_in(&q.c, UVERBS_ATTR_UHW_IN, zero, sizeof(zero)));
	expect("CQ_DESTROY", ioc_cq_destroy(&x, ioc_cq_handle(&q)), 0);
	ICQ("driver response of 8 bytes", 0, 4, ioc_find(&q.c, UVERBS_ATTR_UHW_OUT)->len = 8;
	    memset(&q.drv, 0xee, sizeof(q.drv)));
	if (!case_failed && q.drv.ring.num_slots != 0xeeeeeeeeu)
		bad("the kernel wrote past an 8-byte driver response");
	expect("CQ_DESTROY", ioc_cq_destroy(&x, ioc_cq_handle(&q)), 0);
	ICQ("no driver response", 0, 4, ioc_drop(&q.c, UVERBS_ATTR_UHW_OUT));
	expect("CQ_DESTROY", ioc_cq_destroy(&x, ioc_cq_handle(&q)), 0);

	ICQ("a good CQ", 0, 5);
	h = ioc_cq_handle(&q);
	/* 5 asked: the power of two above, less one, and a slot more. */
	if (!case_failed && (q.resp_cqe != 7 || q.drv.ring.num_slots != 8))
		bad("CQ_CREATE: %u entries, a ring of %u", q.resp_cqe, q.drv.ring.num_slots);
	memset(&cq, 0, sizeof(cq));
	cq.handle = h;
	cq.info = q.drv.ring;
	if (ring_map(&x, &cq.info, &cq.ring))
		bad("mmap of the ioctl CQ's ring: %s", strerror(errno));
	qp = qp_new(&x, QPT_RC, pd, h, h, -1);
	expect("CQ_DESTROY while a QP uses it", ioc_cq_destroy(&x, h), EBUSY);
	expect("CQ_DESTROY of the QP's handle", ioc_cq_destroy(&x, qp.handle), EINVAL);
	expect("CQ_DESTROY of the PD's handle", ioc_cq_destroy(&x, pd), EINVAL);
	expect("CQ_DESTROY of a bad handle", ioc_cq_destroy(&x, BAD_HANDLE), ENOENT);
	expect("CQ_DESTROY of handle -1", ioc_cq_destroy(&x, -1), EINVAL);
	expect("CQ_DESTROY without a response", ioc_destroy(&x, UVERBS_OBJECT_CQ,
	       UVERBS_METHOD_CQ_DESTROY, h, NULL, 0), EINVAL);
	expect("DESTROY_QP", qp_destroy(&x, qp.handle), 0);
	expect("CQ_DESTROY", ioc_cq_destroy(&x, h), 0);
	expect("CQ_DESTROY twice", ioc_cq_destroy(&x, h), ENOENT);
	expect("REQ_NOTIFY_CQ after an ioctl destroy", cq_arm(&x, h), ENOENT);
	expect("RESIZE_CQ after an ioctl destroy", cq_resize(&x, h, 16, NULL), ENOENT);
	expect("DESTROY_CQ (write) after an ioctl destroy", cq_destroy(&x, h), ENOENT);
	expect("no CQ left", ioc_count(&x, UVERBS_OBJECT_CQ), 0);
	if (cq.ring.base) {
		memset(cq.ring.base, 0x5a, cq.ring.size);
		munmap(cq.ring.base, cq.ring.size);
	}
#undef ICQ
	ctx_close(&x);
}

/* The struct qp of a QP made by QP_CREATE, its rings mapped. */
static struct qp ioc_qp_take(struct ctx *x, struct ioc_qp *q, uint32_t type)
{
	struct qp qp;

	memset(&qp, 0, sizeof(qp));
	qp.handle = ioc_qp_handle(q);
	qp.qpn = q->qpn;
	qp.type = type;
	qp.drv = q->drv;
	qp.max_send_sge = q->resp_cap.max_send_sge;
	qp.max_recv_sge = q->resp_cap.max_recv_sge;
	qp.max_inline = q->resp_cap.max_inline_data;
	if (ring_map(x, &qp.drv.sq, &qp.sq) || ring_map(x, &qp.drv.rq, &qp.rq))
		setup_die("mmap of the ioctl QP's rings: %s", strerror(errno));
	return qp;
}

/* QP_CREATE by ioctl: every attribute wrong in turn, then a QP that works. */
void c_ioctl_qp(void)
{
	struct world w;
	struct ib_uverbs_ex_query_device_resp r;
	uint32_t zero[8] = {}, junk[8] = { [7] = 1 }, one = 1, pd, cq, h;
	struct srq srq;
	struct ioc_qp q;
	struct qp qp;

	world_open(&w, QPT_RC);
	pd = w.pd;
	cq = w.ca.handle;
	if (ex_query_device(&w.x, &r))
		setup_die("EX_QUERY_DEVICE");
	srq = srq_new(&w.x, pd);

#define IQP(what, want, type, ...) do {						\
		ioc_qp_build(&q, type, pd, cq);					\
		__VA_ARGS__;							\
		expect(what, ioc_send(w.x.fd, &q.c), want);			\
	} while (0)
	IQP("type 0 (SMI)", EINVAL, 0);
	IQP("type 1 (GSI)", EINVAL, 1);
	IQP("type 7", EINVAL, 7);
	IQP("type 0x80", EINVAL, 0x80);
	IQP("type RAW_PACKET", EOPNOTSUPP, IB_UVERBS_QPT_RAW_PACKET);
	IQP("type XRC_TGT with a PD and CQs", EINVAL, IB_UVERBS_QPT_XRC_TGT);
	IQP("type DRIVER", EOPNOTSUPP, IB_UVERBS_QPT_DRIVER);
	IQP("type attribute of 4 bytes", EINVAL, QPT_RC,
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_TYPE)->len = 4);
	IQP("no PD", ENOENT, QPT_RC, ioc_drop(&q.c, UVERBS_ATTR_CREATE_QP_PD_HANDLE));
	IQP("no send CQ", ENOENT, QPT_RC, ioc_drop(&q.c, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE));
	IQP("no receive CQ", ENOENT, QPT_RC, ioc_drop(&q.c, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE));
	IQP("PD handle that is a CQ's", EINVAL, QPT_RC,
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_PD_HANDLE)->data = cq);
	IQP("send CQ handle that is the PD's", EINVAL, QPT_RC,
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE)->data = pd);
	IQP("receive CQ handle that is a QP's", EINVAL, QPT_RC,
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE)->data = w.a.handle);
	IQP("bad PD handle", ENOENT, QPT_RC,
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_PD_HANDLE)->data = BAD_HANDLE);
	IQP("SRQ handle that is a CQ's", EINVAL, QPT_RC,
	    ioc_obj(&q.c, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE, cq));
	IQP("an XRC domain handle that names none", ENOENT, QPT_RC,
	    ioc_obj(&q.c, UVERBS_ATTR_CREATE_QP_XRCD_HANDLE, BAD_HANDLE));
	/* sroce has no such object: the core refuses the attribute outright */
	IQP("an indirection table", EINVAL, QPT_RC,
	    ioc_obj(&q.c, UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE, BAD_HANDLE));
	IQP("send WRs max_qp_wr + 1", EINVAL, QPT_RC, q.cap.max_send_wr = r.base.max_qp_wr + 1);
	IQP("receive WRs -1", EINVAL, QPT_RC, q.cap.max_recv_wr = 0xffffffffu);
	IQP("send SGEs 2^31", EINVAL, QPT_RC, q.cap.max_send_sge = 1u << 31);
	IQP("receive SGEs max_sge + 1", EINVAL, QPT_RC, q.cap.max_recv_sge = r.base.max_sge + 1);
	IQP("inline data 2^31", EINVAL, QPT_RC, q.cap.max_inline_data = 1u << 31);
	IQP("caps attribute of 16 bytes", EINVAL, QPT_RC,
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_CAP)->len = 16);
	IQP("caps attribute of 32 bytes, the tail non-zero", EOPNOTSUPP, QPT_RC,
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_CAP)->data = (uintptr_t)junk;
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_CAP)->len = sizeof(junk));
	IQP("caps at an unmapped address", EFAULT, QPT_RC,
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_CAP)->data = 0x10);
	IQP("flag BLOCK_MULTICAST_LOOPBACK on RC", EINVAL, QPT_RC,
	    ioc_u32(&q.c, UVERBS_ATTR_CREATE_QP_FLAGS, IB_UVERBS_QP_CREATE_BLOCK_MULTICAST_LOOPBACK));
	IQP("flag BLOCK_MULTICAST_LOOPBACK on UD", EOPNOTSUPP, QPT_UD,
	    ioc_u32(&q.c, UVERBS_ATTR_CREATE_QP_FLAGS, IB_UVERBS_QP_CREATE_BLOCK_MULTICAST_LOOPBACK));
	IQP("flag PCI_WRITE_END_PADDING on UD", EOPNOTSUPP, QPT_UD,
	    ioc_u32(&q.c, UVERBS_ATTR_CREATE_QP_FLAGS, IB_UVERBS_QP_CREATE_PCI_WRITE_END_PADDING));
	IQP("flag SCATTER_FCS on UD", EINVAL, QPT_UD,
	    ioc_u32(&q.c, UVERBS_ATTR_CREATE_QP_FLAGS, IB_UVERBS_QP_CREATE_SCATTER_FCS));
	IQP("unknown flag 1 << 20", EINVAL, QPT_RC,
	    ioc_u32(&q.c, UVERBS_ATTR_CREATE_QP_FLAGS, 1u << 20));
	/* a UD QP that would send as QP 1: spoofing, refused by the device */
	IQP("source QPN 1 on UD", EOPNOTSUPP, QPT_UD,
	    ioc_in(&q.c, UVERBS_ATTR_CREATE_QP_SOURCE_QPN, &one, sizeof(one)));
	IQP("source QPN 1 on RC", EOPNOTSUPP, QPT_RC,
	    ioc_in(&q.c, UVERBS_ATTR_CREATE_QP_SOURCE_QPN, &one, sizeof(one)));
	IQP("event file that is stdin", EBADF, QPT_RC,
	    ioc_obj(&q.c, UVERBS_ATTR_CREATE_QP_EVENT_FD, 0));
	IQP("event file that is the uverbs file", EBADF, QPT_RC,
	    ioc_obj(&q.c, UVERBS_ATTR_CREATE_QP_EVENT_FD, w.x.fd));
	IQP("driver request of 8 non-zero bytes", EINVAL, QPT_RC,
	    ioc_in(&q.c, UVERBS_ATTR_UHW_IN, junk + 6, 8));
	IQP("driver request of 32 bytes, the last non-zero", EINVAL, QPT_RC,
	    ioc_in(&q.c, UVERBS_ATTR_UHW_IN, junk, sizeof(junk)));
	IQP("driver request at an unmapped address", EFAULT, QPT_RC,
	    ioc_add(&q.c, UVERBS_ATTR_UHW_IN, 32, 0x10));
	IQP("driver response at an unmapped address", EFAULT, QPT_RC,
	    ioc_find(&q.c, UVERBS_ATTR_UHW_OUT)->data = 0x20);
	IQP("driver response at a kernel address", EFAULT, QPT_RC,
	    ioc_find(&q.c, UVERBS_ATTR_UHW_OUT)->data = KERNEL_ADDR);
	/* the core copies these out after sroce made the QP, and destroys it
	 * again when the copy fails
	 */
	IQP("response caps at an unmapped address", EFAULT, QPT_RC,
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_RESP_CAP)->data = 0x30);
	IQP("response QP number at an unmapped address", EFAULT, QPT_UD,
	    ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_RESP_QP_NUM)->data = 0x40);
	if (ioc_count(&w.x, UVERBS_OBJECT_QP) != 2)
		bad("%d QPs after the refused creates, 2 before", ioc_count(&w.x, UVERBS_OBJECT_QP));

	/* accepted shapes */
	IQP("flag SQ_SIG_ALL", 0, QPT_RC,
	    ioc_u32(&q.c, UVERBS_ATTR_CREATE_QP_FLAGS, IB_UVERBS_QP_CREATE_SQ_SIG_ALL));
	expect("QP_DESTROY", ioc_qp_destroy(&w.x, ioc_qp_handle(&q), NULL), 0);
	IQP("driver request of 32 zero bytes, no driver response", 0, QPT_UC,
	    ioc_in(&q.c, UVERBS_ATTR_UHW_IN, zero, sizeof(zero));
	    ioc_drop(&q.c, UVERBS_ATTR_UHW_OUT));
	expect("QP_DESTROY", ioc_qp_destroy(&w.x, ioc_qp_handle(&q), NULL), 0);
	IQP("type XRC_INI: a send queue only", 0, IB_UVERBS_QPT_XRC_INI);
	expect("QP_DESTROY", ioc_qp_destroy(&w.x, ioc_qp_handle(&q), NULL), 0);
	IQP("an SRQ and no receive queue", 0, QPT_RC,
	    ioc_obj(&q.c, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE, srq.handle);
	    q.cap.max_recv_wr = 0; q.cap.max_recv_sge = 0);
	if (!case_failed && q.drv.rq.num_slots != 0)
		bad("a QP on an SRQ got a receive ring of %u slots", q.drv.rq.num_slots);
	expect("SRQ_DESTROY under its QP", ioc_srq_destroy(&w.x, srq.handle), EBUSY);
	expect("QP_DESTROY", ioc_qp_destroy(&w.x, ioc_qp_handle(&q), NULL), 0);
	expect("SRQ_DESTROY", ioc_srq_destroy(&w.x, srq.handle), 0);
	munmap(srq.ring.base, srq.ring.size);

	/* a QP made by ioctl carries verified data: it replaces the world's
	 * QP a, its peer a fresh b
	 */
	IQP("a good RC QP", 0, QPT_RC);
	if (case_failed) {
		world_close(&w);
		return;
	}
	if (q.resp_cap.max_send_wr < 16 || q.resp_cap.max_send_sge < 2 ||
	    q.resp_cap.max_inline_data < 64 || !q.qpn || q.drv.sq.num_slots < 16)
		bad("QP_CREATE: %u send WRs of %u SGEs, inline %u, QPN %#x, %u slots",
		    q.resp_cap.max_send_wr, q.resp_cap.max_send_sge,
		    q.resp_cap.max_inline_data, q.qpn, q.drv.sq.num_slots);
	qp = ioc_qp_take(&w.x, &q, QPT_RC);
	h = qp.handle;
	w.b = qp_new(&w.x, QPT_RC, pd, w.cb.handle, w.cb.handle, -1);
	w.a = qp;
	qp_connect(&w.x, &w.a, w.b.qpn, 14);
	qp_connect(&w.x, &w.b, w.a.qpn, 14);
	if (!world_send_ok(&w, 3000, 0x10c7) || !world_send_ok(&w, 100, 0x10c8))
		bad("data through the ioctl QP");
	expect("QP_DESTROY of the CQ's handle", ioc_qp_destroy(&w.x, cq, NULL), EINVAL);
	expect("QP_DESTROY", ioc_qp_destroy(&w.x, h, NULL), 0);
	expect("QP_DESTROY twice", ioc_qp_destroy(&w.x, h, NULL), ENOENT);
	expect("DESTROY_QP (write) after an ioctl destroy", qp_destroy(&w.x, h), ENOENT);
	expect("send doorbell after an ioctl destroy", sq_doorbell(&w.x, h), ENOENT);
	/* the stale rings are still mapped: writing them harms nobody */
	memset(qp.sq.base, 0xa5, qp.sq.size);
	memset(qp.rq.base, 0xa5, qp.rq.size);
	munmap(qp.sq.base, qp.sq.size);
	munmap(qp.rq.base, qp.rq.size);
#undef IQP
	world_close(&w);
}

/* SRQ_CREATE by ioctl. */
void c_ioctl_srq(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x), junk[8] = { [7] = 1 }, h;
	struct ib_uverbs_ex_query_device_resp r;
	struct cq cq = cq_new(&x, 8);
	struct ioc_srq q;
	struct ring ring;
	struct qp qp;

	if (ex_query_device(&x, &r))
		setup_die("EX_QUERY_DEVICE");
#define ISRQ(what, want, ...) do {						\
		ioc_srq_build(&q, pd);						\
		__VA_ARGS__;							\
		expect(what, ioc_send(x.fd, &q.c), want);			\
	} while (0)
	ISRQ("type XRC without a CQ or domain", ENOENT,
	     ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_TYPE)->data = IB_UVERBS_SRQT_XRC);
	ISRQ("type XRC with a CQ, no domain", ENOENT,
	     ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_TYPE)->data = IB_UVERBS_SRQT_XRC;
	     ioc_obj(&q.c, UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE, cq.handle));
	ISRQ("type TM without a CQ", ENOENT,
	     ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_TYPE)->data = IB_UVERBS_SRQT_TM;
	     ioc_u32(&q.c, UVERBS_ATTR_CREATE_SRQ_MAX_NUM_TAGS, 64));
	ISRQ("type 3", EINVAL, ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_TYPE)->data = 3);
	ISRQ("no PD", EINVAL, ioc_drop(&q.c, UVERBS_ATTR_CREATE_SRQ_PD_HANDLE));
	ISRQ("PD handle that is a CQ's", EINVAL,
	     ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_PD_HANDLE)->data = cq.handle);
	ISRQ("bad PD handle", ENOENT,
	     ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_PD_HANDLE)->data = BAD_HANDLE);
	ISRQ("0 WRs", EINVAL, ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_MAX_WR)->data = 0);
	ISRQ("max_srq_wr + 1 WRs", EINVAL,
	     ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_MAX_WR)->data = r.base.max_srq_wr + 1);
	ISRQ("-1 WRs", EINVAL, ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_MAX_WR)->data = 0xffffffffu);
	ISRQ("max_srq_sge + 1 SGEs", EINVAL,
	     ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_MAX_SGE)->data = r.base.max_srq_sge + 1);
	ISRQ("limit past the size", EINVAL,
	     ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_LIMIT)->data = 17);
	ISRQ("WR count attribute of 8 bytes", EINVAL,
	     ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_MAX_WR)->len = 8);
	ISRQ("event file that is stdin", EBADF, ioc_obj(&q.c, UVERBS_ATTR_CREATE_SRQ_EVENT_FD, 0));
	ISRQ("driver request of 32 bytes, the last non-zero", EINVAL,
	     ioc_in(&q.c, UVERBS_ATTR_UHW_IN, junk, sizeof(junk)));
	ISRQ("driver response at an unmapped address", EFAULT,
	     ioc_find(&q.c, UVERBS_ATTR_UHW_OUT)->data = 0x20);
	/* after sroce made the SRQ: the core destroys it again */
	ISRQ("response WR count at an unmapped address", EFAULT,
	     ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR)->data = 0x30);
	ISRQ("response SGE count at an unmapped address", EFAULT,
	     ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE)->data = 0x40);
	expect("no SRQ left behind by the refused creates", ioc_count(&x, UVERBS_OBJECT_SRQ), 0);

	ISRQ("a good SRQ", 0);
	h = ioc_srq_handle(&q);
	if (!case_failed && (q.resp_wr < 16 || q.resp_sge < 2 || q.drv.ring.num_slots < 16))
		bad("SRQ_CREATE: %u WRs of %u SGEs, a ring of %u", q.resp_wr, q.resp_sge,
		    q.drv.ring.num_slots);
	if (ring_map(&x, &q.drv.ring, &ring))
		bad("mmap of the ioctl SRQ's ring: %s", strerror(errno));
	qp = qp_new(&x, QPT_RC, pd, cq.handle, cq.handle, h);
	expect("SRQ_DESTROY under a QP", ioc_srq_destroy(&x, h), EBUSY);
	expect("SRQ_DESTROY of the QP's handle", ioc_srq_destroy(&x, qp.handle), EINVAL);
	expect("DESTROY_QP", qp_destroy(&x, qp.handle), 0);
	expect("SRQ_DESTROY", ioc_srq_destroy(&x, h), 0);
	expect("SRQ_DESTROY twice", ioc_srq_destroy(&x, h), ENOENT);
	expect("DESTROY_SRQ (write) after an ioctl destroy", srq_destroy(&x, h), ENOENT);
	expect("no SRQ left", ioc_count(&x, UVERBS_OBJECT_SRQ), 0);
	if (ring.base) {
		memset(ring.base, 0x5a, ring.size);
		munmap(ring.base, ring.size);
	}
	munmap(qp.sq.base, qp.sq.size);
#undef ISRQ
	ctx_close(&x);
}

/* CREATE_COMP_CHANNEL (write): its fd or -errno. */
int comp_channel(struct ctx *x)
{
	struct ib_uverbs_create_comp_channel_resp resp = { .fd = 0xffffffffu };
	struct ib_uverbs_create_comp_channel c = { .response = (uintptr_t)&resp };
	int err = CMD(x->fd, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, c, sizeof(resp));

	return err ? err : (int)resp.fd;
}

/* The next event on the event file @fd within @ms; true if one came. */
static bool event_read(int fd, struct ib_uverbs_async_event_desc *ev, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return false;
	return read(fd, ev, sizeof(*ev)) == sizeof(*ev);
}

/*
 * Async event files made by ioctl (ASYNC_EVENT_ALLOC) and completion
 * channels: a QP's events go to the file it was created with; an event
 * file closed before its QP fails, or outliving its context, harms
 * nothing; files of the wrong kind are refused.
 */
void c_ioctl_events(void)
{
	struct ib_uverbs_async_event_desc ev;
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x), events = 99;
	struct cq cq = cq_new(&x, 8);
	struct qp a, b;
	struct ioc_cq qc;
	struct ioc_qp q;
	int efd, efd2, chan;

	efd = ioc_async_alloc(&x);
	efd2 = ioc_async_alloc(&x);
	chan = comp_channel(&x);
	if (efd < 0 || efd2 < 0 || chan < 0) {
		bad("ASYNC_EVENT_ALLOC %d, again %d, CREATE_COMP_CHANNEL %d", efd, efd2, chan);
		ctx_close(&x);
		return;
	}
	if (fcntl(efd, F_SETFL, O_NONBLOCK))
		setup_die("fcntl: %s", strerror(errno));
	expect("read of an empty event file", read(efd, &ev, sizeof(ev)) < 0 ? -errno : 0, EAGAIN);

	ioc_qp_build(&q, QPT_RC, pd, cq.handle);
	ioc_obj(&q.c, UVERBS_ATTR_CREATE_QP_EVENT_FD, chan);
	expect("QP_CREATE with a completion channel as event file", ioc_send(x.fd, &q.c), EBADF);
	ioc_cq_build(&qc, 4);
	ioc_obj(&qc.c, UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, efd);
	expect("CQ_CREATE with an event file as channel", ioc_send(x.fd, &qc.c), EBADF);
	ioc_cq_build(&qc, 4);
	ioc_obj(&qc.c, UVERBS_ATTR_CREATE_CQ_EVENT_FD, chan);
	expect("CQ_CREATE with a channel as event file", ioc_send(x.fd, &qc.c), EBADF);

	/* a: events to efd; b: events to efd2, which is closed before b fails */
	ioc_qp_build(&q, QPT_RC, pd, cq.handle);
	ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_USER_HANDLE)->data = 0xa11ce;
	ioc_obj(&q.c, UVERBS_ATTR_CREATE_QP_EVENT_FD, efd);
	expect("QP_CREATE with its own event file", ioc_send(x.fd, &q.c), 0);
	if (case_failed) {
		ctx_close(&x);
		return;
	}
	a = ioc_qp_take(&x, &q, QPT_RC);
	ioc_qp_build(&q, QPT_RC, pd, cq.handle);
	ioc_find(&q.c, UVERBS_ATTR_CREATE_QP_USER_HANDLE)->data = 0xb0b;
	ioc_obj(&q.c, UVERBS_ATTR_CREATE_QP_EVENT_FD, efd2);
	expect("QP_CREATE with a second event file", ioc_send(x.fd, &q.c), 0);
	if (case_failed) {
		ctx_close(&x);
		return;
	}
	b = ioc_qp_take(&x, &q, QPT_RC);
	close(efd2);
	qp_connect(&x, &a, b.qpn, 14);
	qp_connect(&x, &b, a.qpn, 14);

	/* an impossible producer index fails each QP with QP_FATAL */
	set_prod(&a.sq, a.sq.n + 5);
	set_prod(&b.sq, b.sq.n + 5);
	expect("doorbell of a", sq_doorbell(&x, a.handle), 0);
	expect("doorbell of b", sq_doorbell(&x, b.handle), 0);
	if (!qp_wait_state(&x, a.handle, QPS_ERR, 20000) ||
	    !qp_wait_state(&x, b.handle, QPS_ERR, 20000))
		bad("the QPs are not in ERR after impossible producer indices");
	if (!event_read(efd, &ev, 10000))
		bad("no event on a's event file");
	else if (ev.event_type != EV_QP_FATAL || ev.element != 0xa11ce)
		bad("a's event file: event %u for %#llx", ev.event_type,
		    (unsigned long long)ev.element);
	if (event_read(x.async_fd, &ev, 500))
		bad("event %u for %#llx on the context's event file", ev.event_type,
		    (unsigned long long)ev.element);
	expect("QP_DESTROY of a", ioc_qp_destroy(&x, a.handle, &events), 0);
	if (!case_failed && events != 1)
		bad("QP_DESTROY of a reports %u events", events);
	expect("QP_DESTROY of b", ioc_qp_destroy(&x, b.handle, NULL), 0);
	munmap(a.sq.base, a.sq.size);
	munmap(a.rq.base, a.rq.size);
	munmap(b.sq.base, b.sq.size);
	munmap(b.rq.base, b.rq.size);

	/* the event file and the channel outlive the context */
	ctx_close(&x);
	if (read(efd, &ev, sizeof(ev)) >= 0 || (errno != EAGAIN && errno != EIO))
		bad("read of the event file after its context closed: %s",
		    errno == EAGAIN || errno == EIO ? "an event" : strerror(errno));
	close(efd);
	close(chan);
}

/* Destroy by ioctl: objects of the wrong type, twice, busy; use after. */
void c_ioctl_objects(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x), lkey = 0, rkey = 0;
	struct cq cq = cq_new(&x, 8);
	struct srq srq = srq_new(&x, pd);
	struct qp qp = qp_new(&x, QPT_RC, pd, cq.handle, cq.handle, -1);
	static uint8_t buf[8192] __attribute__((aligned(4096)));
	struct mr mr = mr_new(&x, pd, buf, sizeof(buf));
	struct ib_uverbs_destroy_qp_resp qr;
	struct ib_uverbs_destroy_srq_resp sr;
	uint64_t len = 0;
	struct ioc c;

	expect("PD_DESTROY of a CQ handle", ioc_pd_destroy(&x, cq.handle), EINVAL);
	expect("PD_DESTROY of a bad handle", ioc_pd_destroy(&x, BAD_HANDLE), ENOENT);
	expect("PD_DESTROY of handle -1", ioc_pd_destroy(&x, -1), EINVAL);
	expect("PD_DESTROY of handle 2^32", ioc_pd_destroy(&x, 1ll << 32), ENOENT);
	expect("PD_DESTROY under an MR, QP and SRQ", ioc_pd_destroy(&x, pd), EBUSY);

	ioc_init(&c, UVERBS_OBJECT_MR, UVERBS_METHOD_QUERY_MR);
	ioc_obj(&c, UVERBS_ATTR_QUERY_MR_HANDLE, mr.handle);
	ioc_out(&c, UVERBS_ATTR_QUERY_MR_RESP_LKEY, &lkey, sizeof(lkey));
	ioc_out(&c, UVERBS_ATTR_QUERY_MR_RESP_RKEY, &rkey, sizeof(rkey));
	ioc_out(&c, UVERBS_ATTR_QUERY_MR_RESP_LENGTH, &len, sizeof(len));
	expect("QUERY_MR", ioc_send(x.fd, &c), 0);
	if (!case_failed && (lkey != mr.lkey || rkey != mr.rkey || len != sizeof(buf)))
		bad("QUERY_MR: lkey %#x rkey %#x length %llu", lkey, rkey, (unsigned long long)len);
	ioc_find(&c, UVERBS_ATTR_QUERY_MR_HANDLE)->data = pd;
	expect("QUERY_MR of a PD handle", ioc_send(x.fd, &c), EINVAL);
	expect("MR_DESTROY of the QP's handle", ioc_destroy(&x, UVERBS_OBJECT_MR,
	       UVERBS_METHOD_MR_DESTROY, qp.handle, NULL, 0), EINVAL);
	expect("MR_DESTROY", ioc_destroy(&x, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY, mr.handle,
					 NULL, 0), 0);
	expect("MR_DESTROY twice", ioc_destroy(&x, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY,
					       mr.handle, NULL, 0), ENOENT);
	ioc_find(&c, UVERBS_ATTR_QUERY_MR_HANDLE)->data = mr.handle;
	expect("QUERY_MR after destroy", ioc_send(x.fd, &c), ENOENT);
	expect("DEREG_MR (write) after destroy", mr_dereg(&x, mr.handle), ENOENT);

	expect("QP_DESTROY of the SRQ's handle", ioc_destroy(&x, UVERBS_OBJECT_QP,
	       UVERBS_METHOD_QP_DESTROY, srq.handle, &qr, sizeof(qr)), EINVAL);
	expect("SRQ_DESTROY of the QP's handle", ioc_destroy(&x, UVERBS_OBJECT_SRQ,
	       UVERBS_METHOD_SRQ_DESTROY, qp.handle, &sr, sizeof(sr)), EINVAL);
	expect("QP_DESTROY with a response at an unmapped address",
	       ioc_destroy(&x, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_DESTROY, qp.handle,
			   (void *)0x10, sizeof(qr)), EFAULT);
	/* the destroy happened before the copy failed */
	expect("QP_DESTROY after that", ioc_destroy(&x, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_DESTROY,
						     qp.handle, &qr, sizeof(qr)), ENOENT);
	expect("MODIFY_QP after an ioctl destroy", qp_set_state(&x, qp.handle, QPS_ERR), ENOENT);
	expect("QUERY_QP after an ioctl destroy", qp_state(&x, qp.handle), ENOENT);
	expect("send doorbell after an ioctl destroy", sq_doorbell(&x, qp.handle), ENOENT);
	expect("SRQ_DESTROY", ioc_destroy(&x, UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_DESTROY,
					  srq.handle, &sr, sizeof(sr)), 0);
	expect("SRQ_DESTROY twice", ioc_destroy(&x, UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_DESTROY,
						srq.handle, &sr, sizeof(sr)), ENOENT);
	expect("PD_DESTROY", ioc_pd_destroy(&x, pd), 0);
	expect("PD_DESTROY twice", ioc_pd_destroy(&x, pd), ENOENT);
	expect("REG_MR on the destroyed PD", mr_reg(&x, pd, (uintptr_t)buf, sizeof(buf),
						    (uintptr_t)buf, ACC_LW, &mr), ENOENT);
	expect("no QP left", ioc_count(&x, UVERBS_OBJECT_QP), 0);
	expect("no PD left", ioc_count(&x, UVERBS_OBJECT_PD), 0);
	munmap(qp.sq.base, qp.sq.size);
	munmap(qp.rq.base, qp.rq.size);
	munmap(srq.ring.base, srq.ring.size);
	ctx_close(&x);
}

/* INVOKE_WRITE: write() commands wrapped in an ioctl. */
void c_ioctl_write(void)
{
	struct ctx x = ctx_open();
	struct ib_uverbs_alloc_pd apd = {};
	struct ib_uverbs_dealloc_pd dpd = { .pd_handle = BAD_HANDLE };
	struct ib_uverbs_create_cq ccq = { .cqe = 4, .comp_channel = -1 };
	struct ib_uverbs_create_cq_resp cresp;
	struct sroce_create_cq_resp drv;
	struct ib_uverbs_ex_query_device qd = { .comp_mask = 1 };
	struct ib_uverbs_ex_query_device_resp qresp;
	uint64_t junk = 5;
	uint32_t presp[2];
	struct ioc c;

#define IW(what, want, cmd, in, inlen, out, outlen, ...) do {			\
		ioc_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE);	\
		ioc_const(&c, UVERBS_ATTR_WRITE_CMD, cmd);			\
		ioc_in(&c, UVERBS_ATTR_CORE_IN, in, inlen);			\
		ioc_out(&c, UVERBS_ATTR_CORE_OUT, out, outlen);			\
		__VA_ARGS__;							\
		expect(what, ioc_send(x.fd, &c), want);				\
	} while (0)
	IW("unknown command 200", EOPNOTSUPP, 200, &apd, sizeof(apd), presp, 4);
	IW("command with unknown flag bits", EINVAL, 0x40000000u | IB_USER_VERBS_CMD_ALLOC_PD, &apd,
	   sizeof(apd), presp, 4);
	IW("command constant of 4 bytes", EINVAL, IB_USER_VERBS_CMD_ALLOC_PD, &apd, sizeof(apd),
	   presp, 4, ioc_find(&c, UVERBS_ATTR_WRITE_CMD)->len = 4);
	IW("ALLOC_PD without a response", ENOSPC, IB_USER_VERBS_CMD_ALLOC_PD, &apd, sizeof(apd),
	   presp, 4, ioc_drop(&c, UVERBS_ATTR_CORE_OUT));
	IW("ALLOC_PD with a request shorter than the command", ENOSPC, IB_USER_VERBS_CMD_ALLOC_PD,
	   &apd, 4, presp, 4);
	IW("ALLOC_PD with the request at an unmapped address", EFAULT, IB_USER_VERBS_CMD_ALLOC_PD,
	   (void *)0x10, 16, presp, 4, ioc_find(&c, UVERBS_ATTR_CORE_IN)->data = 0x10);
	IW("ALLOC_PD with the response at an unmapped address", EFAULT, IB_USER_VERBS_CMD_ALLOC_PD,
	   &apd, sizeof(apd), (void *)0x20, 4);
	IW("ALLOC_PD with non-zero driver data", EINVAL, IB_USER_VERBS_CMD_ALLOC_PD, &apd,
	   sizeof(apd), presp, 4, ioc_in(&c, UVERBS_ATTR_UHW_IN, &junk, sizeof(junk)));
	IW("DEALLOC_PD of a bad handle", ENOENT, IB_USER_VERBS_CMD_DEALLOC_PD, &dpd, sizeof(dpd),
	   presp, 0, ioc_drop(&c, UVERBS_ATTR_CORE_OUT));
	IW("ALLOC_PD", 0, IB_USER_VERBS_CMD_ALLOC_PD, &apd, sizeof(apd), presp, 4);
	dpd.pd_handle = presp[0];
	IW("DEALLOC_PD", 0, IB_USER_VERBS_CMD_DEALLOC_PD, &dpd, sizeof(dpd), presp, 0,
	   ioc_drop(&c, UVERBS_ATTR_CORE_OUT));
	IW("DEALLOC_PD twice", ENOENT, IB_USER_VERBS_CMD_DEALLOC_PD, &dpd, sizeof(dpd), presp, 0,
	   ioc_drop(&c, UVERBS_ATTR_CORE_OUT));
	IW("CREATE_CQ with unknown request flags", EOPNOTSUPP, IB_USER_VERBS_CMD_CREATE_CQ, &ccq,
	   sizeof(ccq), &cresp, sizeof(cresp), ioc_in(&c, UVERBS_ATTR_UHW_IN, &junk, sizeof(junk));
	   ioc_out(&c, UVERBS_ATTR_UHW_OUT, &drv, sizeof(drv)));
	IW("CREATE_CQ with the driver response at an unmapped address", EFAULT,
	   IB_USER_VERBS_CMD_CREATE_CQ, &ccq, sizeof(ccq), &cresp, sizeof(cresp),
	   ioc_out(&c, UVERBS_ATTR_UHW_OUT, (void *)0x20, sizeof(drv)));
	ccq.cqe = 0;
	IW("CREATE_CQ of 0 entries", EINVAL, IB_USER_VERBS_CMD_CREATE_CQ, &ccq, sizeof(ccq),
	   &cresp, sizeof(cresp), ioc_out(&c, UVERBS_ATTR_UHW_OUT, &drv, sizeof(drv)));
	expect("no CQ left by the refused creates", ioc_count(&x, UVERBS_OBJECT_CQ), 0);
	ccq.cqe = 4;
	IW("CREATE_CQ", 0, IB_USER_VERBS_CMD_CREATE_CQ, &ccq, sizeof(ccq), &cresp, sizeof(cresp),
	   ioc_out(&c, UVERBS_ATTR_UHW_OUT, &drv, sizeof(drv)));
	if (!case_failed && drv.ring.num_slots < 4)
		bad("CREATE_CQ by INVOKE_WRITE: a ring of %u slots", drv.ring.num_slots);
	expect("DESTROY_CQ", cq_destroy(&x, cresp.cq_handle), 0);
	IW("EX_QUERY_DEVICE with comp_mask set", EINVAL,
	   IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_QUERY_DEVICE, &qd, sizeof(qd),
	   &qresp, sizeof(qresp));
	qd.comp_mask = 0;
	IW("EX_QUERY_DEVICE", 0, IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_QUERY_DEVICE,
	   &qd, sizeof(qd), &qresp, sizeof(qresp));
	IW("EX_CREATE_WQ (not enabled)", EOPNOTSUPP,
	   IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_WQ, &qd, sizeof(qd),
	   &qresp, sizeof(qresp));
#undef IW
	ctx_close(&x);
}
