/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * compat.h - the one place where kernel API differences live.
 *
 * Force-included into every sroce source by Kbuild; no source file includes
 * it and no source file tests LINUX_VERSION_CODE.  Each entry is keyed on a
 * SROCE_HAVE_* macro that Kbuild defines from a probe of the headers being
 * built against (the probe list is in drivers/sroce/Kbuild), never on a
 * version number, because distributions backport API changes (the UDP
 * tunnel change below reached 7.0 and 7.1 distribution kernels).  Each entry
 * names the kernel version and the upstream change that moved the API, and
 * wraps it in an sroce_-named helper that the core files call instead.
 *
 * Supported: Linux 6.1 (Debian 12) first; 6.12 and 7.x kept compiling.
 * The floor is enforced once, by drivers/sroce/Kbuild.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/net.h>
#include <linux/timer.h>
#include <net/sock.h>
#include <net/udp_tunnel.h>

/*
 * 7.2 ("udp_tunnel: pass struct sock to setup_udp_tunnel_sock() and
 * udp_tunnel_sock_release()"): the tunnel helpers take the struct sock
 * instead of the struct socket.  Probe: SROCE_HAVE_UDP_TUNNEL_SK.
 */
static inline void sroce_udp_tunnel_setup(struct net *net, struct socket *sock,
					  struct udp_tunnel_sock_cfg *cfg)
{
#ifdef SROCE_HAVE_UDP_TUNNEL_SK
	setup_udp_tunnel_sock(net, sock->sk, cfg);
#else
	setup_udp_tunnel_sock(net, sock, cfg);
#endif
}

static inline void sroce_udp_tunnel_release(struct socket *sock)
{
#ifdef SROCE_HAVE_UDP_TUNNEL_SK
	udp_tunnel_sock_release(sock->sk);
#else
	udp_tunnel_sock_release(sock);
#endif
}

/*
 * 6.11 (dd6d7f8574d7, "RDMA: Pass entire uverbs attr bundle to create cq
 * function"): the last argument of ib_device_ops.create_cq is the uverbs
 * attribute bundle, not the udata; the udata is the bundle's driver_udata,
 * and a kernel CQ comes with no bundle at all.  sroce_create_cq() takes a
 * struct sroce_create_cq_arg and gets its udata (NULL for a kernel CQ) from
 * sroce_create_cq_udata().  Probe: SROCE_HAVE_CREATE_CQ_ATTRS.
 */
#ifdef SROCE_HAVE_CREATE_CQ_ATTRS
#include <rdma/uverbs_ioctl.h>
#define sroce_create_cq_arg uverbs_attr_bundle
static inline struct ib_udata *
sroce_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define sroce_create_cq_arg ib_udata
struct ib_udata;
static inline struct ib_udata *sroce_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/*
 * 6.16 ("timers: Rename from_timer() to timer_container_of()"): the old
 * name is gone in 7.x.  Probe: SROCE_HAVE_TIMER_CONTAINER_OF.
 */
#ifdef SROCE_HAVE_TIMER_CONTAINER_OF
#define sroce_timer_container(var, timer, field) \
	timer_container_of(var, timer, field)
#else
#define sroce_timer_container(var, timer, field) from_timer(var, timer, field)
#endif

#endif /* SROCE_COMPAT_H */
