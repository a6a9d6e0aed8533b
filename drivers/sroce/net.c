// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * net.c - sroce's attachment to the network stack.
 *
 *  - UDP 4791 sockets, one IPv4 and one IPv6 per network namespace, opened
 *    with the namespace's first sroce device and closed with its last.
 *  - The binding of each device to its lower netdev: a reference on the
 *    netdev, a table from netdev to device for the receive path, and the
 *    netdev notifier that makes the port follow the netdev and tears the
 *    device down when the netdev goes away (or leaves the namespace).
 *  - The receive entry point (encap_rcv of the sockets).
 */
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/route.h>

#include "hdr.h"
#include "icrc.h"
#include "sroce.h"
#include "trace.h"

/**
 * struct sroce_net - sroce's state in one network namespace
 * @lock: protects @users, @sock4 and @sock6; taken under sroce_bind_lock
 * @users: devices bound to a netdev of this namespace
 * @sock4: the IPv4 UDP 4791 socket while @users > 0
 * @sock6: the IPv6-only UDP 4791 socket while @users > 0, or NULL when the
 *	namespace has no IPv6
 */
struct sroce_net {
	struct mutex lock; /* see above; nests inside sroce_bind_lock */
	unsigned int users;
	struct socket *sock4;
	struct socket *sock6;
};

static unsigned int sroce_net_id __read_mostly;

/*
 * sroce_bind_lock serialises binding and unbinding devices and netdevs, and
 * guards every write to the netdev table, sroce_dev.{ndev,snet,bound,
 * registered,port_state,active_mtu}.  Taken under rtnl_lock when both are
 * needed (the notifier runs with rtnl held), and under the netdev's
 * instance lock too where the kernel has one for it (6.15 and later; the
 * notifier of such a netdev runs with it held); never held across calls
 * into ib_core that can block on device unregistration.
 */
DEFINE_MUTEX(sroce_bind_lock);

/* netdev -> bound device; RCU readers, writers hold sroce_bind_lock. */
static DEFINE_HASHTABLE(sroce_ndev_table, 6);

static struct sroce_dev *sroce_net_lookup_rcu(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	hash_for_each_possible_rcu(sroce_ndev_table, sdev, bind_node,
				   (unsigned long)ndev) {
		if (rcu_access_pointer(sdev->ndev) == ndev)
			return sdev;
	}
	return NULL;
}

static struct sroce_dev *sroce_net_lookup_locked(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	lockdep_assert_held(&sroce_bind_lock);
	hash_for_each_possible(sroce_ndev_table, sdev, bind_node,
			       (unsigned long)ndev) {
		if (rcu_access_pointer(sdev->ndev) == ndev)
			return sdev;
	}
	return NULL;
}

/*
 * The device a datagram that arrived on (or is addressed to) @ndev is for:
 * the one bound to @ndev, or, for a VLAN netdev, the one bound to the
 * netdev under it in the same namespace.  ib_core gives a RoCE port the
 * addresses of its netdev's VLANs as GIDs (roce_gid_mgmt.c), so their
 * traffic is the device's.
 */
static struct sroce_dev *sroce_net_lookup_rx_rcu(struct net_device *ndev)
{
	struct sroce_dev *sdev = sroce_net_lookup_rcu(ndev);
	struct net_device *real;

	while (!sdev && is_vlan_dev(ndev)) {
		real = vlan_dev_real_dev(ndev);
		if (!net_eq(dev_net(real), dev_net(ndev)))
			return NULL;
		ndev = real;
		sdev = sroce_net_lookup_rcu(ndev);
	}
	return sdev;
}

/* encap_rcv of the UDP 4791 sockets.  Softirq; consumes the skb. */
static int sroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct sroce_dev *sdev;

	rcu_read_lock();
	sdev = sroce_net_lookup_rx_rcu(skb->dev);
	if (sdev && ib_device_try_get(&sdev->ibdev)) {
		rcu_read_unlock();
		sroce_rx(sdev, skb);
		ib_device_put(&sdev->ibdev);
		return 0;
	}
	rcu_read_unlock();
	sroce_global_count(SROCE_GCNT_RX_NO_DEVICE);
	kfree_skb(skb);
	return 0;
}

