#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check RoCEv2 packets in a capture: ICRC and header fields.

usage: roce_check.py [--src ADDR]... [--pmtu N] [--require OPS] [--tshark] [-v] CAPTURE
       roce_check.py --selftest

CAPTURE is a classic pcap file (dumpcap -P) of Ethernet (optionally 802.1Q)
or Linux cooked (SLL) frames.  Every UDP packet to port 4791 is checked:

  * the EtherType must match the IP header's version;
  * the ICRC is recomputed from the packet (IBTA Annex A17: CRC-32 over
    a masked copy of the IP header, the UDP header and the BTH, then
    everything after the BTH up to the ICRC) and compared with the last
    four bytes, little-endian;
  * for packets from an address given with --src (the device under test;
    default: every packet) the header fields are checked against the
    IBTA: opcode known for its transport, TVer 0, P_Key 0xFFFF, reserved
    bits zero, PadCnt matching the payload, zero pad bytes, payload sizes
    for the opcode (First and Middle packets exactly --pmtu, no packet
    more), DETH/AETH reserved bits, the XRCETH of every XRC request (and
    of no XRC response) with its reserved byte zero, UDP source port in
    0xC000-0xFFFF, IPv4 DF set.

With --tshark, tshark's InfiniBand dissector must also decode every packet
cleanly and read the same opcodes (tshark_check).

Prints one line per problem ("BAD: ...") and a summary with the count of
each opcode seen; exits 1 if any packet is bad, if there were no RoCEv2
packets at all, or if an opcode listed in --require (comma-separated hex,
e.g. 0x04,0x11) never appeared from a --src address; 0 otherwise.

