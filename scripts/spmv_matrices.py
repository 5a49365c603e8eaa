"""The SpMV family's generated matrices, rebuilt bit for bit from src/workload/spmv.rs (SplitMix64
of the seed and a position; see that module's docs), so that the cuSPARSE baseline in
baselines.py runs on the very matrices clvscu runs on. numpy only.

    python3 scripts/spmv_matrices.py --self-test

prints the fingerprint that src/workload/spmv.rs's test `fingerprint_matches_the_baseline_script`
asserts, and fails if it differs."""
import sys

import numpy as np

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
STREAM_COL, STREAM_VAL, STREAM_LEN, STREAM_X = 1, 2, 3, 4
# Column-index sum, row-pointer sum and sum of y of PowerLaw 64x300, seed 7 (as in the Rust test).
FINGERPRINT = (9320, 11260, -4.532501436347)


def mix(seed, stream, index):
    """SplitMix64 of seed and a position (index: an array of uint64)."""
    with np.errstate(over="ignore"):
        z = (np.uint64(seed) + np.uint64(stream) * np.uint64(0xD1B54A32D192ED03)
             + index.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def unit_value(h):
    """[-1, 1) with 24 significant bits: exact in float32."""
    return ((h >> np.uint64(40)).astype(np.float64) / float(1 << 23) - 1.0).astype(np.float32)


def even_lengths(rows, nnz):
    q, r = divmod(nnz, rows)
    return np.full(rows, q, dtype=np.int64) + (np.arange(rows) < r)


def power_lengths(rows, nnz, seed):
    h = mix(seed, STREAM_LEN, np.arange(rows, dtype=np.uint64))
    u = ((h >> np.uint64(11)) + np.uint64(1)).astype(np.float64) / float(1 << 53)
    acc = np.cumsum(1.0 / np.sqrt(u))  # sequential, as the Rust loop
    upto = np.minimum(np.floor(nnz * acc / acc[-1]), nnz).astype(np.int64)
    upto[-1] = nnz
    return np.diff(np.concatenate(([0], upto)))


def generate(kind, rows, nnz, seed):
    """(row_ptr, col, val) of a generated matrix: kind is uniform, banded or powerlaw."""
    if kind == "powerlaw":
        lengths = power_lengths(rows, nnz, seed)
    else:
        lengths = even_lengths(rows, nnz)
    row_ptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    row_of = np.repeat(np.arange(rows, dtype=np.int64), lengths)
    h = mix(seed, STREAM_COL, np.arange(nnz, dtype=np.uint64))
    if kind == "banded":
        band = 8 * max(nnz // rows, 1)
        lo = np.maximum(row_of - band, 0)
        hi = np.minimum(row_of + band + 1, rows)
    else:
        lo = np.zeros(nnz, dtype=np.int64)
        hi = np.full(nnz, rows, dtype=np.int64)
    col = lo + (h % (hi - lo).astype(np.uint64)).astype(np.int64)
    order = np.lexsort((col, row_of))
    col = col[order]
    val = unit_value(mix(seed, STREAM_VAL, np.arange(nnz, dtype=np.uint64)))
    return row_ptr, col, val


def x_vector(cols, seed):
    return unit_value(mix(seed, STREAM_X, np.arange(cols, dtype=np.uint64)))


def fingerprint():
    row_ptr, col, val = generate("powerlaw", 64, 300, 7)
    x = x_vector(64, 7)
    ysum = 0.0
    for r in range(64):
        y = 0.0
        for k in range(row_ptr[r], row_ptr[r + 1]):
            y += float(val[k]) * float(x[col[k]])
        ysum += y
    return int(col.sum()), int(row_ptr.sum()), ysum


if __name__ == "__main__":
    if "--self-test" in sys.argv:
        got = fingerprint()
        print(f"fingerprint {got[0]} {got[1]} {got[2]:.12f}")
        ok = got[:2] == FINGERPRINT[:2] and abs(got[2] - FINGERPRINT[2]) < 1e-9
        sys.exit(0 if ok else 1)
