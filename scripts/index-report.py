"""Tables of an index-width folder (scripts/gpu-index.sh), computed from its CSVs only:
  index_prs.csv   PR [CI] of every kernel at u32/u32, u64/u64 and native/native
  index-report.md the same as Markdown, and the fair PRs of the default and modern studies
Usage: python3 scripts/index-report.py FOLDER"""
import csv
import os
import sys

WIDTHS = ["u32", "u64", "native"]


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def fmt(r):
    return f"{float(r['pr']):.3f} [{float(r['pr_ci_lo']):.3f}, {float(r['pr_ci_hi']):.3f}]"


def main(folder):
    by_kernel = {}
    for r in rows(os.path.join(folder, "index-width", "prs.csv")):
        kernel = f"{r['family']}/{r['variant']}"
        by_kernel.setdefault(kernel, {})[r["sweep_value"]] = r
    table = []
    for kernel, per in by_kernel.items():
        row = {"kernel": kernel}
        for w in WIDTHS:
            r = per.get(w)
            row[f"pr_{w}"] = f"{float(r['pr']):.4f}" if r else ""
            row[f"fair_{w}"] = r["fair"] if r else ""
            row[f"metric_opencl_{w}"] = f"{float(r['metric_a']):.1f}" if r else ""
            row[f"metric_cuda_{w}"] = f"{float(r['metric_b']):.1f}" if r else ""
        table.append(row)
    with open(os.path.join(folder, "index_prs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0].keys()))
        w.writeheader()
        w.writerows(table)
    unit = {r["family"]: r["metric_unit"] for r in rows(os.path.join(folder, "index-width", "prs.csv"))}
    md = ["| kernel | PR u32/u32 | PR u64/u64 | PR native/native (unfair) | OpenCL / CUDA at u32 |",
          "|---|---|---|---|---|"]
    for kernel, per in by_kernel.items():
        cells = [fmt(per[w]) if w in per else "-" for w in WIDTHS]
        u = per.get("u32")
        speeds = f"{float(u['metric_a']):.0f} / {float(u['metric_b']):.0f} {unit[kernel.split('/')[0]]}" if u else "-"
        md.append(f"| {kernel} | " + " | ".join(cells) + f" | {speeds} |")
    for study in ["default", "modern"]:
        path = os.path.join(folder, study, "prs.csv")
        if not os.path.exists(path):
            continue
        md += ["", f"Fair PRs of study `{study}` (u32 on both sides):", "",
               "| comparison | PR [CI] | fair |", "|---|---|---|"]
        md += [f"| {r['comparison']} | {fmt(r)} | {r['fair']} |" for r in rows(path)]
    with open(os.path.join(folder, "index-report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main(sys.argv[1])
