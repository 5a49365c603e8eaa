"""Vendor baselines on the GPU, timed with CUDA events (median of repetitions):
cuBLAS SGEMV through torch.mv on the whitepaper's 60989 x 1100 matrix and on 32768 x 32768,
a CUB-backed sum (torch.sum) of 2^28 floats, and a device-to-device copy of 2^28 floats.
Writes CSV to the path given as the first argument. Inputs are random (never zeros)."""
import csv
import statistics
import sys

import torch


def time_ms(fn, reps=50, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times), min(times), len(times)


def main(out):
    torch.manual_seed(1)
    dev = torch.device("cuda")
    rows = []

    def add(name, what, size, nbytes, fn):
        med, mn, n = time_ms(fn)
        rows.append({
            "baseline": name, "library": what, "size": size, "bytes": nbytes,
            "median_ms": f"{med:.6f}", "min_ms": f"{mn:.6f}", "reps": n,
            "gbs": f"{nbytes / (med * 1e-3) / 1e9:.2f}",
        })

    for (h, w) in [(60989, 1100), (32768, 32768)]:
        m = torch.rand(h, w, device=dev) * 2 - 1
        v = torch.rand(w, device=dev) * 2 - 1
        ref = (m.double() @ v.double()).float()
        got = torch.mv(m, v)
        assert torch.allclose(got, ref, rtol=1e-3, atol=1e-3), "torch.mv does not match"
        add("sgemv", "cuBLAS SGEMV via torch.mv", f"{h}x{w}", (h * w + w + h) * 4, lambda: torch.mv(m, v))
        del m, v, ref, got
    n = 1 << 28
    x = torch.rand(n, device=dev) * 2 - 1
    assert abs(float(torch.sum(x)) - float(torch.sum(x.double()))) < 1.0
    add("sum", "CUB-backed reduction via torch.sum", str(n), n * 4, lambda: torch.sum(x))
    y = torch.empty_like(x)
    add("copy", "device-to-device copy via Tensor.copy_", str(n), 2 * n * 4, lambda: y.copy_(x))
    with open(out, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        wr.writeheader()
        wr.writerows(rows)
    for r in rows:
        print(f"{r['baseline']:6} {r['size']:>12} {r['median_ms']:>10} ms {r['gbs']:>9} GB/s  ({r['library']})")
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "baselines.csv")
