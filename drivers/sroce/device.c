// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * device.c - the sroce ib_device: creation from "rdma link add", the one
 * ib_device_ops table, device and port queries, and removal.
 *
 * Lifetime of a device:
 *   sroce_dev_newlink()    allocate, bind to the netdev (net.c), register
 *   ...                    live; the port follows the netdev (net.c)
 *   unregistration         started by "rdma link delete", by the netdev
 *                          going away (net.c, queued) or by rmmod; ib_core
 *                          disassociates user contexts, removes its clients
 *                          and then calls sroce_dealloc_driver()
 *   sroce_dealloc_driver() unbind from the netdev, leave the device list,
 *                          free what sroce allocated; ib_core frees the
 *                          struct after an RCU grace period when its last
 *                          reference goes
 */
#include <linux/ethtool.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"

/*
 * sroce has no IEEE-assigned OUI: its vendor ID is one from the locally
 * administered range (bit 1 of the first octet set), spelling "SR".
 */
#define SROCE_VENDOR_ID 0x025352
#define SROCE_VENDOR_PART_ID 1

/* The module's version, reported as the device's firmware version. */
#define SROCE_VERSION_MAJOR 0
#define SROCE_VERSION_MINOR 1
#define SROCE_VERSION_PATCH 0

/*
 * Lower limits, for tests: the defaults are the maxima, too many objects to
 * create one by one under emulation.  Read when a device is created.  A
 * small QP number space (max_qpn) wraps soon: tests of number reuse need
 * that.
 */
static unsigned int max_pd = SROCE_MAX_PD;
static unsigned int max_qp = SROCE_MAX_QP;
static unsigned int max_cq = SROCE_MAX_CQ;
static unsigned int max_mr = SROCE_MAX_MR;
static unsigned int max_srq = SROCE_MAX_SRQ;
static unsigned int max_qpn = SROCE_QPN_MAX - 1;

module_param(max_pd, uint, 0444);
module_param(max_qp, uint, 0444);
module_param(max_cq, uint, 0444);
module_param(max_mr, uint, 0444);
module_param(max_srq, uint, 0444);
module_param(max_qpn, uint, 0444);

MODULE_PARM_DESC(max_pd, "protection domains per device (default and maximum 65536; lower it to test the limit)");
MODULE_PARM_DESC(max_qp, "queue pairs per device, the GSI QP included (default and maximum 65536)");
MODULE_PARM_DESC(max_cq, "completion queues per device (default and maximum 65536)");
MODULE_PARM_DESC(max_mr, "memory regions per device (default and maximum 1048576)");
MODULE_PARM_DESC(max_srq, "shared receive queues per device (default and maximum 65536)");
MODULE_PARM_DESC(max_qpn, "highest QP number handed out, at least 16 (default and maximum 16777214; lower it to have numbers reused sooner)");

/* Every device, for rmmod; see sroce_dev_unregister_all(). */
static LIST_HEAD(sroce_devices);
/* Protects sroce_devices; never held while calling into ib_core. */
static DEFINE_MUTEX(sroce_devices_lock);

/**
 * sroce_query_device() - ib_device_ops.query_device
 * @ibdev: the device
 * @attr: filled with the device's limits and capabilities
 * @udata: driver data from userspace; sroce defines none
 *
 * Context: Process context.
 * Return: 0, or -EINVAL if userspace sent driver data.
 */
static int sroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	*attr = to_sdev(ibdev)->attr;
	return 0;
}

/**
 * sroce_query_port() - ib_device_ops.query_port
 * @ibdev: the device
 * @port_num: the port (always SROCE_PORT; the core checks the range)
 * @attr: zeroed by the core, filled here
 *
 * Reads only what the netdev notifier recorded; never touches the netdev,
 * which may be going away.
 *
 * Context: Process context.
 * Return: 0.
 */
static int sroce_query_port(struct ib_device *ibdev, u32 port_num,
			    struct ib_port_attr *attr)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	u32 active_mtu = READ_ONCE(sdev->active_mtu);

	attr->state = READ_ONCE(sdev->port_state);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = active_mtu ? active_mtu : IB_MTU_256;
	attr->gid_tbl_len = SROCE_GID_TBL_LEN;
	attr->pkey_tbl_len = 1;
	attr->max_msg_sz = SROCE_MAX_MSG_SZ;
	attr->max_vl_num = 1;
	attr->active_speed = READ_ONCE(sdev->port_speed);
	attr->active_width = READ_ONCE(sdev->port_width);
	attr->ip_gids = true;
	return 0;
}

