#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report.py — turn the raw lines of bench/run.sh into ratios, tables and a plot.

Input (one file, written by run.sh), one line each:
    <phase> sample <label> <round> <value>
    <phase> stat <label> <p50> <p90> <n>
    <phase> info <text...>
phase is "idle" or "loaded". Output on stdout:
    ratio <name> <value> target <t> <ok|miss>      (idle run, one per ratio)
then a readable table (idle and loaded side by side) and the growth tables.
Also writes OUTDIR/last-run.md (the same tables in Markdown) and
OUTDIR/growth.svg (startup+close by chips, guarded case by foreign /dev/shm
entries), standard library only.

Ratios of a compared pair are the median over rounds of the per-round
ratio (the pair ran back to back in that round, so a slow moment of the
shared machine hits both); p50/p90 of each variant are over its samples.

usage: report.py RAW OUTDIR "MACHINE LINE"
"""
import collections
import statistics
import sys

CHIPS = [1, 2, 4, 8, 16, 32, 64]
SHM = [0, 100, 1000, 10000]

# name, target, direction ('le' or 'ge'), what, simpler's figure (peer)
RATIOS = [
    ("guarded_overhead_vs_fork_per_case", 0.05, "le",
     "(guarded - plain) cmocka case / fork+_exit+waitpid", "n/a"),
    ("group_begin_end_vs_fork", 1.0, "le",
     "mpf_group_begin + mpf_group_end, no case / fork+_exit+waitpid", "n/a"),
    ("guard_1000_foreign_shm", 1.1, "le",
     "guarded case with 1,000 foreign /dev/shm entries / with none", "n/a"),
    ("ledgered_shm_open_vs_bare", 1.3, "le",
     "shm_open+close+shm_unlink in a guarded case (ledgered, site captured) / libc's own", "n/a"),
    ("startup_16_vs_bare", 1.3, "le",
     "L3+16 chips init+close / bare fork+mailbox+READY+SHUTDOWN+reap+unlink", "n/a (16 subs: 189 ms vs 4.96 ms ours)"),
    ("startup_scaling_64_vs_16", 4.2, "le", "64 chips / 16 chips", "n/a"),
    ("rollback_16_vs_bare", 1.5, "le",
     "chip 7 of 16 fails, init returns rolled back / fork 16, SIGKILL, reap, unlink", "27.5 ms vs 1.4 ms ours"),
    ("nested_l4_vs_l3", 1.2, "le", "L4 -> 2 x L3(8) / 2 x L3(8) in turn", "n/a"),
    ("dispatch_rtt_vs_pingpong", 1.5, "le",
     "noop task round trip p50 / futex ping-pong p50", "93 us vs 24 us ours (p50)"),
    ("dispatch_throughput_2_chips", 0.9, "ge",
     "noop tasks/s over 2 chips / 2 x one chip", "n/a"),
    ("idle_cpu_8_chips", 0.001, "le", "CPU of an idle READY 8-chip tree / wall", "a busy-polling core per child"),
    ("faults_disarmed_cost", 1.02, "le",
     "max(dispatch p50, startup 16) fault points in / compiled out", "n/a"),
]


def load(path):
    samples = collections.defaultdict(lambda: collections.defaultdict(dict))
    stats = collections.defaultdict(dict)
    info = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 3:
                continue
            phase, kind = p[0], p[1]
            if kind == "sample" and len(p) == 5:
                samples[phase][p[2]][int(p[3])] = float(p[4])
            elif kind == "stat" and len(p) == 6:
                stats[phase][p[2]] = (float(p[3]), float(p[4]), int(p[5]))
            elif kind == "info":
                info[phase].append(" ".join(p[2:]))
    return samples, stats, info


def q(values, frac):
    v = sorted(values)
    if not v:
        return float("nan")
    i = int(frac * (len(v) - 1) + 0.5)
    return v[min(i, len(v) - 1)]


def paired(s, a, b, f=lambda x, y: x / y):
    """Median over rounds of f(a_r, b_r)."""
    if a not in s or b not in s:
        return float("nan")
    rounds = sorted(set(s[a]) & set(s[b]))
    vals = [f(s[a][r], s[b][r]) for r in rounds if s[b][r]]
    return statistics.median(vals) if vals else float("nan")


def ratios(s, st):
    r = {}
    r["guarded_overhead_vs_fork_per_case"] = paired(s, "guard_overhead", "fork_per_case")
    r["group_begin_end_vs_fork"] = paired(s, "group_begin_end", "fork_per_group")
    r["guard_1000_foreign_shm"] = paired(s, "guard_shm_1000", "guard_shm_0")
    r["ledgered_shm_open_vs_bare"] = paired(s, "shm_open_ledgered", "shm_open_bare")
    r["startup_16_vs_bare"] = paired(s, "rt_16", "bare_16")
    r["startup_scaling_64_vs_16"] = paired(s, "rt_64", "rt_16")
    r["rollback_16_vs_bare"] = paired(s, "rt_rollback_16", "bare_rollback_16")
    r["nested_l4_vs_l3"] = paired(s, "rt_l4_2x8", "rt_2xl3_8")
    if "dispatch_rtt" in st and "pingpong_rtt" in st:
        r["dispatch_rtt_vs_pingpong"] = st["dispatch_rtt"][0] / st["pingpong_rtt"][0]
    else:
        r["dispatch_rtt_vs_pingpong"] = float("nan")
    r["dispatch_throughput_2_chips"] = paired(s, "tput_2chip", "tput_1chip",
                                              lambda x, y: x / (2 * y))
    idle = list(s.get("idle_cpu_8_chips", {}).values())
    r["idle_cpu_8_chips"] = statistics.median(idle) if idle else float("nan")
    r["faults_disarmed_cost"] = max(paired(s, "faults_in_rtt", "faults_out_rtt"),
                                    paired(s, "faults_in_startup16", "faults_out_startup16"))
    return r


def verdict(v, t, d):
    if v != v:  # NaN
        return "miss"
    return "ok" if (v <= t if d == "le" else v >= t) else "miss"


def fmt(v):
    if v != v:
        return "-"
    if abs(v) < 0.01:
        return f"{v:.6f}"
    return f"{v:.3f}"


def med_p90(s, label, scale=1.0):
    vals = list(s.get(label, {}).values())
    if not vals:
        return "-"
    return f"{q(vals, 0.5) * scale:.2f} / {q(vals, 0.9) * scale:.2f}"


def svg_plot(path, idle, loaded):
    """Two log-log panels, polylines, no third-party modules."""
    W, H, M = 460, 320, 55
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (2 * W, H),
           '<rect width="100%" height="100%" fill="white"/>']
    import math

    def panel(x0, title, xs, series, xlabel, ylabel, xzero):
        pts = [v for _, _, _, ys in series for v in ys if v == v and v > 0]
        if not pts:
            return
        ymin, ymax = min(pts) / 1.3, max(pts) * 1.3
        lx = [math.log10(x if x > 0 else xzero) for x in xs]
        xmin, xmax = min(lx), max(lx)

        def X(x):
            return x0 + M + (math.log10(x if x > 0 else xzero) - xmin) / (xmax - xmin) * (W - 2 * M)

        def Y(y):
            return H - M + 10 - (math.log10(y) - math.log10(ymin)) / (math.log10(ymax) - math.log10(ymin)) * (H - 2 * M)

        out.append(f'<text x="{x0 + W / 2}" y="18" text-anchor="middle" font-size="13">{title}</text>')
        out.append(f'<line x1="{x0 + M}" y1="{H - M + 10}" x2="{x0 + W - M}" y2="{H - M + 10}" stroke="black"/>')
        out.append(f'<line x1="{x0 + M}" y1="{M - 10}" x2="{x0 + M}" y2="{H - M + 10}" stroke="black"/>')
        for x in xs:
            out.append(f'<text x="{X(x):.1f}" y="{H - M + 24}" text-anchor="middle">{x}</text>')
        e = math.floor(math.log10(ymin))
        while 10 ** e <= ymax:
            for m in (1, 2, 5):
                y = m * 10 ** e
                if ymin <= y <= ymax:
                    out.append(f'<line x1="{x0 + M - 4}" y1="{Y(y):.1f}" x2="{x0 + W - M}" y2="{Y(y):.1f}" stroke="#ddd"/>')
                    out.append(f'<text x="{x0 + M - 6}" y="{Y(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
            e += 1
        out.append(f'<text x="{x0 + W / 2}" y="{H - 12}" text-anchor="middle">{xlabel}</text>')
        out.append(f'<text x="{x0 + 14}" y="{H / 2}" transform="rotate(-90 {x0 + 14} {H / 2})" text-anchor="middle">{ylabel}</text>')
        for i, (name, color, dash, ys) in enumerate(series):
            p = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y in zip(xs, ys) if y == y and y > 0)
            out.append(f'<polyline points="{p}" fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>')
            out.append(f'<text x="{x0 + M + 8}" y="{M + 4 + 14 * i}" fill="{color}">{name}</text>')

    def series_of(s, fmtlabel, keys, scale):
        return [q(list(s.get(fmtlabel % k, {}).values()), 0.5) * scale
                if s.get(fmtlabel % k) else float("nan") for k in keys]

    tree = []
    for phase, s, dash in (("idle", idle, ""), ("loaded", loaded, "5,3")):
        if not s:
            continue
        tree.append((f"libworker init+close ({phase})", "#c0392b", dash, series_of(s, "rt_%d", CHIPS, 1e-6)))
        tree.append((f"bare fork+mailbox ({phase})", "#2c3e50", dash, series_of(s, "bare_%d", CHIPS, 1e-6)))
    panel(0, "Startup + close, median", CHIPS, tree, "chips", "ms", 1)
    guard = []
    for phase, s, dash in (("idle", idle, ""), ("loaded", loaded, "5,3")):
        if s:
            guard.append((f"guarded empty case ({phase})", "#27ae60", dash, series_of(s, "guard_shm_%d", SHM, 1.0)))
    panel(W, "Guarded case vs foreign /dev/shm entries", SHM, guard,
          "foreign entries (0 drawn at 10)", "us per case", 10)
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    raw, outdir, machine = sys.argv[1], sys.argv[2], sys.argv[3]
    samples, stats, info = load(raw)
    idle, loaded = samples.get("idle", {}), samples.get("loaded", {})
    ri = ratios(idle, stats.get("idle", {}))
    rl = ratios(loaded, stats.get("loaded", {})) if loaded else {}

    for name, t, d, _, _ in RATIOS:
        print(f"ratio {name} {fmt(ri[name])} target {t:g} {verdict(ri[name], t, d)}")

    md = []
    md.append(f"Machine: {machine}\n")
    md.append("| ratio | idle | loaded (2 hogs) | target | idle verdict | loaded verdict | simpler, same machine (issue 13) |")
    md.append("|---|---|---|---|---|---|---|")
    print()
    print(f"{'ratio':36} {'idle':>10} {'loaded':>10} {'target':>9}  verdict (idle/loaded)")
    for name, t, d, what, peer in RATIOS:
        vi, vl = ri[name], rl.get(name, float("nan"))
        op = "<=" if d == "le" else ">="
        print(f"{name:36} {fmt(vi):>10} {fmt(vl):>10} {op + format(t, 'g'):>9}  "
              f"{verdict(vi, t, d)}/{verdict(vl, t, d) if rl else '-'}")
        md.append(f"| `{name}` | {fmt(vi)} | {fmt(vl)} | {op} {t:g} | {verdict(vi, t, d)} | "
                  f"{verdict(vl, t, d) if rl else '-'} | {peer} |")

    # Variant table: p50 / p90 of every measured quantity.
    rows = [
        ("plain cmocka empty case", "plain_case", "us", 1),
        ("guarded empty case", "guarded_case", "us", 1),
        ("guard overhead (guarded - plain)", "guard_overhead", "us", 1),
        ("fork + _exit + waitpid", "fork_per_case", "us", 1),
        ("mpf_case_begin + mpf_case_end", "core_begin_end", "us", 1),
        ("mpf_group_begin + mpf_group_end, no case", "group_begin_end", "us", 1),
        ("fork + _exit + waitpid (beside the groups)", "fork_per_group", "us", 1),
        ("L3 + 16 chips init + close", "rt_16", "ms", 1e-6),
        ("bare 16 children", "bare_16", "ms", 1e-6),
        ("L3 + 64 chips init + close", "rt_64", "ms", 1e-6),
        ("rollback, chip 7 of 16 fails", "rt_rollback_16", "ms", 1e-6),
        ("bare: fork 16, SIGKILL, reap, unlink", "bare_rollback_16", "ms", 1e-6),
        ("L4 -> 2 x L3(8 chips)", "rt_l4_2x8", "ms", 1e-6),
        ("2 x L3(8 chips) in turn", "rt_2xl3_8", "ms", 1e-6),
        ("noop dispatch RTT, block medians", "dispatch_rtt", "us", 1e-3),
        ("futex ping-pong RTT, block medians", "pingpong_rtt", "us", 1e-3),
        ("noop tasks/s, 1 chip", "tput_1chip", "k/s", 1e-3),
        ("noop tasks/s, 2 chips", "tput_2chip", "k/s", 1e-3),
        ("RTT p50, fault points in (fresh process)", "faults_in_rtt", "us", 1e-3),
        ("RTT p50, fault points out (fresh process)", "faults_out_rtt", "us", 1e-3),
        ("L3+16 startup, fault points in", "faults_in_startup16", "ms", 1e-6),
        ("L3+16 startup, fault points out", "faults_out_startup16", "ms", 1e-6),
    ]
    print()
    print(f"{'quantity':44} {'unit':>4} {'idle p50 / p90':>20} {'loaded p50 / p90':>20}")
    md.append("")
    md.append("| quantity | unit | idle p50 / p90 | loaded p50 / p90 |")
    md.append("|---|---|---|---|")
    for title, label, unit, scale in rows:
        a, b = med_p90(idle, label, scale), med_p90(loaded, label, scale)
        print(f"{title:44} {unit:>4} {a:>20} {b:>20}")
        md.append(f"| {title} | {unit} | {a} | {b} |")
    for phase in ("idle", "loaded"):
        st = stats.get(phase, {})
        for label in ("dispatch_rtt", "pingpong_rtt"):
            if label in st:
                p50, p90, n = st[label]
                line = f"{label} over all {n} round trips ({phase}): p50 {p50 / 1e3:.2f} us, p90 {p90 / 1e3:.2f} us"
                print("# " + line)
                md.append(f"\n{line}")

    # Growth.
    print()
    md.append("\n### Startup + close by number of chips (median / p90, ms; ratio = paired median)\n")
    md.append("| chips | libworker idle | bare idle | ratio idle | libworker loaded | bare loaded | ratio loaded |")
    md.append("|---|---|---|---|---|---|---|")
    print(f"{'chips':>5} {'libworker idle':>16} {'bare idle':>16} {'ratio':>6} {'libworker loaded':>18} {'bare loaded':>16} {'ratio':>6}")
    for n in CHIPS:
        ri_n = paired(idle, f"rt_{n}", f"bare_{n}")
        rl_n = paired(loaded, f"rt_{n}", f"bare_{n}") if loaded else float("nan")
        cols = [med_p90(idle, f"rt_{n}", 1e-6), med_p90(idle, f"bare_{n}", 1e-6), fmt(ri_n),
                med_p90(loaded, f"rt_{n}", 1e-6), med_p90(loaded, f"bare_{n}", 1e-6), fmt(rl_n)]
        print(f"{n:>5} {cols[0]:>16} {cols[1]:>16} {cols[2]:>6} {cols[3]:>18} {cols[4]:>16} {cols[5]:>6}")
        md.append(f"| {n} | " + " | ".join(cols) + " |")
    print()
    md.append("\n### Guarded empty case by foreign /dev/shm entries (median / p90, us per case; ratio to 0 entries, paired)\n")
    md.append("| entries | idle | ratio idle | loaded | ratio loaded |")
    md.append("|---|---|---|---|---|")
    print(f"{'entries':>7} {'idle us':>16} {'ratio':>6} {'loaded us':>16} {'ratio':>6}")
    for n in SHM:
        a = med_p90(idle, f"guard_shm_{n}")
        b = med_p90(loaded, f"guard_shm_{n}")
        ra = paired(idle, f"guard_shm_{n}", "guard_shm_0")
        rb = paired(loaded, f"guard_shm_{n}", "guard_shm_0") if loaded else float("nan")
        print(f"{n:>7} {a:>16} {fmt(ra):>6} {b:>16} {fmt(rb):>6}")
        md.append(f"| {n} | {a} | {fmt(ra)} | {b} | {fmt(rb)} |")
    for phase in ("idle", "loaded"):
        for line in info.get(phase, []):
            print(f"# {phase}: {line}")
            md.append(f"\n{phase}: {line}")

    svg_plot(f"{outdir}/growth.svg", idle, loaded)
    with open(f"{outdir}/last-run.md", "w") as f:
        f.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
