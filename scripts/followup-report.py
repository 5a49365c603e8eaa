#!/usr/bin/env python3
"""Table of the follow-up experiments (scripts/gpu-followup.sh): PR and both metrics per
experiment kernel directory and comparison, read from the run's CSVs, nothing typed by hand.
    scripts/followup-report.py FOLLOWUP_DIR  -> FOLLOWUP_DIR/followup_prs.csv, prints Markdown"""
import csv
import sys
from pathlib import Path

EXPERIMENTS = ["base", "u32", "wgconst", "u32-wgconst"]


def main(root: Path) -> None:
    rows = []
    for exp in EXPERIMENTS:
        prs = root / exp / "run" / "prs.csv"
        if not prs.exists():
            print(f"missing {prs}", file=sys.stderr)
            continue
        for r in csv.DictReader(prs.open()):
            comparison, _, run_pass = r["comparison"].partition("#")
            rows.append({
                "experiment": exp,
                "comparison": comparison,
                "pass": run_pass or "pass1",
                "opencl": f"{float(r['metric_a']):.1f}",
                "cuda": f"{float(r['metric_b']):.1f}",
                "unit": r["metric_unit"],
                "pr": f"{float(r['pr']):.3f}",
                "pr_ci_lo": f"{float(r['pr_ci_lo']):.3f}",
                "pr_ci_hi": f"{float(r['pr_ci_hi']):.3f}",
            })
    out = root / "followup_prs.csv"
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    comparisons = list(dict.fromkeys(r["comparison"] for r in rows))
    print("| comparison | " + " | ".join(EXPERIMENTS) + " |")
    print("|---|" + "---|" * len(EXPERIMENTS))
    for c in comparisons:
        cells = []
        for exp in EXPERIMENTS:
            prs = [r["pr"] for r in rows if r["experiment"] == exp and r["comparison"] == c]
            cells.append(" / ".join(prs) if prs else "n/a")
        print(f"| {c} | " + " | ".join(cells) + " |")
    print()
    print("| comparison | pass1 GB/s OpenCL / CUDA: " + " | ".join(EXPERIMENTS) + " |")
    print("|---|" + "---|" * len(EXPERIMENTS))
    for c in comparisons:
        cells = []
        for exp in EXPERIMENTS:
            r = next((r for r in rows if r["experiment"] == exp and r["comparison"] == c
                      and r["pass"] == "pass1"), None)
            cells.append(f"{r['opencl']} / {r['cuda']}" if r else "n/a")
        print(f"| {c} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