Written from the IBTA's rules on its own; it shares no code with sroce.ko
(drivers/sroce/icrc.c), so a bug there cannot hide here.  --selftest checks
it against ICRCs of packets captured from Linux's rdma_rxe.
"""

import argparse
import ipaddress
import struct
import sys
import zlib

ROCE_PORT = 4791

# Headers after the BTH, by low five opcode bits (RC/UC/XRC numbering).
RETH, AETH, ATOMIC, ATOMICACK, IMM, IETH, DETH, FETH, XRCETH = (
    "RETH", "AETH", "AtomicETH", "AtomicAckETH", "ImmDt", "IETH", "DETH", "FETH", "XRCETH")
HDR_LEN = {RETH: 16, AETH: 4, ATOMIC: 28, ATOMICACK: 8, IMM: 4, IETH: 4, DETH: 8, FETH: 4,
           XRCETH: 4}

# op -> (name, headers, payload rule): "pmtu" exactly PMTU, "some" 1..PMTU,
# "any" 0..PMTU, "none" no payload, "eight" exactly 8 bytes.
OPS = {
    0x00: ("SEND_FIRST", [], "pmtu"),
    0x01: ("SEND_MIDDLE", [], "pmtu"),
    0x02: ("SEND_LAST", [], "some"),
    0x03: ("SEND_LAST_IMM", [IMM], "some"),
    0x04: ("SEND_ONLY", [], "any"),
    0x05: ("SEND_ONLY_IMM", [IMM], "any"),
    0x06: ("WRITE_FIRST", [RETH], "pmtu"),
    0x07: ("WRITE_MIDDLE", [], "pmtu"),
    0x08: ("WRITE_LAST", [], "some"),
    0x09: ("WRITE_LAST_IMM", [IMM], "some"),
    0x0A: ("WRITE_ONLY", [RETH], "any"),
    0x0B: ("WRITE_ONLY_IMM", [RETH, IMM], "any"),
    0x0C: ("READ_REQUEST", [RETH], "none"),
    0x0D: ("READ_RESP_FIRST", [AETH], "pmtu"),
    0x0E: ("READ_RESP_MIDDLE", [], "pmtu"),
    0x0F: ("READ_RESP_LAST", [AETH], "some"),
    0x10: ("READ_RESP_ONLY", [AETH], "any"),
    0x11: ("ACK", [AETH], "none"),
    0x12: ("ATOMIC_ACK", [AETH, ATOMICACK], "none"),
    0x13: ("CMP_SWAP", [ATOMIC], "none"),
    0x14: ("FETCH_ADD", [ATOMIC], "none"),
    0x16: ("SEND_LAST_INV", [IETH], "some"),
    0x17: ("SEND_ONLY_INV", [IETH], "any"),
    0x1C: ("FLUSH", [FETH, RETH], "none"),
    0x1D: ("ATOMIC_WRITE", [RETH], "eight"),
}
# Which low opcodes each transport has.
UC_OPS = set(range(0x00, 0x0C))
UD_OPS = {0x04, 0x05}
# Responses: on XRC the only packets without an XRCETH (it follows the BTH).
RESP_OPS = set(range(0x0D, 0x13))
TRANSPORT = {0x00: "RC", 0x20: "UC", 0x60: "UD", 0xA0: "XRC"}


def icrc(l3, ipv6):
    """The ICRC of a RoCEv2 packet, L3 bytes from the IP header to the end
    of the UDP payload (ICRC included, not covered)."""
    ihl = 40 if ipv6 else (l3[0] & 0x0F) * 4
    pseudo = bytearray(l3[:ihl + 8 + 12])
    if ipv6:
        pseudo[0] |= 0x0F          # traffic class (high nibble part)
        pseudo[1:4] = b"\xff\xff\xff"   # traffic class, flow label
        pseudo[7] = 0xFF           # hop limit
    else:
        pseudo[1] = 0xFF           # TOS: DSCP and ECN
        pseudo[8] = 0xFF           # TTL
        pseudo[10:12] = b"\xff\xff"     # header checksum
    pseudo[ihl + 6:ihl + 8] = b"\xff\xff"   # UDP checksum
    pseudo[ihl + 8 + 4] = 0xFF     # BTH byte 4: FECN, BECN, reserved
    # Eight bytes of 0xFF stand for the LRH RoCEv2 does not have: with
    # zlib's all-ones start they leave the register at 0xDEBB20E3.
    crc = zlib.crc32(b"\xff" * 8 + bytes(pseudo) + bytes(l3[ihl + 8 + 12:-4]))
    return crc & 0xFFFFFFFF


def frames(path):
    """(number, linktype, bytes) for each packet of a classic pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError("%s: not a pcap file" % path)
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end = ">"
    else:
        raise ValueError("%s: not a classic pcap file (use dumpcap -P)" % path)
    linktype = struct.unpack(end + "I", data[20:24])[0] & 0x0FFFFFFF
    off, n = 24, 0
    while off + 16 <= len(data):
        incl, orig = struct.unpack(end + "II", data[off + 8:off + 16])
        n += 1
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if incl != orig:
            yield n, linktype, None     # truncated by the snap length
            continue
        yield n, linktype, pkt


def l3_of(linktype, pkt):
    """(ethertype, L3 bytes) of a frame, or (None, None)."""
    if linktype == 1:                   # Ethernet
        off, etype = 14, struct.unpack(">H", pkt[12:14])[0]
        while etype in (0x8100, 0x88A8) and len(pkt) >= off + 4:
            etype = struct.unpack(">H", pkt[off + 2:off + 4])[0]
            off += 4
    elif linktype == 113:               # Linux cooked
        off, etype = 16, struct.unpack(">H", pkt[14:16])[0]
    else:
        return None, None
    return etype, pkt[off:]