static struct socket *sroce_udp_open(struct net *net, int family)
{
	struct udp_tunnel_sock_cfg tnl = {
		.encap_type = 1,
		.encap_rcv = sroce_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.family = family,
		.local_udp_port = htons(ROCE_V2_UDP_DPORT),
		/* RoCEv2 sends a zero UDP checksum; the ICRC covers it. */
		.use_udp6_rx_checksums = 0,
		.ipv6_v6only = family == AF_INET6,
	};
	struct socket *sock;
	int err;

	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	sroce_udp_tunnel_setup(net, sock, &tnl);
	return sock;
}

static void sroce_net_close(struct sroce_net *snet)
{
	lockdep_assert_held(&snet->lock);
	if (snet->sock6)
		sroce_udp_tunnel_release(snet->sock6);
	sroce_udp_tunnel_release(snet->sock4);
	snet->sock4 = NULL;
	snet->sock6 = NULL;
	sroce_obj_destroyed(SROCE_OBJ_NETNS_SOCKETS);
}

static int sroce_net_open(struct sroce_net *snet, struct net *net)
{
	struct socket *sock;

	lockdep_assert_held(&snet->lock);
	sock = sroce_udp_open(net, AF_INET);
	if (IS_ERR(sock))
		return PTR_ERR(sock);
	snet->sock4 = sock;

	/* A namespace without IPv6 still carries RoCEv2 over IPv4. */
	sock = sroce_udp_open(net, AF_INET6);
	if (IS_ERR(sock) && PTR_ERR(sock) != -EAFNOSUPPORT) {
		sroce_udp_tunnel_release(snet->sock4);
		snet->sock4 = NULL;
		return PTR_ERR(sock);
	}
	snet->sock6 = IS_ERR(sock) ? NULL : sock;
	sroce_obj_created(SROCE_OBJ_NETNS_SOCKETS);
	return 0;
}

static struct sroce_net *sroce_net_get(struct net *net)
{
	struct sroce_net *snet = net_generic(net, sroce_net_id);
	int err = 0;

	mutex_lock(&snet->lock);
	if (!snet->users)
		err = sroce_net_open(snet, net);
	if (!err)
		snet->users++;
	mutex_unlock(&snet->lock);
	return err ? ERR_PTR(err) : snet;
}

static void sroce_net_put(struct sroce_net *snet)
{
	mutex_lock(&snet->lock);
	if (!--snet->users)
		sroce_net_close(snet);
	mutex_unlock(&snet->lock);
}

static int sroce_net_check_lower(struct net_device *ndev)
{
	struct sroce_dev *other;

	ASSERT_RTNL();
	lockdep_assert_held(&sroce_bind_lock);
	if (ndev->reg_state != NETREG_REGISTERED)
		return -ENODEV;
	if (ndev->type != ARPHRD_ETHER) {
		pr_info_ratelimited("%s: not an Ethernet device\n", ndev->name);
		return -EPROTONOSUPPORT;
	}
	/*
	 * ib_core would give a port on a VLAN netdev no address GIDs at all
	 * (roce_gid_mgmt.c only adds those of the port's netdev and of its
	 * upper devices); on the netdev below, the VLAN's addresses are GIDs.
	 */
	if (is_vlan_dev(ndev)) {
		pr_info_ratelimited("%s: a VLAN device; add the link on %s, its VLANs' addresses become GIDs\n",
				    ndev->name, vlan_dev_real_dev(ndev)->name);
		return -EOPNOTSUPP;
	}
	other = sroce_net_lookup_locked(ndev);
	if (other) {
		pr_info_ratelimited("%s: already carries %s\n", ndev->name,
				    dev_name(&other->ibdev.dev));
		return -EEXIST;
	}
	return 0;
}

/**
 * sroce_net_bind() - bind a new device to its lower netdev
 * @sdev: the device, not yet registered
 * @ndev: the netdev; the caller holds a reference for the duration
 *
 * Checks that @ndev can carry sroce, opens the namespace's sockets if this
 * is its first device, takes sroce's own reference on @ndev and publishes
 * the device to the receive path.  The port state is initialised from the
 * netdev; no event is raised before registration.
 *
 * Context: Process context. Takes rtnl_lock, @ndev's instance lock where
 * it has one, and sroce_bind_lock.
 * Return: 0, -ENODEV if @ndev is going away, -EPROTONOSUPPORT if it is not
 * Ethernet, -EEXIST if it already carries an sroce device, or the error
 * from opening UDP port 4791 (-EADDRINUSE if another driver holds it).
 */
