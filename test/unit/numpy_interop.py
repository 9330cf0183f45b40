"""Checks the C++ .npy reader/writer against numpy itself.

For every supported dtype and a few shapes, numpy writes a file (format
versions 1.0, 2.0 and 3.0), `npy_tool copy` reads it with tessel::rt::readNpy
and writes it back with writeNpy, and numpy loads the copy: dtype, shape and
bytes must be identical. Unsupported layouts must be rejected, not misread.

Usage: python3 numpy_interop.py NPY_TOOL WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
from numpy.lib import format as npformat

tool, workdir = sys.argv[1], sys.argv[2]
os.makedirs(workdir, exist_ok=True)
rng = np.random.default_rng(0)
failures = []


def sample(dtype, shape):
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype,
                            endpoint=True)
    a = (rng.standard_normal(size=shape) * 100).astype(dtype)
    if a.size >= 3:  # specials must survive bit-exactly
        a.flat[0], a.flat[1], a.flat[2] = np.nan, np.inf, -0.0
    return a


def copy(src, dst):
    return subprocess.run([tool, "copy", src, dst], capture_output=True,
                          text=True)


dtypes = [np.float32, np.float16, np.float64, np.int64, np.int32, np.int16,
          np.int8, np.uint8, np.bool_]
shapes = [(), (7,), (2, 3), (2, 0, 4), (3, 1, 2, 5)]
count = 0
for dtype in dtypes:
    for shape in shapes:
        for version in [(1, 0), (2, 0), (3, 0)]:
            a = sample(dtype, shape)
            name = f"{np.dtype(dtype).name}_{'x'.join(map(str, shape))}_v{version[0]}"
            src = os.path.join(workdir, name + ".npy")
            dst = os.path.join(workdir, name + ".copy.npy")
            with open(src, "wb") as f:
                npformat.write_array(f, a, version=version)
            r = copy(src, dst)
            count += 1
            if r.returncode != 0:
                failures.append(f"{name}: npy_tool failed: {r.stderr}")
                continue
            b = np.load(dst)
            if (b.dtype != a.dtype or b.shape != a.shape
                    or b.tobytes() != a.tobytes()):
                failures.append(f"{name}: copy differs ({b.dtype} {b.shape})")

# Layouts the reader must refuse with a clear message.
rejects = {
    "fortran": (np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
                "Fortran-order"),
    "bigendian": (np.arange(4, dtype=">f4"), "big-endian"),
    "complex": (np.zeros(2, dtype=np.complex64), "unsupported .npy dtype descr '<c8'"),
}
for name, (a, message) in rejects.items():
    src = os.path.join(workdir, name + ".npy")
    np.save(src, a)
    r = copy(src, os.path.join(workdir, name + ".copy.npy"))
    count += 1
    if r.returncode == 0 or message not in r.stderr:
        failures.append(f"{name}: expected failure with '{message}', got "
                        f"rc={r.returncode} {r.stderr!r}")

for f in failures:
    print("FAIL", f)
print(f"{count - len(failures)}/{count} numpy interop checks passed")
sys.exit(1 if failures else 0)
