"""Vendor baselines on the GPU, timed with CUDA events (median of repetitions):
cuBLAS SGEMV through torch.mv on the whitepaper's 60989 x 1100 matrix and on 32768 x 32768,
a CUB-backed sum (torch.sum) of 2^28 floats, a device-to-device copy of 2^28 floats, and
cuBLAS SGEMM through torch.matmul at 4096^3 (FP32: TF32 switched off, checked on a sample of
rows against float64), and the 3x3 Sobel X filter on grey float images of 8192^2 and 16384^2
through cuDNN (torch.nn.functional.conv2d, FP32, bytes = one read + one write of the image as
clvscu's sobel family counts them), and cuSPARSE SpMV on the generated matrices of the studies
given (the texture study's three, 2^24 rows and 2^28 entries, by default), built on the GPU by
spmv_matrices.py (next to this script; it must travel with it) bit for bit as clvscu builds
them. Writes CSV to the path given as the first argument: every row has
gbs (bytes / median time) and, for SGEMM, gflops (2 N^3 / median time). Inputs are random
(never zeros).

With study files after it (e.g. harness/shapes.toml), it also measures cuBLAS
SGEMV at every matvec size and torch.sum at every reduce size of those studies, with the study's
size spelling, so that `clvscu report` puts ours / vendor beside each of our rows.

Also, for the runtime studies (launch, transfers): host<->device copies of 2^10 to 2^28
floats from pageable and pinned host memory (Tensor.copy_, CUDA events, each copy checked),
and, through CuPy when it is installed, a 1 x 1 empty-kernel launch + stream synchronise on the
host clock (spinning, the driver's default with one context) and 1000 launches with one
synchronise: what a plain CUDA program gets, to set beside clvscu's launch rows.

With a study of the scan family (the scan comparisons of harness/fair.toml), it measures torch.cumsum (CUB's inclusive
scan, int32) at each of its sizes.

BASELINES_ONLY (environment, comma-separated) runs only the named groups of sgemv, sum, copy,
sobel, sgemm, transfers, launches, spmv, shapes (the studies' sgemv and sum sizes), cumsum (the
studies' scan sizes); unset, all
of them: a GPU visit with a short budget skips the groups its studies do not compare with.
SGEMM_SIZES (environment, comma-separated N) sets the SGEMM sizes; unset, 4096."""
import csv
import os
import statistics
import sys
import time
import tomllib

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


def sgemm_sizes():
    """The SGEMM sizes asked for in SGEMM_SIZES, 4096 by default."""
    text = os.environ.get("SGEMM_SIZES", "4096")
    return [int(t) for t in text.split(",") if t.strip()]


def parse_size(text):
    """clvscu's size spelling: ROWSxCOLS, N or 2^K -> (rows, cols or None)."""
    def num(t):
        t = t.strip()
        if "^" in t:
            b, e = t.split("^")
            return int(b) ** int(e)
        return int(t.replace("_", ""))
    if "x" in text:
        r, c = text.split("x")
        return num(r), num(c)
    return num(text), None


def study_sizes(path):
    """The matvec shapes, reduce lengths and scan lengths of a study's comparisons, in file
    order."""
    with open(path, "rb") as f:
        study = tomllib.load(f)
    default = study.get("defaults", {}).get("family", "matvec")
    # A size in [defaults] counts for every comparison without its own (the tuned studies
    # that `clvscu tune` writes set it there).
    default_size = study.get("defaults", {}).get("size")
    mv, red, scans = [], [], []
    for c in study.get("comparison", []):
        fam, size = c.get("family", default), c.get("size", default_size)
        if size is None:
            continue
        rows, cols = parse_size(size)
        if fam == "matvec" and (rows, cols) not in mv:
            mv.append((rows, cols))
        if fam == "reduce" and rows not in red:
            red.append(rows)
        if fam == "scan" and rows not in scans:
            scans.append(rows)
    return mv, red, scans


def sgemv(dev, add, h, w):
    """cuBLAS SGEMV through torch.mv, checked against float64 first."""
    m = torch.rand(h, w, device=dev) * 2 - 1
    v = torch.rand(w, device=dev) * 2 - 1
    ref = (m.double() @ v.double()).float()
    got = torch.mv(m, v)
    assert torch.allclose(got, ref, rtol=1e-3, atol=1e-3), "torch.mv does not match"
    del ref, got
    add("sgemv", "cuBLAS SGEMV via torch.mv", f"{h}x{w}", (h * w + w + h) * 4, lambda: torch.mv(m, v))