/**
 * sroce_query_pkey() - ib_device_ops.query_pkey
 * @ibdev: the device
 * @port_num: the port
 * @index: index in the P_Key table, which has one entry
 * @pkey: the default P_Key, full membership
 *
 * Context: Process context.
 * Return: 0, or -EINVAL for an index past the table.
 */
static int sroce_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			    u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

/**
 * sroce_get_port_immutable() - ib_device_ops.get_port_immutable
 * @ibdev: the device
 * @port_num: the port
 * @immutable: table sizes and the port's protocol
 *
 * A RoCEv2 port: the core fills its GID table from the netdev's addresses.
 *
 * Context: Process context (registration).
 * Return: 0.
 */
static int sroce_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				    struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = SROCE_GID_TBL_LEN;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

/**
 * sroce_get_link_layer() - ib_device_ops.get_link_layer
 * @ibdev: the device
 * @port_num: the port
 *
 * Context: Any context.
 * Return: IB_LINK_LAYER_ETHERNET.
 */
static enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev,
						 u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

/**
 * sroce_modify_device() - ib_device_ops.modify_device
 * @ibdev: the device
 * @mask: what to change; only IB_DEVICE_MODIFY_NODE_DESC is supported
 * @modify: the new values
 *
 * Context: Process context.
 * Return: 0, or -EOPNOTSUPP for any other change.
 */
static int sroce_modify_device(struct ib_device *ibdev, int mask,
			       struct ib_device_modify *modify)
{
	if (mask & ~IB_DEVICE_MODIFY_NODE_DESC)
		return -EOPNOTSUPP;
	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ibdev->node_desc, modify->node_desc,
		       sizeof(ibdev->node_desc));
	return 0;
}

/**
 * sroce_get_dev_fw_str() - ib_device_ops.get_dev_fw_str
 * @ibdev: the device
 * @str: IB_FW_VERSION_NAME_MAX bytes for the version string
 *
 * Context: Process context.
 */
static void sroce_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%d.%d.%d", SROCE_VERSION_MAJOR,
		 SROCE_VERSION_MINOR, SROCE_VERSION_PATCH);
}

/**
 * sroce_dealloc_driver() - ib_device_ops.dealloc_driver
 * @ibdev: the device, unregistered (or never registered)
 *
 * The last driver callback of a device: ib_core has removed every client
 * and destroyed every user object.  Releases what sroce holds; ib_core
 * frees the memory when its last reference goes.
 *
 * Context: Process context. Takes sroce_bind_lock and sroce_devices_lock.
 */
static void sroce_dealloc_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	sroce_net_unbind(sdev);
	mutex_lock(&sroce_devices_lock);
	list_del(&sdev->list);
	mutex_unlock(&sroce_devices_lock);
	sroce_mcast_uninit(sdev);
	sroce_pool_uninit(&sdev->ah_pool);
	sroce_pool_uninit(&sdev->xsrq_pool);
	sroce_pool_uninit(&sdev->mw_pool);
	sroce_pool_uninit(&sdev->mr_pool);
	sroce_pool_uninit(&sdev->qp_pool);
	sroce_stats_free(sdev->stats);
	sroce_obj_destroyed(SROCE_OBJ_DEV);
}