class Checker:
    def __init__(self, srcs, pmtu):
        self.srcs = srcs
        self.pmtu = pmtu
        self.bad = []
        self.packets = 0
        self.checked = 0
        self.ops = {}

    def problem(self, n, what):
        self.bad.append("packet %d: %s" % (n, what))

    def packet(self, n, l3, etype):
        if etype in (0x0800, 0x86DD) and l3 and l3[0] >> 4 != (4 if etype == 0x0800 else 6):
            # e.g. an IPv6 packet sent with an IPv4 route's link header
            self.packets += 1
            self.problem(n, "EtherType 0x%04x carries an IP version %d header" % (etype, l3[0] >> 4))
            return
        if etype == 0x0800:
            if len(l3) < 20:
                return
            ihl = (l3[0] & 0x0F) * 4
            total = struct.unpack(">H", l3[2:4])[0]
            if l3[9] != 17:
                return
            src, dst = ipaddress.ip_address(l3[12:16]), ipaddress.ip_address(l3[16:20])
            l3 = l3[:total]         # drop Ethernet padding
            ipv6 = False
        elif etype == 0x86DD:
            if len(l3) < 40 or l3[0] >> 4 != 6 or l3[6] != 17:
                return
            ihl = 40
            l3 = l3[:40 + struct.unpack(">H", l3[4:6])[0]]
            src, dst = ipaddress.ip_address(l3[8:24]), ipaddress.ip_address(l3[24:40])
            ipv6 = True
        else:
            return
        udp = l3[ihl:ihl + 8]
        if len(udp) < 8:
            return
        sport, dport, ulen, ucsum = struct.unpack(">HHHH", udp)
        if dport != ROCE_PORT:
            return
        self.packets += 1
        where = "%s -> %s" % (src, dst)
        if ulen != len(l3) - ihl:
            self.problem(n, "%s: UDP length %d, IP says %d" % (where, ulen, len(l3) - ihl))
            return
        if ulen < 8 + 12 + 4:
            self.problem(n, "%s: UDP payload of %d bytes is shorter than BTH + ICRC" % (where, ulen - 8))
            return
        want = icrc(l3, ipv6)
        got = struct.unpack("<I", l3[-4:])[0]
        ours = not self.srcs or src in self.srcs
        if want != got:
            self.problem(n, "%s: ICRC %08x, computed %08x" % (where, got, want))
        if ours:
            self.checked += 1
            self.fields(n, where, l3, ihl, ipv6, sport)

    def fields(self, n, where, l3, ihl, ipv6, sport):
        bth = l3[ihl + 8:ihl + 20]
        op = bth[0]
        se_m_pad_tver, pkey = bth[1], struct.unpack(">H", bth[2:4])[0]
        pad, tver = (se_m_pad_tver >> 4) & 3, se_m_pad_tver & 0x0F
        what = "%s: opcode 0x%02x" % (where, op)
        if not ipv6 and not l3[6] & 0x40:
            self.problem(n, "%s: IPv4 DF not set" % what)
        if not 0xC000 <= sport <= 0xFFFF:
            self.problem(n, "%s: UDP source port %d outside 0xC000-0xFFFF" % (what, sport))
        if tver != 0:
            self.problem(n, "%s: TVer %d" % (what, tver))
        if pkey != 0xFFFF:
            self.problem(n, "%s: P_Key 0x%04x" % (what, pkey))
        if op == 0x81:              # CNP: BECN set, 16 reserved bytes
            self.ops[op] = self.ops.get(op, 0) + 1
            return
        if bth[4] != 0:
            self.problem(n, "%s: BTH byte 4 (FECN/BECN/reserved) 0x%02x" % (what, bth[4]))
        if bth[8] & 0x7F:
            self.problem(n, "%s: BTH reserved bits after AckReq 0x%02x" % (what, bth[8] & 0x7F))
        transport, low = op & 0xE0, op & 0x1F
        allowed = {0x00: set(OPS), 0x20: UC_OPS, 0x60: UD_OPS,
                   0xA0: set(OPS)}.get(transport, set())
        if low not in allowed:
            self.problem(n, "%s: not an opcode of %s" % (what, TRANSPORT.get(transport, "any supported transport")))
            return
        self.ops[op] = self.ops.get(op, 0) + 1
        name, hdrs, rule = OPS[low]
        if transport == 0x60:
            hdrs = [DETH] + hdrs
        if transport == 0xA0 and low not in RESP_OPS:
            hdrs = [XRCETH] + hdrs
        off = ihl + 20
        for h in hdrs:
            b = l3[off:off + HDR_LEN[h]]
            if len(b) < HDR_LEN[h]:
                self.problem(n, "%s (%s): packet ends inside %s" % (what, name, h))
                return
            if h == DETH and b[4] != 0:
                self.problem(n, "%s (%s): DETH reserved byte 0x%02x" % (what, name, b[4]))
            if h == XRCETH and b[0] != 0:
                self.problem(n, "%s (%s): XRCETH reserved byte 0x%02x" % (what, name, b[0]))
            if h == FETH and (struct.unpack(">I", b)[0] & ~0x13):
                # bits 31:6 reserved, 5:4 the level (0 range, 1 region),
                # 3:0 the placement type (1 global, 2 persistent)
                self.problem(n, "%s (%s): FETH 0x%08x: reserved bits, or a reserved level or type"
                             % (what, name, struct.unpack(">I", b)[0]))
            if h == AETH and (b[0] & 0x80 or (b[0] >> 5) == 2):
                self.problem(n, "%s (%s): AETH syndrome 0x%02x is reserved" % (what, name, b[0]))
            off += HDR_LEN[h]
        plen = len(l3) - 4 - off - pad
        if plen < 0:
            self.problem(n, "%s (%s): headers, pad and ICRC overrun the packet" % (what, name))
            return
        if pad != (-plen) & 3:
            self.problem(n, "%s (%s): PadCnt %d for %d payload bytes" % (what, name, pad, plen))
        if any(l3[off + plen:len(l3) - 4]):
            self.problem(n, "%s (%s): non-zero pad bytes" % (what, name))
        if rule == "none" and plen:
            self.problem(n, "%s (%s): %d payload bytes, expected none" % (what, name, plen))
        if rule == "eight" and plen != 8:
            self.problem(n, "%s (%s): %d payload bytes, expected 8" % (what, name, plen))
        if rule == "some" and plen == 0:
            self.problem(n, "%s (%s): empty Last packet" % (what, name))
        if rule == "pmtu" and self.pmtu and plen != self.pmtu:
            self.problem(n, "%s (%s): First/Middle packet of %d bytes, path MTU %d" % (what, name, plen, self.pmtu))
        elif rule == "pmtu" and plen not in (256, 512, 1024, 2048, 4096):
            self.problem(n, "%s (%s): First/Middle packet of %d bytes, not a path MTU" % (what, name, plen))
        if self.pmtu and plen > self.pmtu:
            self.problem(n, "%s (%s): %d payload bytes, path MTU %d" % (what, name, plen, self.pmtu))