def total(dev, add, n):
    """The CUB-backed sum through torch.sum, checked against float64 first."""
    x = torch.rand(n, device=dev) * 2 - 1
    err = abs(float(torch.sum(x)) - float(torch.sum(x.double())))
    assert err <= max(1.0, 1e-6 * n), f"torch.sum off by {err} at {n}"
    add("sum", "CUB-backed reduction via torch.sum", str(n), n * 4, lambda: torch.sum(x))


def cumsum(dev, add, n):
    """The inclusive prefix sum of n int32 values in 0..7 through torch.cumsum (CUB's scan),
    int32 in and out as clvscu's scan family computes it, checked exactly against an int64
    scan first; bytes = one read + one write of the array, as the scan family counts them."""
    x = torch.randint(0, 8, (n,), device=dev, dtype=torch.int32)
    got = torch.cumsum(x, 0, dtype=torch.int32)
    assert torch.equal(got.long(), torch.cumsum(x.long(), 0)), f"torch.cumsum wrong at {n}"
    del got
    add("cumsum", "CUB-backed inclusive scan via torch.cumsum (int32)", str(n), 2 * n * 4,
        lambda: torch.cumsum(x, 0, dtype=torch.int32))


def sobel(dev, add):
    """cuDNN's 3x3 convolution with the Sobel X filter (a cross-correlation, as clvscu's
    kernels compute it) on H x W float images, FP32 (TF32 off), checked on the interior
    against the six-tap sum."""
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    f = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]], device=dev)
    f = f.view(1, 1, 3, 3)
    for n in (8192, 16384):
        img = (torch.rand(1, 1, n, n, device=dev) * 2 - 1)
        got = torch.nn.functional.conv2d(img, f, padding=1)[0, 0, 1:-1, 1:-1]
        p = img[0, 0]
        ref = (p[:-2, 2:] - p[:-2, :-2]) + 2 * (p[1:-1, 2:] - p[1:-1, :-2]) + (p[2:, 2:] - p[2:, :-2])
        assert torch.allclose(got, ref, rtol=0, atol=1e-4), "conv2d is not the Sobel X filter"
        del got, ref
        add("sobel", "cuDNN 3x3 conv via torch.nn.functional.conv2d (FP32)", f"{n}x{n}",
            2 * n * n * 4, lambda: torch.nn.functional.conv2d(img, f, padding=1))
        del img