static const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = SROCE_DRIVER_ID,
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,
	.device_group = &sroce_cc_attr_group,

	.alloc_dm = sroce_alloc_dm,
	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.advise_mr = sroce_advise_mr,
	.query_ucontext = sroce_query_ucontext,
	.alloc_mr = sroce_alloc_mr,
	.alloc_mw = sroce_alloc_mw,
	.alloc_pd = sroce_alloc_pd,
	.alloc_ucontext = sroce_alloc_ucontext,
	.alloc_xrcd = sroce_alloc_xrcd,
	.attach_mcast = sroce_attach_mcast,
	.create_ah = sroce_create_ah,
	.create_cq = sroce_create_cq,
	.create_qp = sroce_create_qp,
	.create_srq = sroce_create_srq,
	.create_user_ah = sroce_create_ah,
	.dealloc_dm = sroce_dealloc_dm,
	.dealloc_driver = sroce_dealloc_driver,
	.dealloc_mw = sroce_dealloc_mw,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.dealloc_xrcd = sroce_dealloc_xrcd,
	.dereg_mr = sroce_dereg_mr,
	.destroy_ah = sroce_destroy_ah,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.destroy_srq = sroce_destroy_srq,
	.detach_mcast = sroce_detach_mcast,
	.fill_res_cq_entry = sroce_fill_res_cq_entry,
	.fill_res_mr_entry = sroce_fill_res_mr_entry,
	.fill_res_qp_entry = sroce_fill_res_qp_entry,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.get_dev_fw_str = sroce_get_dev_fw_str,
	.get_dma_mr = sroce_get_dma_mr,
	.get_hw_stats = sroce_get_hw_stats,
	.get_link_layer = sroce_get_link_layer,
	.get_port_immutable = sroce_get_port_immutable,
	.map_mr_sg = sroce_map_mr_sg,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,
	.modify_device = sroce_modify_device,
	.modify_qp = sroce_modify_qp,
	.modify_srq = sroce_modify_srq,
	/* Callable with interrupts off; everything else may sleep. */
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.query_ah = sroce_query_ah,
	.query_device = sroce_query_device,
	.query_pkey = sroce_query_pkey,
	.query_port = sroce_query_port,
	.query_qp = sroce_query_qp,
	.query_srq = sroce_query_srq,
	.reg_dm_mr = sroce_reg_dm_mr,
	.reg_user_mr = sroce_reg_user_mr_op,
	.rereg_user_mr = sroce_rereg_user_mr,
	.req_notify_cq = sroce_req_notify_cq,
	SROCE_OP_RESIZE_CQ,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, sroce_xrcd, ibxrcd),
};

/* The highest QP number a device hands out (max_qpn, within range). */
static u32 sroce_qpn_last(void)
{
	return clamp_t(unsigned int, max_qpn, SROCE_QPN_MIN, SROCE_QPN_MAX - 1);
}

/* The limits sroce enforces, and what it can do. */
/*
 * On-demand paging (odp.c): explicit and implicit regions.  RC and XRC
 * wait for a missing page with an RNR NAK, so every operation may use one;
 * UC and UD lose a message that arrives for one, so they announce only
 * sending from one (as hardware does for UD).
 */
static void sroce_dev_init_odp_caps(struct ib_odp_caps *caps)
{
	u32 rc = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		 IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		 IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;

	caps->general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	caps->per_transport_caps.rc_odp_caps = rc;
	caps->per_transport_caps.xrc_odp_caps = rc & ~IB_ODP_SUPPORT_RECV;
	caps->per_transport_caps.uc_odp_caps = IB_ODP_SUPPORT_SEND;
	caps->per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND;
}