# tshark's expert severities (epan/proto.h): PI_WARN and PI_ERROR.
PI_WARN = 0x00600000
# The one expert note tolerated: a zero UDP checksum over IPv6.  RoCEv2
# sends UDP checksum 0 over IPv6 as over IPv4 (the ICRC covers the packet;
# RFC 6935 allows zero checksums for tunnels), and so does Linux's rdma_rxe;
# Wireshark's UDP dissector reports it as "Illegal checksum value (0)".
TOLERATED = "Illegal checksum value (0)"


def tshark_check(path, srcs, ops):
    """Decode PATH with tshark's InfiniBand dissector: every RoCEv2 packet
    decodes as InfiniBand, none malformed or with a warning or error (but
    TOLERATED over IPv6), and the opcodes from SRCS are OPS.  Returns
    (problems, notes)."""
    import subprocess
    cmd = ["tshark", "-r", path, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=;",
           "-e", "frame.number", "-e", "ip.src", "-e", "ipv6.src", "-e", "udp.dstport",
           "-e", "infiniband.bth.opcode", "-e", "_ws.malformed",
           "-e", "_ws.expert.severity", "-e", "_ws.expert.message"]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, check=False)
    if res.returncode != 0:
        return ["tshark failed: %s" % res.stderr.strip()], []
    bad, tolerated, seen = [], 0, {}
    for line in res.stdout.splitlines():
        f = (line.split("\t") + [""] * 8)[:8]
        num, ip4, ip6, dport, op, malformed, sev, msg = f
        if dport.split(";")[0] != str(ROCE_PORT):
            continue
        where = "tshark frame %s" % num
        if not op:
            bad.append("%s: not decoded as InfiniBand" % where)
            continue
        if malformed:
            bad.append("%s: malformed" % where)
        sevs = [int(x, 0) for x in sev.split(";") if x]
        msgs = msg.split(";") if msg else []
        for i, v in enumerate(sevs):
            m = msgs[i] if i < len(msgs) else "?"
            if v < PI_WARN:
                continue
            if m == TOLERATED and ip6:
                tolerated += 1
                continue
            bad.append("%s: expert: %s" % (where, m))
        src = ip4 or ip6
        if not srcs or (src and ipaddress.ip_address(src) in srcs):
            o = int(op.split(";")[0], 0)
            seen[o] = seen.get(o, 0) + 1
    notes = []
    if tolerated:
        notes.append("tshark: %d IPv6 packets with a zero UDP checksum (tolerated)" % tolerated)
    if seen != ops:
        bad.append("tshark reads opcodes %s from the device under test, roce_check %s" %
                   (hist_str(seen), hist_str(ops)))
    return bad, notes