int sroce_net_bind(struct sroce_dev *sdev, struct net_device *ndev)
{
	struct sroce_net *snet;
	int err;

	rtnl_lock();
	/* The netdev notifier's order (include/sroce/compat.h). */
	sroce_netdev_lock_ops(ndev);
	mutex_lock(&sroce_bind_lock);
	err = sroce_net_check_lower(ndev);
	if (err)
		goto out_unlock;
	snet = sroce_net_get(dev_net(ndev));
	if (IS_ERR(snet)) {
		err = PTR_ERR(snet);
		pr_info_ratelimited("%s: cannot open UDP port %u: %d\n",
				    ndev->name, ROCE_V2_UDP_DPORT, err);
		goto out_unlock;
	}
	sdev->snet = snet;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	WRITE_ONCE(sdev->net, dev_net(ndev));
	rcu_assign_pointer(sdev->ndev, ndev);
	hash_add_rcu(sroce_ndev_table, &sdev->bind_node, (unsigned long)ndev);
	sdev->bound = true;
	sroce_dev_port_update(sdev, ndev);
out_unlock:
	mutex_unlock(&sroce_bind_lock);
	sroce_netdev_unlock_ops(ndev);
	rtnl_unlock();
	return err;
}

static void sroce_net_unbind_locked(struct sroce_dev *sdev)
{
	struct net_device *ndev;

	lockdep_assert_held(&sroce_bind_lock);
	if (!sdev->bound)
		return;
	ndev = rcu_dereference_protected(sdev->ndev,
					 lockdep_is_held(&sroce_bind_lock));
	hash_del_rcu(&sdev->bind_node);
	RCU_INIT_POINTER(sdev->ndev, NULL);
	sdev->bound = false;
	sroce_net_put(sdev->snet);
	sdev->snet = NULL;
	/*
	 * Receive-path readers that found the device before the unhash only
	 * use it under their own device reference; readers of sdev->ndev are
	 * RCU readers, and the netdev is freed only after an RCU grace period.
	 */
	netdev_put(ndev, &sdev->ndev_tracker);
}

/**
 * sroce_net_unbind() - undo sroce_net_bind(), if it is still in effect
 * @sdev: the device
 *
 * Context: Process context. Takes sroce_bind_lock.
 */
void sroce_net_unbind(struct sroce_dev *sdev)
{
	mutex_lock(&sroce_bind_lock);
	sroce_net_unbind_locked(sdev);
	mutex_unlock(&sroce_bind_lock);
}

/**
 * sroce_net_mark_registered() - note that ib_register_device() completed
 * @sdev: the device
 *
 * From now on the netdev notifier raises port events and unregisters the
 * device if its netdev goes away.  If that already happened while the
 * device was being registered, the caller must unregister it.
 *
 * Context: Process context. Takes sroce_bind_lock.
 * Return: true if the device is still bound to its netdev.
 */
bool sroce_net_mark_registered(struct sroce_dev *sdev)
{
	bool bound;

	mutex_lock(&sroce_bind_lock);
	sdev->registered = true;
	bound = sdev->bound;
	mutex_unlock(&sroce_bind_lock);
	return bound;
}

static void sroce_net_lower_gone(struct sroce_dev *sdev)
{
	lockdep_assert_held(&sroce_bind_lock);
	sroce_dbg(sdev, "lower netdev going away, removing the device\n");
	sroce_net_unbind_locked(sdev);
	if (!sdev->registered)
		return;	/* sroce_dev_newlink() sees !bound and cleans up */
	/*
	 * No reference means the device is already being unregistered (by
	 * "rdma link delete" or rmmod); that path finishes the job.
	 */
	if (ib_device_try_get(&sdev->ibdev)) {
		ib_unregister_device_queued(&sdev->ibdev);
		ib_device_put(&sdev->ibdev);
	}
}

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *sdev;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_UNREGISTER:
		break;
	default:
		return NOTIFY_DONE;
	}

	mutex_lock(&sroce_bind_lock);
	sdev = sroce_net_lookup_locked(ndev);
	if (sdev && event == NETDEV_UNREGISTER)
		sroce_net_lower_gone(sdev);
	else if (sdev)
		sroce_dev_port_update(sdev, ndev);
	mutex_unlock(&sroce_bind_lock);
	return NOTIFY_DONE;
}