static void sroce_dev_init_attr(struct sroce_dev *sdev)
{
	/* The numbers from SROCE_QPN_MIN on, and the GSI QP's. */
	u32 qpns = sroce_qpn_last() - SROCE_QPN_MIN + 2;
	struct ib_device_attr *attr = &sdev->attr;

	attr->fw_ver = (u64)SROCE_VERSION_MAJOR << 32 |
		       SROCE_VERSION_MINOR << 16 | SROCE_VERSION_PATCH;
	attr->sys_image_guid = sdev->ibdev.node_guid;
	attr->vendor_id = SROCE_VENDOR_ID;
	attr->vendor_part_id = SROCE_VENDOR_PART_ID;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_qp = min(clamp_t(unsigned int, max_qp, 2, SROCE_MAX_QP), qpns);
	attr->max_qp_wr = SROCE_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_CURR_QP_STATE_MOD |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_XRC |
				 SROCE_DEVICE_ATOMIC_WRITE |
				 SROCE_DEVICE_FLUSH_GLOBAL |
				 SROCE_DEVICE_FLUSH_PERSISTENT;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_LOCAL_DMA_LKEY |
				 IBK_ON_DEMAND_PAGING;
	sroce_dev_init_odp_caps(&attr->odp_caps);
	/* User CQs' completion timestamps (SROCE_CQ_TIMESTAMPS). */
	attr->timestamp_mask = U64_MAX;
	attr->hca_core_clock = SROCE_CLOCK_KHZ;
	attr->max_send_sge = SROCE_MAX_SGE;
	attr->max_recv_sge = SROCE_MAX_SGE;
	attr->max_sge_rd = SROCE_MAX_SGE;
	attr->max_cq = clamp_t(unsigned int, max_cq, 1, SROCE_MAX_CQ);
	attr->max_cqe = SROCE_MAX_CQE;
	attr->max_mr = clamp_t(unsigned int, max_mr, 1, SROCE_MAX_MR);
	attr->max_mw = SROCE_MAX_MW;
	attr->max_fast_reg_page_list_len = SROCE_MAX_FR_PAGES;
	attr->max_pd = clamp_t(unsigned int, max_pd, 1, SROCE_MAX_PD);
	attr->max_qp_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = attr->max_qp * SROCE_MAX_RD_ATOMIC;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_srq = clamp_t(unsigned int, max_srq, 1, SROCE_MAX_SRQ);
	attr->max_srq_wr = SROCE_MAX_QP_WR;
	attr->max_srq_sge = SROCE_MAX_SGE;
	attr->max_ah = SROCE_MAX_AH;
	attr->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SROCE_MAX_TOTAL_MCAST_QP_ATTACH;
	attr->max_dm_size = SROCE_DM_MAX_SIZE;
	/* List operations execute as they are posted: none is outstanding. */
	attr->tm_caps = (struct ib_tm_caps){
		.max_rndv_hdr_size = SROCE_TM_MAX_RNDV_HDR,
		.max_num_tags = SROCE_TM_MAX_TAGS,
		.flags = IB_TM_CAP_RNDV_RC,
		.max_ops = SROCE_TM_MAX_TAGS,
		.max_sge = SROCE_TM_MAX_SGE,
	};
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = SROCE_LOCAL_CA_ACK_DELAY;
}

/*
 * The netdev's parent device becomes the RDMA device's, as an RNIC's is,
 * so that tools find the netdev under the device
 * (/sys/class/infiniband/DEV/device/net/: pyverbs' rdma_cm tests, for
 * one); but not a PCI device's.  libibverbs would offer the device to the
 * PCI function's own provider, which matches its modalias (mlx5's for a
 * ConnectX port), and rdma-core's udev rule would rename it after the
 * PCI slot (rdma_rename NAME_FALLBACK), away from the name the provider
 * claims it by.  A virtio, USB or Xen NIC's device is claimed by no
 * provider and renamed by no rule.
 */
static void sroce_dev_set_parent(struct sroce_dev *sdev,
				 struct net_device *ndev)
{
	struct device *parent = ndev->dev.parent;

	if (parent && !dev_is_pci(parent))
		sdev->ibdev.dev.parent = parent;
}