def hist_str(h):
    return " ".join("0x%02x:%d" % kv for kv in sorted(h.items())) or "none"


def selftest():
    """The reference vectors of wire-format.md section 6, and that a
    flipped bit or a wrong mask is caught."""
    v4 = bytes.fromhex("450000301499400040111214" "0a0700010a070002"
                       "c12112b7001c0000" "1100ffff00000011" "0023eaa2"
                       "1f000001" "ba49a497")
    v6 = bytes.fromhex("60000000001c1140") + ipaddress.ip_address("fd00::1").packed + \
        ipaddress.ip_address("fd00::2").packed + v4[20:-4] + bytes.fromhex("d89debcc")
    ok = True
    for name, pkt, is6 in (("IPv4", v4, False), ("IPv6", v6, True)):
        got = struct.pack("<I", icrc(pkt, is6))
        if got != pkt[-4:]:
            print("selftest: %s vector: computed %s, expected %s" % (name, got.hex(), pkt[-4:].hex()))
            ok = False
    v6m = bytearray(v6)
    v6m[0:4] = bytes.fromhex("602abcde")    # traffic class 0x02, flow label 0xabcde
    v6m[7] = 17                             # hop limit
    if struct.pack("<I", icrc(bytes(v6m), True)) != v6[-4:]:
        print("selftest: the IPv6 variant fields are not masked")
        ok = False
    bad = bytearray(v4)
    bad[-6] ^= 0x01                         # a bit of the AETH MSN
    if struct.pack("<I", icrc(bytes(bad), False)) == v4[-4:]:
        print("selftest: a flipped AETH bit went unnoticed")
        ok = False
    print("selftest: %s" % ("pass" if ok else "FAIL"))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--src", action="append", default=[], help="address of the device under test")
    ap.add_argument("--pmtu", type=int, default=0)
    ap.add_argument("--require", default="", help="opcodes that must appear, e.g. 0x04,0x11")
    ap.add_argument("--tshark", action="store_true",
                    help="also decode with tshark and compare (see tshark_check)")
    ap.add_argument("-v", action="store_true", help="print every packet's verdict")
    ap.add_argument("capture", nargs="?")
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    if not a.capture:
        ap.error("a capture file is needed")
    c = Checker({ipaddress.ip_address(s) for s in a.src}, a.pmtu)
    truncated = 0
    for n, linktype, pkt in frames(a.capture):
        if pkt is None:
            truncated += 1
            continue
        etype, l3 = l3_of(linktype, pkt)
        if etype is not None:
            before = len(c.bad)
            c.packet(n, l3, etype)
            if a.v:
                print("packet %d: %s" % (n, "bad" if len(c.bad) > before else "ok"))
    if a.tshark:
        tbad, notes = tshark_check(a.capture, c.srcs, c.ops)
        c.bad += tbad
        for note in notes:
            print(note)
    for b in c.bad[:50]:
        print("BAD: " + b)
    if len(c.bad) > 50:
        print("BAD: ... and %d more" % (len(c.bad) - 50))
    print("%d RoCEv2 packets, %d with fields checked, %d problems; opcodes %s" %
          (c.packets, c.checked, len(c.bad), hist_str(c.ops)))
    rc = 1 if c.bad else 0
    if truncated:
        print("BAD: %d packets truncated by the capture's snap length" % truncated)
        rc = 1
    if c.packets == 0:
        print("BAD: no RoCEv2 packets in %s" % a.capture)
        rc = 1
    for o in filter(None, a.require.split(",")):
        if int(o, 16) not in c.ops:
            print("BAD: no packet with opcode %s from the device under test" % o)
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
