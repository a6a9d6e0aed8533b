#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Turn the samples a "make bench" guest wrote into a table, JSON, a plot
and the generated part of Documentation/performance.rst.

usage: bench-report.py RESULTS_DIR [--devices A B] [--json F] [--plot F]
                       [--rst F] [--meta KEY=VALUE ...]

RESULTS_DIR holds samples.tsv and meta.tsv (tests/bench/guest.sh).  Medians
are taken per device and workload over the runs; only ratios between the
two devices of one run mean anything under emulation: A's over B's (by
default sroce and rxe; sroce and sroce-base to measure a change).  The
table goes to stdout.  Exits 1 if a headline workload has no sample for
either device.
"""

import argparse
import json
import math
import os
import statistics
import sys

A, B = "sroce", "rxe"

# (workload, metric, label, "higher"/"lower" is better, target ratio or None)
ROWS = [
    ("write_bw_64k", "bw_MBps", "ib_write_bw 64 KiB (MB/s)", "higher", 4.0),
    ("read_bw_64k", "bw_MBps", "ib_read_bw 64 KiB (MB/s)", "higher", 4.0),
    ("send_bw_64k", "bw_MBps", "ib_send_bw 64 KiB (MB/s)", "higher", 4.0),
    ("write_bw_64k_m1024", "bw_MBps", "ib_write_bw 64 KiB, MTU 1024 (MB/s)", "higher", 4.0),
    ("read_bw_64k_m1024", "bw_MBps", "ib_read_bw 64 KiB, MTU 1024 (MB/s)", "higher", 4.0),
    ("send_bw_64k_m1024", "bw_MBps", "ib_send_bw 64 KiB, MTU 1024 (MB/s)", "higher", 4.0),
    ("wire_write_bw_64k", "bw_MBps", "two guests: ib_write_bw 64 KiB (MB/s)", "higher", 3.0),
    ("wire_read_bw_64k", "bw_MBps", "two guests: ib_read_bw 64 KiB (MB/s)", "higher", 3.0),
    ("wire_send_bw_64k", "bw_MBps", "two guests: ib_send_bw 64 KiB (MB/s)", "higher", 3.0),
    ("wire_write_bw_64k_m1024", "bw_MBps", "two guests: ib_write_bw 64 KiB, MTU 1024 (MB/s)",
     "higher", 3.0),
    ("wire_read_bw_64k_m1024", "bw_MBps", "two guests: ib_read_bw 64 KiB, MTU 1024 (MB/s)",
     "higher", 3.0),
    ("wire_send_bw_64k_m1024", "bw_MBps", "two guests: ib_send_bw 64 KiB, MTU 1024 (MB/s)",
     "higher", 3.0),
    ("write_rate_64_q1", "rate_Mpps", "ib_write_bw 64 B, 1 QP (Mmsg/s)", "higher", None),
    ("write_rate_64_q4", "rate_Mpps", "ib_write_bw 64 B, 4 QPs (Mmsg/s)", "higher", 4.0),
    ("write_rate_64_q16", "rate_Mpps", "ib_write_bw 64 B, 16 QPs (Mmsg/s)", "higher", None),
    ("write_rate_64_q64", "rate_Mpps", "ib_write_bw 64 B, 64 QPs (Mmsg/s)", "higher", 4.0),
    ("scale_1000", "setup_s", "1,000 RC QPs: create + connect (s)", "lower", None),
    ("scale_10000", "setup_s", "10,000 RC QPs: create + connect (s)", "lower", None),
    ("scale_10000", "teardown_s", "10,000 RC QPs: destroy (s)", "lower", None),
    ("scale_1000", "mem_per_qp_b", "1,000 RC QPs: memory per QP (B)", "lower", 1.0),
    ("scale_10000", "mem_per_qp_b", "10,000 RC QPs: memory per QP (B)", "lower", 1.0),
    ("scale_10000", "kmem_per_qp_b", "10,000 RC QPs: slab + vmalloc per QP (B)", "lower", None),
    ("scale_4", "rate_Mpps", "4 RC QPs busy, 64 B WRITEs (Mmsg/s)", "higher", None),
    ("scale_10000", "rate_Mpps", "10,000 RC QPs busy, 64 B WRITEs (Mmsg/s)", "higher", None),
    ("send_lat_2", "lat_us", "ib_send_lat 2 B (us, median)", "lower", 0.5),
    ("write_lat_2", "lat_us", "ib_write_lat 2 B (us, median)", "lower", 0.5),
    ("read_lat_2", "lat_us", "ib_read_lat 2 B (us, median)", "lower", 0.5),
    ("send_lat_2", "lat_p99_us", "ib_send_lat 2 B (us, p99)", "lower", 0.5),
    ("write_lat_2", "lat_p99_us", "ib_write_lat 2 B (us, p99)", "lower", 0.5),
    ("read_lat_2", "lat_p99_us", "ib_read_lat 2 B (us, p99)", "lower", 0.5),
    ("write_bw_64k", "cpu_s_per_GiB", "ib_write_bw 64 KiB (CPU s/GiB)", "lower", 0.33),
    ("read_bw_64k", "cpu_s_per_GiB", "ib_read_bw 64 KiB (CPU s/GiB)", "lower", 0.33),
    ("send_bw_64k", "cpu_s_per_GiB", "ib_send_bw 64 KiB (CPU s/GiB)", "lower", 0.33),
    ("nvme_randread_4k_qd32", "iops", "NVMe-oF 4 KiB randread QD32 (IOPS)", "higher", 2.0),
    ("nvme_seqread_128k_qd16", "bw_MiBps", "NVMe-oF 128 KiB seq read QD16 (MiB/s)", "higher", 3.0),
]
# What the two guests' wire carries with no RDMA device, UDP datagrams of
# one packet each (tests/bench/pair.sh), for the wire rows of each IB MTU:
# the ceiling of any RoCE driver's bandwidth on it.
WIRE_UDP = (("wire_udp", "IB MTU 4096: 4112 B"), ("wire_udp_m1024", "IB MTU 1024: 1040 B"))
MEMCPY = ("memcpy_64k", "bw_MBps")
MEMCPY_BIG = ("memcpy_64m", "bw_MBps")
MEMCPY_TARGET = 0.5
# The message rate with 10,000 QPs busy, as a share of the rate with 4.
SCALE_TARGET = 0.5


def num(v):
    try:
        f = float(v)
    except ValueError:
        return None
    return None if math.isnan(f) else f


def load(results):
    samples = []
    with open(os.path.join(results, "samples.tsv"), encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 5:
                continue
            run, dev, work, metric, value = parts
            samples.append({"run": int(run), "device": dev, "workload": work,
                            "metric": metric, "value": num(value)})
    meta = {}
    path = os.path.join(results, "meta.tsv")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition("\t")
                meta[k] = v
    return samples, meta


def values(samples, dev, work, metric):
    return [s["value"] for s in samples
            if s["device"] == dev and s["workload"] == work and s["metric"] == metric
            and s["value"] is not None]


def failures(samples, dev, work):
    return sum(1 for s in samples if s["device"] == dev and s["workload"] == work
               and s["value"] is None)


def median(vals):
    return statistics.median(vals) if vals else None


def fmt(v, digits=3):
    if v is None:
        return "-"
    if v == 0:
        return "0"
    mag = math.floor(math.log10(abs(v)))
    dec = max(0, digits - 1 - mag)
    return f"{v:.{dec}f}"


def verdict(ratio, better, target):
    if ratio is None or target is None:
        return "-"
    met = ratio >= target if better == "higher" else ratio <= target
    return "met" if met else "not met"


def wire_udp(samples, work):
    """The UDP rate of the wire a two-guest workload ran on."""
    name = WIRE_UDP[1][0] if work.endswith("_m1024") else WIRE_UDP[0][0]
    return median(values(samples, "udp", name, "bw_MBps"))


def wire_ceiling(samples, rows):
    """For each two-guest row, the highest ratio to rxe the wire allows:
    its UDP rate over rxe's median.  A target above it cannot be met on
    that wire by any driver, and the verdict says so."""
    for r in rows:
        if not r["workload"].startswith("wire_"):
            continue
        udp = wire_udp(samples, r["workload"])
        mb = r[B]["median"]
        r["wire_ceiling"] = udp / mb if udp is not None and mb else None
        if r["verdict"] == "not met" and r["wire_ceiling"] is not None \
                and r["wire_ceiling"] < r["target_ratio"]:
            r["verdict"] = f"not met: the wire allows {fmt(r['wire_ceiling'])}x"


def analyse(samples):
    rows = []
    for work, metric, label, better, target in ROWS:
        va = values(samples, A, work, metric)
        vb = values(samples, B, work, metric)
        ma, mb = median(va), median(vb)
        ratio = ma / mb if ma is not None and mb else None
        rows.append({
            "workload": work, "metric": metric, "label": label, "better": better,
            A: {"median": ma, "samples": va, "failed": failures(samples, A, work)},
            B: {"median": mb, "samples": vb, "failed": failures(samples, B, work)},
            "ratio": ratio,
            "target": (">= " if better == "higher" else "<= ") + f"{target:g}x"
                      if B == "rxe" and target is not None else "-",
            "verdict": verdict(ratio, better, target) if B == "rxe" else "-",
            "target_ratio": target if B == "rxe" else None,
        })
    wire_ceiling(samples, rows)
    mc = values(samples, "cpu", *MEMCPY)
    mcb = values(samples, "cpu", *MEMCPY_BIG)
    wa = median(values(samples, A, "write_bw_64k", "bw_MBps"))
    wb = median(values(samples, B, "write_bw_64k", "bw_MBps"))
    mm = median(mc)
    frac = {d: (w / mm if w is not None and mm else None) for d, w in ((A, wa), (B, wb))}
    memcpy = {
        "memcpy_64k_MBps": {"median": mm, "samples": mc},
        "memcpy_64m_MBps": {"median": median(mcb), "samples": mcb},
        "write_bw_64k_fraction": frac,
        "target": f">= {MEMCPY_TARGET:g}",
        "verdict": ("-" if frac[A] is None else
                    "met" if frac[A] >= MEMCPY_TARGET else "not met"),
    }
    held = {}
    for dev in (A, B):
        r4 = median(values(samples, dev, "scale_4", "rate_Mpps"))
        r10k = median(values(samples, dev, "scale_10000", "rate_Mpps"))
        held[dev] = r10k / r4 if r4 and r10k is not None else None
    memcpy["scale_rate_held"] = held
    memcpy["wire_udp_MBps"] = {
        name: {"median": median(values(samples, "udp", name, "bw_MBps")),
               "samples": values(samples, "udp", name, "bw_MBps")}
        for name, _ in WIRE_UDP}
    sweep = {}
    for dev in (A, B):
        pts = {}
        for s in samples:
            if s["device"] == dev and s["workload"].startswith("write_bw_sweep_") \
                    and s["metric"] == "bw_MBps":
                size = int(s["workload"].rsplit("_", 1)[1])
                pts.setdefault(size, [])
                if s["value"] is not None:
                    pts[size].append(s["value"])
        sweep[dev] = {str(k): {"median": median(v), "min": min(v) if v else None,
                               "max": max(v) if v else None, "samples": v}
                      for k, v in sorted(pts.items())}
    return rows, memcpy, sweep


def table(rows, memcpy):
    head = ("workload", A, B, f"{A}/{B}", "target", "")
    lines = [head]
    for r in rows:
        lines.append((r["label"], fmt(r[A]["median"]), fmt(r[B]["median"]),
                      fmt(r["ratio"]), r["target"], r["verdict"]))
    fa, fb = memcpy["write_bw_64k_fraction"][A], memcpy["write_bw_64k_fraction"][B]
    lines.append(("64 KiB WRITE / memcpy 64 KiB", fmt(fa), fmt(fb), "-",
                  memcpy["target"], memcpy["verdict"]))
    held = memcpy["scale_rate_held"]
    lines.append(("rate at 10,000 QPs / at 4 QPs", fmt(held[A]), fmt(held[B]), "-",
                  f">= {SCALE_TARGET:g}", "-" if held[A] is None else
                  "met" if held[A] >= SCALE_TARGET else "not met"))
    for name, label in WIRE_UDP:
        lines.append((f"two guests: UDP, no RDMA, {label} datagrams (MB/s)",
                      fmt(memcpy["wire_udp_MBps"][name]["median"]), "", "", "", ""))
    lines.append(("memcpy 64 KiB, one core (MB/s)", fmt(memcpy["memcpy_64k_MBps"]["median"]),
                  "", "", "", ""))
    lines.append(("memcpy 64 MiB, one core (MB/s)", fmt(memcpy["memcpy_64m_MBps"]["median"]),
                  "", "", "", ""))
    return lines


def print_table(lines):
    w = [max(len(l[i]) for l in lines) for i in range(len(lines[0]))]
    for n, l in enumerate(lines):
        print("  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) if i < 4 else c.ljust(w[i])
                        for i, c in enumerate(l)).rstrip())
        if n == 0:
            print("  ".join("-" * x for x in w))


def rst_table(lines):
    w = [max(len(l[i]) for l in lines) for i in range(len(lines[0]))]
    w = [max(x, 1) for x in w]
    sep = "  ".join("=" * x for x in w)
    out = [sep]
    for n, l in enumerate(lines):
        cells = [c if c else ".." if i == 0 else "" for i, c in enumerate(l)]
        out.append("  ".join(c.ljust(w[i]) for i, c in enumerate(cells)).rstrip())
        if n == 0:
            out.append(sep)
    out.append(sep)
    return out


def plot(sweep, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    for dev, style in ((A, "o-"), (B, "s--")):
        pts = [(int(k), v) for k, v in sweep[dev].items() if v["median"] is not None]
        if not pts:
            continue
        xs = [p[0] for p in pts]
        ys = [p[1]["median"] for p in pts]
        lo = [p[1]["median"] - p[1]["min"] for p in pts]
        hi = [p[1]["max"] - p[1]["median"] for p in pts]
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt=style, capsize=3, label=dev)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("ib_write_bw (MB/s, median; bars: min-max)")
    ax.set_title("RDMA WRITE bandwidth, loopback, IB MTU 4096, one emulated guest")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def rst(rows, memcpy, meta, plot_name):
    runs = meta.get("runs", "?")
    out = [
        ".. SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause",
        "",
        ".. This file is generated by \"make bench\" (scripts/bench-report.py);",
        "   do not edit it by hand.  Documentation/performance.rst includes it.",
        "",
        f"* Measured: {meta.get('start', '?')} to {meta.get('end', '?')}",
        f"* sroce: {meta.get('sroce_commit', '?')}",
        f"* Guest kernel: {meta.get('kernel', '?')} ({meta.get('kernel_version', '?')})",
        f"* Guest: {meta.get('cpus', '?')} vCPUs of QEMU TCG (software emulation, no KVM),"
        f" CPU model \"{meta.get('cpu', '?')}\", {int(meta.get('mem_kib', '0')) // 1024} MiB",
        f"* Host: {meta.get('host_cpus', '?')} cores, {meta.get('host_kernel', '?')},"
        f" load average {meta.get('host_load_start', '?')} before and"
        f" {meta.get('host_load_end', '?')} after (other engineers' guests share it)",
        f"* Tools: perftest {meta.get('perftest', '?')}, {meta.get('fio', '?')}",
        f"* {runs} runs of each device, alternating ({meta.get('kinds', '?')} in each run);"
        f" medians over the runs; bandwidth runs of {meta.get('secs', '?')} s,"
        f" latency of {meta.get('lat_n', '?')} iterations, fio runs of"
        f" {meta.get('fio_secs', '?')} s after 2 s of ramp",
        "",
    ]
    out += rst_table(table(rows, memcpy))
    failed = [(r["label"], d, r[d]["failed"]) for r in rows for d in (A, B) if r[d]["failed"]]
    if failed:
        out += ["", "Failed measurements (left out of the medians):", ""]
        out += [f"* {label}, {dev}: {n} of {runs}" for label, dev, n in failed]
    out += ["", "Every sample, in run order:", ""]
    samp = [("workload", A, B)]
    for r in rows:
        samp.append((r["label"], " ".join(fmt(v) for v in r[A]["samples"]) or "-",
                     " ".join(fmt(v) for v in r[B]["samples"]) or "-"))
    for name, label in WIRE_UDP:
        samp.append((f"two guests: UDP, no RDMA, {label} datagrams (MB/s)",
                     " ".join(fmt(v) for v in memcpy["wire_udp_MBps"][name]["samples"])
                     or "-", ""))
    out += rst_table(samp)
    out += ["", f".. figure:: {plot_name}", "   :alt: ib_write_bw against message size, "
            "sroce and rdma_rxe", "",
            "   ib_write_bw bandwidth against message size, sroce and rdma_rxe "
            "(medians, bars from the lowest to the highest run).", ""]
    return "\n".join(out)


def main():
    global A, B
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--devices", nargs=2, metavar=("A", "B"), default=[A, B])
    ap.add_argument("--json")
    ap.add_argument("--plot")
    ap.add_argument("--rst")
    ap.add_argument("--meta", action="append", default=[])
    args = ap.parse_args()
    A, B = args.devices

    samples, meta = load(args.results)
    for kv in args.meta:
        k, _, v = kv.partition("=")
        meta[k] = v
    rows, memcpy, sweep = analyse(samples)
    print_table(table(rows, memcpy))

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "rows": rows, "memcpy": memcpy,
                       "write_bw_sweep": sweep, "samples": samples}, f, indent=1)
            f.write("\n")
    if args.plot:
        plot(sweep, args.plot)
    if args.rst:
        with open(args.rst, "w", encoding="utf-8") as f:
            f.write(rst(rows, memcpy, meta, os.path.basename(args.plot or "bench.png")))
    missing = [r["label"] for r in rows if r[A]["median"] is None or r[B]["median"] is None]
    if missing:
        print("bench: no result for: " + "; ".join(missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
