#!/usr/bin/env python3
"""The compiler studies of one GPU run folder (scripts/gpu-compiler.sh) as Markdown tables:
second-stage options, Listing 4's unroll at point B, the reductions across sizes, the FDTD3d
unroll points in the paper's Fig. 7 form (time relative to CUDA without pragmas), the FFT at
three index widths, the compute-bound flag studies with cuBLAS SGEMM beside them, and SASS
totals. Reads only the CSVs the run wrote; prints to stdout.

    python3 scripts/compiler-report.py results/h100-2026-11-22-compiler
"""
import csv
import os
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def prs(folder, study):
    path = os.path.join(folder, study, "prs.csv")
    return rows(path) if os.path.exists(path) else []


def fmt(x, digits=3):
    return f"{float(x):.{digits}f}"


def pr_table(folder, study, title):
    out = [f"### {title} (`{study}`)", "", "| comparison | OpenCL | CUDA | unit | PR [95% CI] | fair |",
           "|---|--:|--:|---|--:|---|"]
    for r in prs(folder, study):
        out.append(f"| {r['comparison']} | {float(r['metric_a']):.1f} | {float(r['metric_b']):.1f} | "
                   f"{r['metric_unit']} | {fmt(r['pr'])} [{fmt(r['pr_ci_lo'])}, {fmt(r['pr_ci_hi'])}] | "
                   f"{'yes' if r['fair'] == 'true' else 'no'} |")
    return out + [""]


def reduce_sizes(folder):
    table = {}
    sizes = []
    for r in prs(folder, "reduce-sizes"):
        size = r["sweep_value"]
        if size not in sizes:
            sizes.append(size)
        table.setdefault(r["variant"], {})[size] = fmt(r["pr"])
    out = ["### Reductions, fair, across sizes (`reduce-sizes`): PR", "",
           "| variant | " + " | ".join(sizes) + " |", "|---|" + "--:|" * len(sizes)]
    for variant, by_size in table.items():
        out.append(f"| {variant} | " + " | ".join(by_size.get(s, "") for s in sizes) + " |")
    return out + [""]


def fig7(folder):
    path = os.path.join(folder, "fdtd-unroll", "measurements.csv")
    if not os.path.exists(path):
        return []
    ms = rows(path)
    base = [float(m["median_s"]) for m in ms
            if m["comparison"] == "fdtd3d/none" and m["api"] == "CUDA" and m["status"] == "ok"]
    if not base:
        return []
    out = ["### FDTD3d unroll points, time relative to CUDA without pragmas (`fdtd-unroll`, Fig. 7 form)", "",
           "| comparison | OpenCL pragmas | OpenCL | CUDA pragmas | CUDA |", "|---|---|--:|---|--:|"]
    by = {}
    for m in ms:
        by.setdefault(m["comparison"], {})[m["api"]] = m
    for name, sides in by.items():
        cl, cu = sides.get("OpenCL"), sides.get("CUDA")
        rel = lambda m: fmt(float(m["median_s"]) / base[0]) if m and m["status"] == "ok" else "-"
        out.append(f"| {name} | {cl['unroll'] if cl else ''} | {rel(cl)} | {cu['unroll'] if cu else ''} | {rel(cu)} |")
    return out + [""]


def sgemm_vs_cublas(folder):
    path = os.path.join(folder, "baselines.csv")
    if not os.path.exists(path):
        return []
    cublas = [float(r["gflops"]) for r in rows(path) if r["baseline"] == "sgemm" and r["gflops"]]
    if not cublas:
        return []
    out = [f"### SGEMM 4096³ against cuBLAS SGEMM ({cublas[0]:.0f} GFLOP/s, TF32 off, same call)", "",
           "| comparison | OpenCL GFLOP/s | ratio | CUDA GFLOP/s | ratio |", "|---|--:|--:|--:|--:|"]
    for r in prs(folder, "flags-compute"):
        if r["family"] == "sgemm":
            a, b = float(r["metric_a"]), float(r["metric_b"])
            out.append(f"| {r['comparison']} | {a:.0f} | {a / cublas[0]:.3f} | {b:.0f} | {b / cublas[0]:.3f} |")
    return out + [""]


def sass_totals(folder, pairs=("matvec/tuned", "matvec/listing4", "reduce/tuned", "fft/fft512",
                               "stencil/fdtd3d", "sgemm/blocked")):
    path = os.path.join(folder, "inspect", "sass_classes.csv")
    if not os.path.exists(path):
        return []
    totals = {}
    for r in rows(path):
        key = (r["pair"], r["api"])
        totals.setdefault(key, {}).setdefault(r["class"], 0)
        totals[key][r["class"]] += int(r["count"])
    out = ["### SASS of both front ends' PTX, assembled by the same driver JIT (`inspect --sass`)", "",
           "| kernel | API | total | arithmetic | logic-shift | flow-control | ld.global | ld.shared |",
           "|---|---|--:|--:|--:|--:|--:|--:|"]
    for pair in pairs:
        for api in ("OpenCL", "CUDA"):
            c = totals.get((pair, api))
            if c:
                out.append(f"| {pair} | {api} | {sum(c.values())} | {c.get('arithmetic', 0)} | "
                           f"{c.get('logic-shift', 0)} | {c.get('flow-control', 0)} | "
                           f"{c.get('ld.global', 0)} | {c.get('ld.shared', 0)} |")
    return out + [""]


def main(folder):
    parts = []
    parts += pr_table(folder, "default", "Default study, fair")
    parts += pr_table(folder, "second-stage", "Second-stage options")
    parts += pr_table(folder, "listing4-unroll", "Listing 4, unroll at point B")
    parts += reduce_sizes(folder)
    parts += fig7(folder)
    parts += pr_table(folder, "fdtd-unroll", "FDTD3d unroll points")
    parts += pr_table(folder, "fft", "FFT at three index widths")
    parts += pr_table(folder, "flags-compute", "Flags on compute-bound kernels")
    parts += sgemm_vs_cublas(folder)
    parts += sass_totals(folder)
    print("\n".join(parts))


if __name__ == "__main__":
    main(sys.argv[1])