static struct sroce_dev *sroce_dev_alloc(struct net_device *ndev)
{
	struct sroce_dev *sdev;
	struct ib_device *ibdev;

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return ERR_PTR(-ENOMEM);
	ibdev = &sdev->ibdev;
	/* From here on ib_dealloc_device() undoes everything. */
	ib_set_device_ops(ibdev, &sroce_dev_ops);
	ibdev->driver_def = sroce_uapi_defs;
	mutex_lock(&sroce_devices_lock);
	list_add_tail(&sdev->list, &sroce_devices);
	mutex_unlock(&sroce_devices_lock);
	sroce_obj_created(SROCE_OBJ_DEV);

	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    ndev->dev_addr);
	/* The limits first: the pools enforce two of them. */
	sroce_dev_init_attr(sdev);
	sroce_cc_params_init(sdev);
	sroce_pool_init(&sdev->qp_pool, SROCE_QPN_MIN, sroce_qpn_last(),
			sdev->attr.max_qp);
	sroce_pool_init(&sdev->mr_pool, 1, SROCE_MW_INDEX_BASE - 1,
			sdev->attr.max_mr);
	sroce_pool_init(&sdev->mw_pool, SROCE_MW_INDEX_BASE, SROCE_QPN_MAX - 1,
			SROCE_MAX_MW);
	sroce_pool_init(&sdev->ah_pool, 1, SROCE_QPN_MAX - 1, SROCE_MAX_AH);
	sroce_pool_init(&sdev->xsrq_pool, 1, SROCE_QPN_MAX - 1,
			sdev->attr.max_srq);
	sroce_mcast_init(sdev);
	sdev->stats = sroce_stats_alloc();
	if (!sdev->stats) {
		ib_dealloc_device(ibdev);
		return ERR_PTR(-ENOMEM);
	}
	/* Write commands ib_core does not enable for every driver: the send
	 * and receive doorbells, and arming CQs.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = SROCE_LOCAL_DMA_LKEY;
	strscpy(ibdev->node_desc, "sroce", sizeof(ibdev->node_desc));
	sdev->port_state = IB_PORT_DOWN;
	return sdev;
}

static int sroce_dev_name_in_use(const char *ibdev_name)
{
	pr_info_ratelimited("%s: name already in use\n", ibdev_name);
	return -EEXIST;
}

/**
 * sroce_dev_newlink() - rdma_link_ops.newlink: "rdma link add NAME type sroce
 *	netdev NDEV"
 * @ibdev_name: the name asked for; unique among RDMA devices
 * @ndev: the lower netdev, referenced by the caller for the duration
 *
 * Context: Process context, under ib_core's link_ops_rwsem.
 * Return: 0; -EEXIST if the name is taken or @ndev already carries an sroce
 * device; -EPROTONOSUPPORT if @ndev is not Ethernet; -ENODEV if @ndev went
 * away meanwhile; -ENOMEM; or the error from opening UDP port 4791 or from
 * registration.
 */
int sroce_dev_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct sroce_dev *sdev;
	bool bound;
	int err;

	if (sroce_ib_name_taken(ibdev_name))
		return sroce_dev_name_in_use(ibdev_name);
	sdev = sroce_dev_alloc(ndev);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	err = sroce_net_bind(sdev, ndev);
	if (err)
		goto err_dealloc;
	err = ib_device_set_netdev(&sdev->ibdev, ndev, SROCE_PORT);
	if (err)
		goto err_dealloc;
	sroce_dev_set_parent(sdev, ndev);

	/* Once registered, a racing unregistration may free the device. */
	get_device(&sdev->ibdev.dev);
	err = ib_register_device(&sdev->ibdev, ibdev_name, NULL);
	if (err) {
		put_device(&sdev->ibdev.dev);
		/* The name was taken meanwhile, or could not be looked up. */
		if (err == -ENFILE)
			err = sroce_dev_name_in_use(ibdev_name);
		goto err_dealloc;
	}
	bound = sroce_net_mark_registered(sdev);
	if (!bound) {
		/* The netdev went away during registration. */
		ib_unregister_device(&sdev->ibdev);
		err = -ENODEV;
	}
	put_device(&sdev->ibdev.dev);
	return err;

err_dealloc:
	ib_dealloc_device(&sdev->ibdev);
	return err;
}

/**
 * sroce_dev_unregister_all() - unregister every device, for rmmod
 *
 * Context: Process context (module exit). May sleep for long.
 *
 * Runs after the link type is unregistered, so no device is being created.
 * Each unregistration waits for ib_core to disassociate user contexts and
 * remove its clients, and ends in sroce_dealloc_driver(), which takes the
 * device off the list.
 */
