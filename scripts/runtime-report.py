"""The runtime studies of one run folder as Markdown: the 1 x 1 launch per wait mode (host
clock, both APIs, with OpenCL's queued->submit->start intervals), back-to-back launches per
second, the grid-size sweep (the OpenCL - CUDA gap per grid), transfer bandwidth (pageable vs
pinned) and the overlap ratio (serial / concurrent time). Reads OUT/launch/measurements.csv and
OUT/transfers/measurements.csv (plain or .gz); prints every number as measured, none edited.
    python3 scripts/runtime-report.py OUT"""
import csv
import gzip
import os
import sys


def rows(out, study):
    for name in ("measurements.csv", "measurements.csv.gz"):
        path = os.path.join(out, study, name)
        if os.path.exists(path):
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rt", newline="") as f:
                return [r for r in csv.DictReader(f) if r["status"] == "ok"]
    return []


def us(x):
    return f"{float(x) * 1e6:.2f}" if x else "—"


def by_comparison(rs):
    out = {}
    for r in rs:
        out.setdefault(r["comparison"], {})[r["api"]] = r
    return out


def launch_table(rs):
    print("## Launch: enqueue -> completion (median µs)\n")
    print("| comparison | timer | wait (OpenCL / CUDA) | OpenCL | CUDA | OpenCL - CUDA | OpenCL queued->submit | OpenCL submit->start |")
    print("|---|---|---|---|---|---|---|---|")
    for name, sides in by_comparison(rs).items():
        a, b = sides.get("OpenCL"), sides.get("CUDA")
        if not a or not b:
            continue
        gap = (float(a["median_s"]) - float(b["median_s"])) * 1e6
        waits = a.get("wait_mode", "") + " / " + b.get("wait_mode", "")
        print(f"| {name} | {a['timer']} | {waits} | {us(a['median_s'])} | {us(b['median_s'])} | "
              f"{gap:+.2f} | {us(a.get('queued_to_submit_s'))} | {us(a.get('submit_to_start_s'))} |")
    print("\nback-to-back rows are per launch (total / N); launches per second = 1 / median. "
          "CUDA has no queued or submit timestamp, so its interval cells do not exist.\n")


def transfer_table(rs):
    print("## Transfers (GB/s at the median)\n")
    print("| comparison | size (floats) | timer | OpenCL | CUDA | PR |")
    print("|---|---|---|---|---|---|")
    sides = by_comparison(rs)
    for name, s in sides.items():
        a, b = s.get("OpenCL"), s.get("CUDA")
        if a and b:
            pr = float(a["metric"]) / float(b["metric"])
            print(f"| {name} | {a['size']} | {a['timer']} | {float(a['metric']):.2f} | "
                  f"{float(b['metric']):.2f} | {pr:.3f} |")
    ser, con = sides.get("transfer/overlap-serial", {}), sides.get("transfer/overlap-concurrent", {})
    print("\n| API | serial (ms) | concurrent (ms) | overlap ratio serial/concurrent |")
    print("|---|---|---|---|")
    for api in ("OpenCL", "CUDA"):
        if api in ser and api in con:
            s, c = float(ser[api]["median_s"]), float(con[api]["median_s"])
            print(f"| {api} | {s * 1e3:.3f} | {c * 1e3:.3f} | {s / c:.2f} |")
    print()


def main(out):
    launch_table(rows(out, "launch"))
    transfer_table(rows(out, "transfers"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