def spmv(dev, add, matrices=None, seed=1):
    """cuSPARSE SpMV (CSR, FP32) through torch's sparse CSR tensors on the generated matrices
    of the studies' spmv comparisons ((rows, nnz, kind) triples; the texture study's three at
    2^24 rows and 2^28 entries when no study names one). spmv_matrices.generate_fast builds
    each on the GPU, bit for bit the matrix clvscu runs on, in seconds. Checked against
    float64 on a sample of rows. The ratio to clvscu's kernels is time-based (2 NNZ flops)."""
    import spmv_matrices as sm
    ops = sm.TorchOps(torch, dev)
    for rows, nnz, kind in matrices or [(1 << 24, 1 << 28, k) for k in ("uniform", "banded", "powerlaw")]:
        t0 = time.perf_counter()
        row_ptr, col, val = sm.generate_fast(kind, rows, nnz, seed, ops)
        x = torch.from_numpy(sm.x_vector(rows, seed)).to(dev)
        a = torch.sparse_csr_tensor(row_ptr.to(torch.int32), col.to(torch.int32), val,
                                    size=(rows, rows))
        del row_ptr, col
        torch.cuda.synchronize()
        print(f"spmv {kind} {rows}x{nnz}: generated on the GPU in {time.perf_counter() - t0:.1f} s")
        y = torch.mv(a, x)
        sample = torch.arange(0, rows, max(rows // 4096, 1), device=dev)
        a64 = torch.sparse_csr_tensor(a.crow_indices(), a.col_indices(), a.values().double(),
                                      size=(rows, rows))
        ref = torch.mv(a64, x.double())[sample]
        del a64
        assert torch.allclose(y[sample].double(), ref, rtol=1e-3, atol=1e-4), f"cuSPARSE {kind}"
        nbytes = nnz * 12 + rows * 8 + 4  # the same request count as clvscu's spmv family
        add(f"spmv-{kind}", "cuSPARSE SpMV (CSR) via torch.mv on a sparse CSR tensor",
            f"{rows}x{nnz}", nbytes, lambda: torch.mv(a, x), flops=2 * nnz, reps=50)
        del a, val, x, y


def study_matrices(path):
    """The (rows, nnz, matrix) of a study's generated spmv comparisons, in file order."""
    with open(path, "rb") as f:
        study = tomllib.load(f)
    d = study.get("defaults", {})
    found = []
    for c in study.get("comparison", []):
        if c.get("family", d.get("family")) != "spmv":
            continue
        rows, nnz = parse_size(c.get("size", d.get("size", "2^24x2^28")))
        kind = c.get("matrix", d.get("matrix", "uniform"))
        if kind in ("uniform", "banded", "powerlaw") and (rows, nnz, kind) not in found:
            found.append((rows, nnz, kind))
    return found


def guarded(what, fn):
    """Runs one group of baselines; a failure (a missing library, too little memory) is
    reported and the others still run: a missing row is visible, a wrong one would not be."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - reported, never hidden
        print(f"baseline {what} failed: {e!r}", file=sys.stderr)
    torch.cuda.empty_cache()


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


def wanted(group):
    """Whether BASELINES_ONLY (unset: everything) names this group."""
    only = os.environ.get("BASELINES_ONLY", "").strip()
    return not only or group in {g.strip() for g in only.split(",")}


def main(out, studies=()):
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

    # The fixed sizes measured here; the studies' sizes below skip only these.
    fixed_shapes = [(60989, 1100), (32768, 32768)] if wanted("sgemv") else []
    fixed_sums = [1 << 28] if wanted("sum") else []
    if wanted("sgemv"):
        for (h, w) in fixed_shapes:
            m = torch.rand(h, w, device=dev) * 2 - 1
            v = torch.rand(w, device=dev) * 2 - 1
            ref = (m.double() @ v.double()).float()
            got = torch.mv(m, v)
            assert torch.allclose(got, ref, rtol=1e-3, atol=1e-3), "torch.mv does not match"
            add("sgemv", "cuBLAS SGEMV via torch.mv", f"{h}x{w}", (h * w + w + h) * 4,
                lambda: torch.mv(m, v))
            del m, v, ref, got
    n = 1 << 28
    if wanted("sum") or wanted("copy"):
        x = torch.rand(n, device=dev) * 2 - 1
        if wanted("sum"):
            assert abs(float(torch.sum(x)) - float(torch.sum(x.double()))) < 1.0
            add("sum", "CUB-backed reduction via torch.sum", str(n), n * 4, lambda: torch.sum(x))
        if wanted("copy"):
            y = torch.empty_like(x)
            add("copy", "device-to-device copy via Tensor.copy_", str(n), 2 * n * 4,
                lambda: y.copy_(x))
            del y
        del x
    for group, fn in [("sobel", lambda: sobel(dev, add)), ("sgemm", lambda: [sgemm(dev, add, n) for n in sgemm_sizes()]),
                      ("transfers", lambda: transfers(dev, add)),
                      ("launches", lambda: launches(rows))]:
        if wanted(group):
            guarded(group, fn)
    matrices = []
    for study in studies:
        matrices += [m for m in study_matrices(study) if m not in matrices]
    if wanted("spmv"):
        guarded("spmv", lambda: spmv(dev, add, matrices))
    shapes, lengths, scans = [], [], []
    for study in studies:
        mv, red, sc = study_sizes(study)
        shapes += [s for s in mv if s not in shapes]
        lengths += [n for n in red if n not in lengths]
        scans += [n for n in sc if n not in scans]
    if not wanted("shapes"):
        shapes, lengths = [], []
    if wanted("cumsum"):
        for n in scans:
            guarded(f"cumsum {n}", lambda: cumsum(dev, add, n))
    for (h, w) in shapes:
        if (h, w) not in fixed_shapes:
            guarded(f"sgemv {h}x{w}", lambda: sgemv(dev, add, h, w))
    for n in lengths:
        if n not in fixed_sums:
            guarded(f"sum {n}", lambda: total(dev, add, n))
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
    main(sys.argv[1] if len(sys.argv) > 1 else "baselines.csv", sys.argv[2:])