static struct notifier_block sroce_netdev_notifier = {
	.notifier_call = sroce_netdev_event,
};

static int __net_init sroce_net_init_ns(struct net *net)
{
	struct sroce_net *snet = net_generic(net, sroce_net_id);

	mutex_init(&snet->lock);
	return 0;
}

/*
 * Every netdev of a dying namespace is unregistered or moved out by the
 * pernet device operations, which run before this subsystem's exit, and
 * each such netdev unbinds its sroce device.  So no device uses the
 * sockets any more here.
 */
static void __net_exit sroce_net_exit_ns(struct net *net)
{
	struct sroce_net *snet = net_generic(net, sroce_net_id);

	WARN_ON_ONCE(snet->users);
	mutex_destroy(&snet->lock);
}

static struct pernet_operations sroce_net_ops = {
	.init = sroce_net_init_ns,
	.exit = sroce_net_exit_ns,
	.id = &sroce_net_id,
	.size = sizeof(struct sroce_net),
};

/**
 * sroce_net_init() - attach sroce to the network stack, and pick the ICRC
 *	engine (icrc.c) before any device can send
 *
 * Context: Process context (module init).
 * Return: 0 or a negative errno.
 */
int sroce_net_init(void)
{
	int err;

	sroce_icrc_init();
	err = register_pernet_subsys(&sroce_net_ops);
	if (err)
		goto err_uninit_icrc;
	err = register_netdevice_notifier(&sroce_netdev_notifier);
	if (err)
		goto err_unregister_pernet;
	return 0;

err_unregister_pernet:
	unregister_pernet_subsys(&sroce_net_ops);
err_uninit_icrc:
	sroce_icrc_uninit();
	return err;
}

/**
 * sroce_net_uninit() - detach sroce from the network stack
 *
 * Context: Process context (module exit).
 *
 * Called after every device is gone, so every socket is closed.  The final
 * synchronize_net() waits out receive handlers still running on other
 * CPUs before the module text goes away.
 */
void sroce_net_uninit(void)
{
	unregister_netdevice_notifier(&sroce_netdev_notifier);
	unregister_pernet_subsys(&sroce_net_ops);
	synchronize_net();
	sroce_icrc_uninit();
}

/* The headroom every RoCEv2 packet needs below its BTH. */
static unsigned int sroce_net_headroom(struct net_device *ndev)
{
	return LL_RESERVED_SPACE(ndev) + sizeof(struct ipv6hdr) +
	       sizeof(struct udphdr);
}

/**
 * sroce_net_alloc_skb() - allocate a packet for the device's netdev
 * @sdev: the device
 * @len: bytes from the BTH to the end of the ICRC
 *
 * Context: Any context.
 * Return: an skb with room for the link, IP and UDP headers below @len
 * bytes of (uninitialised) data, or NULL.
 */
struct sk_buff *sroce_net_alloc_skb(struct sroce_dev *sdev, unsigned int len)
{
	struct net_device *ndev;
	struct sk_buff *skb = NULL;
	unsigned int room;

	rcu_read_lock();
	ndev = rcu_dereference(sdev->ndev);
	if (ndev) {
		room = sroce_net_headroom(ndev);
		skb = alloc_skb(room + len + ndev->needed_tailroom, GFP_ATOMIC);
		if (skb) {
			skb_reserve(skb, room);
			skb_put(skb, len);
		}
	}
	rcu_read_unlock();
	return skb;
}

static void sroce_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	uh = skb_push(skb, sizeof(*uh));
	uh->source = htons(sport);
	uh->dest = htons(ROCE_V2_UDP_DPORT);
	uh->len = htons(skb->len);
	uh->check = 0;	/* the ICRC protects the payload */
	skb_reset_transport_header(skb);
}

