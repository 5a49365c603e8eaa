"""The SpMV family's generated matrices, rebuilt bit for bit from src/families/spmv/ (SplitMix64
of the seed and a position; see that module's docs), so that the cuSPARSE baseline in
baselines.py runs on the very matrices clvscu runs on. numpy only.

    python3 baselines/spmv_matrices.py --self-test

prints the fingerprint that src/families/spmv/mod.rs's test `fingerprint_matches_the_baseline_script`
asserts, and fails if it differs; it also checks that the fast generator (generate_fast, below)
builds the same arrays as the reference one.

generate() is the readable reference: uint64 numpy and a lexsort, minutes at 2^28 entries.
generate_fast() computes the same numbers in signed int64 (wrapping multiplication, masked
right shifts, an unsigned remainder built from signed ones) with one sort of a packed
(row, column) key, written against a few array operations (Ops) that numpy and torch both
provide: baselines.py runs it on the GPU through torch (seconds at 2^28 entries), and the
self-test runs the same code through numpy against generate()."""
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


# ---------------------------------------------------------------------------------------------
# The fast generator: the same numbers in signed 64-bit arithmetic.

def _s64(c):
    """A uint64 constant as the int64 with the same bits."""
    c %= 1 << 64
    return c - (1 << 64) if c >= 1 << 63 else c


def _lsr(z, k):
    """Logical right shift of int64 values holding uint64 bits (>> is arithmetic on int64)."""
    return (z >> k) & ((1 << (64 - k)) - 1)


class NumpyOps:
    """The array operations generate_fast needs, on numpy int64."""
    def arange(self, n):
        return np.arange(n, dtype=np.int64)

    def repeat(self, values, counts):
        return np.repeat(values, counts)

    def sort(self, x):
        return np.sort(x)

    def from_numpy(self, a):
        return a

    def to_f32(self, x):
        return x.astype(np.float64)

    def to_int64(self, x):
        return x.astype(np.int64)

    def minimum(self, a, b):
        return np.minimum(a, b)

    def maximum(self, a, b):
        return np.maximum(a, b)

    def f32(self, x):
        return x.astype(np.float32)


class TorchOps(NumpyOps):
    """The same on torch tensors of a device (the GPU in baselines.py)."""
    def __init__(self, torch, device):
        self.t, self.dev = torch, device

    def arange(self, n):
        return self.t.arange(n, dtype=self.t.int64, device=self.dev)

    def repeat(self, values, counts):
        return self.t.repeat_interleave(values, counts)

    def sort(self, x):
        return self.t.sort(x).values

    def from_numpy(self, a):
        return self.t.from_numpy(np.ascontiguousarray(a)).to(self.dev)

    def to_f32(self, x):
        return x.to(self.t.float64)

    def to_int64(self, x):
        return x.to(self.t.int64)

    def minimum(self, a, b):
        return self.t.clamp(a, max=b)

    def maximum(self, a, b):
        return self.t.clamp(a, min=b)

    def f32(self, x):
        return x.to(self.t.float32)


def mix_fast(seed, stream, index):
    """mix() on int64 arrays: SplitMix64's multiplications wrap the same way in int64."""
    z = index * _s64(0x9E3779B97F4A7C15) + _s64(seed + stream * 0xD1B54A32D192ED03)
    z = (z ^ _lsr(z, 30)) * _s64(0xBF58476D1CE4E5B9)
    z = (z ^ _lsr(z, 27)) * _s64(0x94D049BB133111EB)
    return z ^ _lsr(z, 31)


def _umod(h, m):
    """The uint64 whose bits h holds, modulo m (0 < m < 2^62): (2 (h/2) + h%2) mod m."""
    return ((_lsr(h, 1) % m) * 2 + (h & 1)) % m


def unit_value_fast(ops, h):
    return ops.f32(ops.to_f32(_lsr(h, 40)) / float(1 << 23) - 1.0)


def generate_fast(kind, rows, nnz, seed, ops):
    """generate() through ops (NumpyOps or TorchOps): (row_ptr, col, val), int64 / float32."""
    if kind == "powerlaw":
        lengths = power_lengths(rows, nnz, seed)  # rows-sized: numpy is quick enough
    else:
        lengths = even_lengths(rows, nnz)
    row_ptr = ops.from_numpy(np.concatenate(([0], np.cumsum(lengths))).astype(np.int64))
    row_of = ops.repeat(ops.arange(rows), ops.from_numpy(lengths.astype(np.int64)))
    idx = ops.arange(nnz)
    h = mix_fast(seed, STREAM_COL, idx)
    if kind == "banded":
        band = 8 * max(nnz // rows, 1)
        lo = ops.maximum(row_of - band, 0)
        col = lo + _umod(h, ops.minimum(row_of + band + 1, rows) - lo)
        del lo
    else:
        col = _umod(h, rows)
    del h
    # Rows are contiguous and in order, so one sort of row * rows + col sorts every row's
    # columns and leaves each entry in its row.
    key = ops.sort(row_of * rows + col)
    col = key - row_of * rows
    del key, row_of
    val = unit_value_fast(ops, mix_fast(seed, STREAM_VAL, idx))
    return row_ptr, col, val


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
        for kind in ("uniform", "banded", "powerlaw"):
            for rows, nnz, seed in ((64, 300, 7), (1000, 7777, 3), (4099, 65537, 1 << 63)):
                want = generate(kind, rows, nnz, seed)
                got = generate_fast(kind, rows, nnz, seed, NumpyOps())
                same = all(np.array_equal(a, b) for a, b in zip(want, got))
                print(f"fast generator {kind} {rows}x{nnz} seed {seed}: {'same' if same else 'DIFFERS'}")
                ok = ok and same
        sys.exit(0 if ok else 1)
