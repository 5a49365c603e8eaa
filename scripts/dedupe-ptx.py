#!/usr/bin/env python3
"""Keep each PTX text in results/ once.

`inspect` writes the PTX of every kernel file per run, and runs of the same kernels with the
same compiler give byte-identical files. This keeps the first copy (in path order), removes
the others, and records every PTX file a run produced in results/ptx-index.csv: its path,
its SHA-256, and the path of the stored copy with that content. tests/results_ptx.rs checks
the index against the files.
"""
import csv
import hashlib
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results")
INDEX = os.path.join(ROOT, "ptx-index.csv")


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    rows = []
    if os.path.exists(INDEX):
        with open(INDEX, newline="") as f:
            rows = list(csv.DictReader(f))
    known = {r["path"] for r in rows}
    stored = {r["sha256"]: r["stored_at"] for r in rows}
    found = []
    for dirpath, _, files in os.walk(ROOT):
        for name in files:
            if name.endswith(".ptx"):
                found.append(os.path.relpath(os.path.join(dirpath, name), ROOT))
    removed = 0
    for rel in sorted(found):
        digest = sha256(os.path.join(ROOT, rel))
        keeper = stored.setdefault(digest, rel)
        if rel not in known:
            rows.append({"path": rel, "sha256": digest, "stored_at": keeper})
        if keeper != rel:
            os.remove(os.path.join(ROOT, rel))
            removed += 1
    rows.sort(key=lambda r: r["path"])
    with open(INDEX, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["path", "sha256", "stored_at"], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} PTX files indexed, {len(set(stored.values()))} stored, {removed} duplicates removed")


if __name__ == "__main__":
    sys.exit(main())