static void sroce_push_ip4(struct net *net, struct sk_buff *skb,
			   const struct sroce_av *av, u8 tos, __be32 saddr,
			   __be32 daddr)
{
	struct iphdr *iph;

	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = tos;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->ttl;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = saddr;
	iph->daddr = daddr;
	__ip_select_ident(net, iph, 1);
	ip_send_check(iph);
	skb->protocol = htons(ETH_P_IP);
}

static void sroce_push_ip6(struct sk_buff *skb, const struct sroce_av *av,
			   u8 tos)
{
	struct ipv6hdr *ip6h;
	unsigned int paylen = skb->len;

	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, tos, htonl(av->flow_label));
	ip6h->payload_len = htons(paylen);
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->ttl;
	ip6h->saddr = av->saddr;
	ip6h->daddr = av->daddr;
	skb->protocol = htons(ETH_P_IPV6);
}

/* The ICRC field ends the linear area, or the fragment sroce_tx_seal() added. */
static void sroce_put_icrc(struct sk_buff *skb)
{
	__le32 icrc = sroce_icrc(skb);

	if (skb_is_nonlinear(skb))
		skb_store_bits(skb, skb->len - SROCE_ICRC_SIZE, &icrc,
			       sizeof(icrc));
	else
		memcpy(skb_tail_pointer(skb) - SROCE_ICRC_SIZE, &icrc,
		       sizeof(icrc));
}

/*
 * A packet for an address of this host: hand it to the receive path of the
 * sroce device that owns the address, without the IP stack, as the wire
 * would deliver it, headers included.  It never leaves this host's memory,
 * so it carries no ICRC (the field is zero) and the receiver checks none:
 * computing one on each side cost a CRC pass over every payload twice.
 */
static int sroce_net_deliver_local(struct net *net, const struct sroce_av *av,
				   struct sk_buff *skb)
{
	struct sroce_dev *sdev;
	struct net_device *ndev;

	rcu_read_lock();
	if (av->network_type == RDMA_NETWORK_IPV4)
		ndev = __ip_dev_find(net, av->daddr.s6_addr32[3], false);
	else
		ndev = ipv6_dev_find(net, &av->daddr, NULL);
	sdev = ndev ? sroce_net_lookup_rx_rcu(ndev) : NULL;
	if (!sdev || !ib_device_try_get(&sdev->ibdev)) {
		rcu_read_unlock();
		kfree_skb(skb);
		return -EHOSTUNREACH;
	}
	/* As if it had arrived there: a VLAN's id goes into UD completions. */
	skb->dev = ndev;
	rcu_read_unlock();
	skb_pull(skb, skb_transport_offset(skb));
	sroce_rx_local(sdev, skb);
	ib_device_put(&sdev->ibdev);
	return 0;
}

/*
 * The route cache of a connected QP, whose packets all go to one peer; a
 * UD QP sends each work request somewhere else and looks every route up.
 * Routes to a local address are cached too: looked up for every packet
 * they took over a third of the requester's time per loopback packet
 * (Documentation/performance.rst).  The cache drops a route the FIB has
 * since invalidated (an address removed, a netdev gone), local or not.
 */
static struct dst_cache *sroce_xmit_cache(struct sroce_qp *qp)
{
	if (qp && sroce_qp_connected(qp))
		return &qp->dst_cache;
	return NULL;
}

static int sroce_xmit4(struct net *net, struct net_device *ndev,
		       struct sroce_qp *qp, const struct sroce_av *av,
		       struct sk_buff *skb, u16 sport, u8 tos)
{
	struct dst_cache *cache = sroce_xmit_cache(qp);
	__be32 saddr = av->saddr.s6_addr32[3];
	__be32 daddr = av->daddr.s6_addr32[3];
	struct rtable *rt = NULL;
	int err;
	struct flowi4 fl4 = {
		.flowi4_oif = av->ifindex ? av->ifindex : ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.saddr = saddr,
		.daddr = daddr,
	};