void sroce_dev_unregister_all(void)
{
	struct sroce_dev *sdev;

	for (;;) {
		mutex_lock(&sroce_devices_lock);
		sdev = list_first_entry_or_null(&sroce_devices,
						struct sroce_dev, list);
		if (sdev)
			get_device(&sdev->ibdev.dev);
		mutex_unlock(&sroce_devices_lock);
		if (!sdev)
			return;
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}

static enum ib_mtu sroce_mtu_from_netdev(unsigned int ndev_mtu)
{
	enum ib_mtu mtu;

	for (mtu = IB_MTU_4096; mtu >= IB_MTU_256; mtu--)
		if (ib_mtu_enum_to_int(mtu) + SROCE_MAX_HDR_OVERHEAD <=
		    (int)ndev_mtu)
			return mtu;
	return 0;
}

/* Lane rates and widths close to an Ethernet speed, for query_port. */
static void sroce_speed_from_netdev(u32 mbps, u16 *speed, u8 *width)
{
	static const struct {
		u32 mbps;
		u16 speed;
		u8 width;
	} map[] = {
		{ 2500, IB_SPEED_SDR, IB_WIDTH_1X },
		{ 5000, IB_SPEED_DDR, IB_WIDTH_1X },
		{ 10000, IB_SPEED_QDR, IB_WIDTH_1X },
		{ 14000, IB_SPEED_FDR, IB_WIDTH_1X },
		{ 25000, IB_SPEED_EDR, IB_WIDTH_1X },
		{ 50000, IB_SPEED_HDR, IB_WIDTH_1X },
		{ 100000, IB_SPEED_NDR, IB_WIDTH_1X },
		{ 200000, IB_SPEED_HDR, IB_WIDTH_4X },
		{ 400000, IB_SPEED_NDR, IB_WIDTH_4X },
		{ 800000, IB_SPEED_NDR, IB_WIDTH_8X },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(map) - 1; i++)
		if (mbps <= map[i].mbps)
			break;
	*speed = map[i].speed;
	*width = map[i].width;
}

static void sroce_dev_port_speed_update(struct sroce_dev *sdev,
					struct net_device *ndev)
{
	struct ethtool_link_ksettings ks;
	u32 mbps = SPEED_1000;	/* for netdevs that do not know */
	u16 speed;
	u8 width;

	ASSERT_RTNL();
	if (!sroce_get_link_ksettings(ndev, &ks) &&
	    ks.base.speed != SPEED_UNKNOWN)
		mbps = ks.base.speed;
	sroce_speed_from_netdev(mbps, &speed, &width);
	WRITE_ONCE(sdev->port_speed, speed);
	WRITE_ONCE(sdev->port_width, width);
	WRITE_ONCE(sdev->link_mbps, mbps);
}

static void sroce_dev_port_event(struct sroce_dev *sdev,
				 enum ib_event_type type)
{
	struct ib_event event = {
		.device = &sdev->ibdev,
		.event = type,
		.element.port_num = SROCE_PORT,
	};

	ib_dispatch_event(&event);
}

/**
 * sroce_dev_port_update() - make the port follow its netdev
 * @sdev: the device
 * @ndev: its lower netdev
 *
 * The port is ACTIVE while the netdev is up, has carrier and an MTU that
 * fits at least a 256-byte IB MTU with headers; otherwise DOWN.  A change of
 * state on a registered device raises IB_EVENT_PORT_ACTIVE or
 * IB_EVENT_PORT_ERR.  The active MTU and speed are refreshed every time.
 *
 * Context: Process context. Caller holds rtnl_lock, @ndev's instance lock
 * where it has one (sroce_netdev_lock_ops()), and sroce_bind_lock.
 */
void sroce_dev_port_update(struct sroce_dev *sdev, struct net_device *ndev)
{
	enum ib_mtu mtu = sroce_mtu_from_netdev(READ_ONCE(ndev->mtu));
	u32 old = sdev->port_state;
	u32 state;

	lockdep_assert_held(&sroce_bind_lock);
	state = netif_running(ndev) && netif_carrier_ok(ndev) && mtu ?
		IB_PORT_ACTIVE : IB_PORT_DOWN;
	sroce_dev_port_speed_update(sdev, ndev);
	WRITE_ONCE(sdev->active_mtu, mtu);
	WRITE_ONCE(sdev->port_state, state);
	if (state == old || !sdev->registered)
		return;
	sroce_dbg(sdev, "port %s, active MTU %d\n",
		  state == IB_PORT_ACTIVE ? "active" : "down",
		  mtu ? ib_mtu_enum_to_int(mtu) : 0);
	if (state == IB_PORT_ACTIVE) {
		sroce_dev_port_event(sdev, IB_EVENT_PORT_ACTIVE);
	} else {
		sroce_count(sdev, SROCE_CNT_LINK_DOWNED);
		sroce_dev_port_event(sdev, IB_EVENT_PORT_ERR);
	}
}
