"""Derived tables from a GPU suite folder (no number is typed in; all are computed from CSVs):
  pr_drift.csv        how far each PR moved between pass1 and pass2 of the same call
  baseline_ratios.csv our best kernels as a ratio to the vendor baselines of the same run
                      (GB/s; GFLOP/s for SGEMM against cuBLAS SGEMM)
Usage: python3 scripts/report.py results/<gpu>-<date>"""
import csv
import os
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main(folder):
    studies = sorted(d for d in os.listdir(os.path.join(folder, "pass1")) if os.path.isdir(os.path.join(folder, "pass1", d)))
    drift = []
    for s in studies:
        p1 = {r["comparison"]: r for r in rows(os.path.join(folder, "pass1", s, "prs.csv"))}
        p2 = {r["comparison"]: r for r in rows(os.path.join(folder, "pass2", s, "prs.csv"))}
        for key, a in p1.items():
            b = p2.get(key)
            if b is None:
                continue
            pa, pb = float(a["pr"]), float(b["pr"])
            drift.append({"study": s, "comparison": key, "pr_pass1": f"{pa:.4f}", "pr_pass2": f"{pb:.4f}",
                          "moved_pct": f"{abs(pb - pa) / pa * 100:.2f}"})
    with open(os.path.join(folder, "pr_drift.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(drift[0].keys()))
        w.writeheader()
        w.writerows(drift)
    moved = sorted(float(d["moved_pct"]) for d in drift)
    over = [d for d in drift if float(d["moved_pct"]) >= 2.0]
    print(f"PR drift pass1->pass2: {len(drift)} PRs, median {moved[len(moved)//2]:.2f}%, max {moved[-1]:.2f}%, {len(over)} moved >= 2%")
    for d in over:
        print(f"  {d['study']}/{d['comparison']}: {d['pr_pass1']} -> {d['pr_pass2']} ({d['moved_pct']}%)")

    # SGEMM is judged in GFLOP/s (its own column), everything else in GB/s.
    base = {(r["baseline"], r["size"]): float(r.get("gflops") or r["gbs"])
            for r in rows(os.path.join(folder, "baselines.csv"))}
    meas = []
    for s in studies:
        meas += [r for r in rows(os.path.join(folder, "pass1", s, "measurements.csv")) if r["status"] == "ok"]
    targets = [
        ("matvec", "60989x1100", ("sgemv", "60989x1100"), "cuBLAS SGEMV (torch.mv)"),
        ("matvec", "32768x32768", ("sgemv", "32768x32768"), "cuBLAS SGEMV (torch.mv)"),
        ("reduce", "268435456", ("sum", "268435456"), "CUB sum (torch.sum)"),
        ("bandwidth", "268435456", ("copy", "268435456"), "device copy (Tensor.copy_)"),
        ("sgemm", "4096", ("sgemm", "4096"), "cuBLAS SGEMM (torch.matmul, TF32 off)"),
    ]
    out = []
    for family, size, key, label in targets:
        for api in ("OpenCL", "CUDA"):
            cands = [r for r in meas if r["family"] == family and r["size"] == size and r["api"] == api and not r["sweep_param"]]
            if family == "bandwidth":
                cands = [r for r in cands if r["variant"] == "read"]
            if not cands or key not in base:
                continue
            best = max(cands, key=lambda r: float(r["metric"]))
            out.append({"family": family, "size": size, "api": api, "best_variant": best["variant"],
                        "study": best["study"], "ours": f"{float(best['metric']):.1f}", "unit": best["metric_unit"],
                        "baseline": label, "baseline_value": f"{base[key]:.1f}",
                        "ratio": f"{float(best['metric']) / base[key]:.3f}"})
    with open(os.path.join(folder, "baseline_ratios.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0].keys()))
        w.writeheader()
        w.writerows(out)
    for r in out:
        print(f"{r['family']:9} {r['size']:>12} {r['api']:6} {r['best_variant']:9} {r['ours']:>8} / {r['baseline_value']:>8} {r['unit']} = {r['ratio']}  ({r['baseline']})")


if __name__ == "__main__":
    main(sys.argv[1])
