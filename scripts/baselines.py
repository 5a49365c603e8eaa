"""Vendor baselines on the GPU, timed with CUDA events (median of repetitions):
cuBLAS SGEMV through torch.mv on the whitepaper's 60989 x 1100 matrix and on 32768 x 32768,
a CUB-backed sum (torch.sum) of 2^28 floats, a device-to-device copy of 2^28 floats, and
cuBLAS SGEMM through torch.matmul at 4096^3 (FP32: TF32 switched off, checked on a sample of
rows against float64). Writes CSV to the path given as the first argument: every row has
gbs (bytes / median time) and, for SGEMM, gflops (2 N^3 / median time). Inputs are random
(never zeros).

With the runtime studies (launch, transfers) beside them: host<->device copies of 2^10 to 2^28
floats from pageable and pinned host memory (Tensor.copy_, CUDA events, each copy checked),
and, through CuPy when it is installed, a 1 x 1 empty-kernel launch + stream synchronise on the
host clock (spinning, the driver's default with one context) and 1000 launches with one
synchronise: what a plain CUDA program gets, to set beside clvscu's launch rows."""
import csv
import statistics
import sys
import time

import torch


def time_ms(fn, reps=50, warmup=5):
    """Median, minimum and count of CUDA-event timings of fn (ms)."""
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


def sgemm(dev, add, n=4096):
    """cuBLAS SGEMM at n^3 in true FP32 (the same problem as clvscu's sgemm family)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    a = torch.rand(n, n, device=dev) * 2 - 1
    b = torch.rand(n, n, device=dev) * 2 - 1
    c = torch.empty(n, n, device=dev)
    rows = torch.arange(0, n, n // 64, device=dev)
    ref = (a[rows].double() @ b.double()).float()
    got = torch.matmul(a, b)[rows]
    # TF32 (10-bit mantissa) would miss this by about 1e-2 at K = 4096; FP32 by about 1e-5.
    assert torch.allclose(got, ref, rtol=0, atol=1e-3), "torch.matmul is not FP32 SGEMM"
    add("sgemm", "cuBLAS SGEMM via torch.matmul (TF32 off)", str(n), 3 * n * n * 4,
        lambda: torch.matmul(a, b, out=c), flops=2 * n ** 3, reps=100)


def transfers(dev, add):
    """Host<->device copies, pageable and pinned host memory, 4 KiB to 1 GiB, verified."""
    for k in (10, 14, 18, 22, 26, 28):
        n = 1 << k
        src = torch.rand(n) * 2 - 1
        d = torch.empty(n, device=dev)
        for pinned in (False, True):
            h = src.pin_memory() if pinned else src.clone()
            back = torch.empty(n, pin_memory=pinned)
            kind = "pinned" if pinned else "pageable"
            d.copy_(h, non_blocking=pinned)
            back.copy_(d, non_blocking=pinned)
            torch.cuda.synchronize()
            assert torch.equal(back, src), f"{kind} round trip of 2^{k} floats changed data"
            add(f"h2d-{kind}", f"Tensor.copy_ host to device ({kind})", str(n), n * 4,
                lambda: d.copy_(h, non_blocking=pinned), reps=20)
            add(f"d2h-{kind}", f"Tensor.copy_ device to host ({kind})", str(n), n * 4,
                lambda: back.copy_(d, non_blocking=pinned), reps=20)
        del src, d, h, back


def launches(rows):
    """A 1 x 1 empty-kernel launch + synchronise on the host clock (CuPy), and 1000 launches
    with one synchronise; skipped (with a note) where CuPy is missing."""
    try:
        import cupy
    except ImportError:
        print("note: CuPy not installed; no launch baseline")
        return
    k = cupy.RawKernel(r"""
extern "C" __global__ void launch_empty(const float* in, float* out, unsigned n)
{ if (blockIdx.x * blockDim.x + threadIdx.x == 0) out[0] = (float)n; }""", "launch_empty")
    x = cupy.zeros(1, dtype=cupy.float32)
    y = cupy.zeros(1, dtype=cupy.float32)
    s = cupy.cuda.Stream(non_blocking=False)
    with s:
        k((1,), (1,), (x, y, cupy.uint32(7)))
        s.synchronize()
        assert float(y[0]) == 7.0, "the empty kernel did not run"
        for reps, per in ((2000, 1), (50, 1000)):
            times = []
            for _ in range(reps + 10):
                t0 = time.perf_counter()
                for _ in range(per):
                    k((1,), (1,), (x, y, cupy.uint32(per)))
                s.synchronize()
                times.append((time.perf_counter() - t0) / per * 1e3)
            times = times[10:]
            med = statistics.median(times)
            rows.append({
                "baseline": "launch-1x1" if per == 1 else "launch-back-to-back-1000",
                "library": "CuPy RawKernel launch + Stream.synchronize (host clock, per launch)",
                "size": "1", "bytes": 0, "median_ms": f"{med:.6f}",
                "min_ms": f"{min(times):.6f}", "reps": len(times), "gbs": "0",
                "gflops": "",
            })


def main(out):
    torch.manual_seed(1)
    dev = torch.device("cuda")
    rows = []

    def add(name, what, size, nbytes, fn, flops=0, reps=50):
        med, mn, n = time_ms(fn, reps=reps)
        rows.append({
            "baseline": name, "library": what, "size": size, "bytes": nbytes,
            "median_ms": f"{med:.6f}", "min_ms": f"{mn:.6f}", "reps": n,
            "gbs": f"{nbytes / (med * 1e-3) / 1e9:.2f}",
            "gflops": f"{flops / (med * 1e-3) / 1e9:.1f}" if flops else "",
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
    del x, y
    sgemm(dev, add)
    transfers(dev, add)
    launches(rows)
    with open(out, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        wr.writeheader()
        wr.writerows(rows)
    for r in rows:
        rate = f"{r['gflops']:>9} GFLOP/s" if r["gflops"] else f"{r['gbs']:>9} GB/s"
        if r["bytes"] == 0:
            rate = "(host clock, per launch)"
        print(f"{r['baseline']:6} {r['size']:>12} {r['median_ms']:>10} ms {rate}  ({r['library']})")
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "baselines.csv")
