"""Reads `tessel-run --print_signature` on stdin and writes one seeded random
.npy per input into the directory given as argv[1], printing their paths."""
import os
import re
import sys

import numpy as np

DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64,
          "i64": np.int64, "i32": np.int32, "i16": np.int16, "i8": np.int8,
          "u8": np.uint8, "i1": np.bool_}


def main() -> None:
    out_dir = sys.argv[1]
    line = sys.stdin.readline()
    m = re.match(r"func (\S+)\((.*)\) ->", line)
    if not m:
        sys.exit(f"random_inputs: cannot read signature: {line!r}")
    rng = np.random.default_rng(0)
    for i, arg in enumerate(filter(None, m.group(2).split(", "))):
        name, spec = arg.split(": ")
        *dims, dtype = spec.split("x")
        shape = [int(d) for d in dims]
        t = DTYPES[dtype]
        if np.issubdtype(t, np.floating):
            data = rng.standard_normal(shape).astype(t)
        elif t is np.bool_:
            data = rng.integers(0, 2, shape).astype(t)
        else:
            data = rng.integers(0, 10, shape).astype(t)
        path = os.path.join(out_dir, f"input{i}_{name}.npy")
        np.save(path, data)
        print(path)


if __name__ == "__main__":
    main()
