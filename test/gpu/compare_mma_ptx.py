"""Compares the tensor-core kernels of two PTX files of one model, kernel by
kernel: for every mma.sync, the shared-memory words (or pairs of halves)
its A and B fragments were loaded from, which earlier mma (or none) each accumulator comes from,
and which mma result each global store writes.

The bf16 kernel (nvvm.mma.sync, emitted directly) has not run on a GPU; the
f16 kernel (nvgpu.mma.sync) has. Same structure, operand for operand, means
the bf16 kernel moves its data as the verified one does; only the element
type differs.

    compare_mma_ptx.py A.ptx B.ptx
prints "same mma structure: K kernels, N mma, S stores" and exits 0, or
names the first difference and exits 1.
"""
import re
import sys


def kernels(path):
    text = open(path).read()
    out = []
    for body in re.split(r"\.entry ", text)[1:]:
        name = body.split("(")[0].strip()
        lines = body.split("\n")
        loaded = {}   # register -> the shared-memory address it was loaded from
        produced = {}  # register -> (mma index, result position)
        mmas, stores = [], []
        for i, line in enumerate(lines):
            m = re.search(r"ld\.shared\.b(32|16)\s+(%r\d+), \[(.*?)\]", line)
            if m:
                loaded[m.group(2)] = m.group(3)
            # A pair of 16-bit loads packed into one register (rows of the
            # gathered convolution slices): shl by 16, or.
            m = re.search(r"shl\.b32\s+(%r\d+), (%r\d+), 16;", line)
            if m and m.group(2) in loaded:
                loaded[m.group(1)] = ("hi", loaded[m.group(2)])
            m = re.search(r"or\.b32\s+(%r\d+), (%r\d+), (%r\d+);", line)
            if m and m.group(2) in loaded and m.group(3) in loaded:
                loaded[m.group(1)] = (loaded[m.group(3)], loaded[m.group(2)])
            if "mma.sync" in line:
                groups = re.findall(r"\{([^}]*)\}", " ".join(lines[i:i + 6]))
                d, a, b, c = ([r.strip() for r in g.split(",")] for g in groups[:4])
                mmas.append((tuple(loaded.get(r, r) for r in a),
                             tuple(loaded.get(r, r) for r in b),
                             tuple(produced.get(r, "init") for r in c)))
                for pos, r in enumerate(d):
                    produced[r] = (len(mmas) - 1, pos)
            m = re.search(r"mov\.[bf]32\s+(%[rf]\d+), (%[rf]\d+);", line)
            if m and m.group(2) in produced:
                produced[m.group(1)] = produced[m.group(2)]
            # A sum added onto the output's contents before its store.
            m = re.search(r"add\.f32\s+(%[rf]\d+), (%[rf]\d+), (%[rf]\d+);",
                          line)
            if m:
                src = [produced[r] for r in m.group(2, 3) if r in produced]
                if len(src) == 1:
                    produced[m.group(1)] = src[0]
            m = re.search(r"st\.global\.[bf]32\s+\[.*?\], (%[rf]\d+);", line)
            if m and m.group(1) in produced:
                stores.append(produced[m.group(1)])
        out.append((name, mmas, stores))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare_mma_ptx.py A.ptx B.ptx")
    a, b = kernels(sys.argv[1]), kernels(sys.argv[2])
    if len(a) != len(b):
        print(f"kernel count differs: {len(a)} against {len(b)}")
        return 1
    nmma = nstores = 0
    for (name, mma_a, st_a), (_, mma_b, st_b) in zip(a, b):
        if len(mma_a) != len(mma_b):
            print(f"{name}: {len(mma_a)} mma against {len(mma_b)}")
            return 1
        for k, (x, y) in enumerate(zip(mma_a, mma_b)):
            if x != y:
                print(f"{name}: mma {k} differs:\n  {x}\n  {y}")
                return 1
        if st_a != st_b:
            print(f"{name}: the stores write different mma results")
            return 1
        nmma += len(mma_a)
        nstores += len(st_a)
    print(f"same mma structure: {len(a)} kernels, {nmma} mma, {nstores} stores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