	sroce_flowi4_set_tos(&fl4, av->tos);
	if (cache)
		rt = dst_cache_get_ip4(cache, &saddr);
	if (!rt) {
		rt = ip_route_output_key(net, &fl4);
		if (IS_ERR(rt)) {
			kfree_skb(skb);
			return PTR_ERR(rt);
		}
		if (cache)
			dst_cache_set_ip4(cache, &rt->dst, saddr);
	}
	sroce_push_udp(skb, sport);
	sroce_push_ip4(net, skb, av, tos, saddr, daddr);
	if (rt->rt_type == RTN_LOCAL) {
		ip_rt_put(rt);
		return sroce_net_deliver_local(net, av, skb);
	}
	sroce_put_icrc(skb);
	skb_dst_set(skb, &rt->dst);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	err = ip_local_out(net, NULL, skb);
	return net_xmit_eval(err);
}

static int sroce_xmit6(struct net *net, struct net_device *ndev,
		       struct sroce_qp *qp, const struct sroce_av *av,
		       struct sk_buff *skb, u16 sport, u8 tos)
{
	struct dst_cache *cache = sroce_xmit_cache(qp);
	struct dst_entry *dst = NULL;
	int err;
	struct flowi6 fl6 = {
		.flowi6_oif = av->ifindex ? av->ifindex : ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.saddr = av->saddr,
		.daddr = av->daddr,
	};
	bool local;

	if (cache)
		dst = dst_cache_get(cache);
	if (!dst) {
		dst = ip6_dst_lookup_flow(net, NULL, &fl6, NULL);
		if (IS_ERR(dst)) {
			kfree_skb(skb);
			return PTR_ERR(dst);
		}
		if (cache)
			dst_cache_set_ip6(cache, dst, &fl6.saddr);
	}
	local = dst->dev->flags & IFF_LOOPBACK;
	sroce_push_udp(skb, sport);
	sroce_push_ip6(skb, av, tos);
	if (local) {
		dst_release(dst);
		return sroce_net_deliver_local(net, av, skb);
	}
	sroce_put_icrc(skb);
	skb_dst_set(skb, dst);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	err = ip6_local_out(net, NULL, skb);
	return net_xmit_eval(err);
}

/**
 * sroce_net_xmit() - send a RoCEv2 packet
 * @sdev: the device sending
 * @qp: the QP sending, whose UDP source port is used, and for RC and UC
 *	its route cache; NULL for packets that belong to no QP
 * @av: the destination
 * @skb: the packet from the BTH to the ICRC field, from
 *	sroce_net_alloc_skb(); consumed
 *
 * Adds the UDP and IP headers (ECN-capable while the device's reaction
 * point is on: sroce_cc_tos()) and the ICRC and sends the packet through
 * the IP stack of the device's namespace; a packet for an address of this
 * host goes straight to the owning device's receive path instead, without
 * an ICRC.  Every packet is traced (sroce_tx) before it is sent; one that
 * cannot be is counted in tx_errors and traced as a drop.
 *
 * Context: Process or softirq context (not hardirq, not with interrupts
 * off).
 * Return: 0, or a negative errno if the packet was dropped.
 */
int sroce_net_xmit(struct sroce_dev *sdev, struct sroce_qp *qp,
		   const struct sroce_av *av, struct sk_buff *skb)
{
	u16 sport = qp ? qp->sport : IB_ROCE_UDP_ENCAP_VALID_PORT_MIN;
	u8 tos = sroce_cc_tos(sdev, av->tos);
	struct net_device *ndev;
	struct net *net;
	int err;

	trace_sroce_tx(sdev, qp, skb);
	local_bh_disable();
	rcu_read_lock();
	ndev = rcu_dereference(sdev->ndev);
	if (!ndev) {
		rcu_read_unlock();
		kfree_skb(skb);
		err = -ENODEV;
		goto out;
	}
	net = dev_net(ndev);
	skb->dev = ndev;
	skb->priority = rt_tos2priority(av->tos);
	if (av->network_type == RDMA_NETWORK_IPV4)
		err = sroce_xmit4(net, ndev, qp, av, skb, sport, tos);
	else
		err = sroce_xmit6(net, ndev, qp, av, skb, sport, tos);
	rcu_read_unlock();
out:
	local_bh_enable();
	if (err)
		sroce_drop(sdev, qp ? qp->ibqp.qp_num : 0, 0, SROCE_CNT_TX_ERRORS);
	else
		sroce_count(sdev, SROCE_CNT_TX_PACKETS);
	return err;
}
