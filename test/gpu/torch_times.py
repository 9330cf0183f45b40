#!/usr/bin/env python3
"""PyTorch on the same GPU, for the ratios of docs/performance-gpu.md: each
model of test/models/export_models.py (the same architecture and input
shape; seeded weights) in fp32 with TF32 off, eager and no_grad, timed with
CUDA events (median of N after warm-up), the input copy included as in
tessel-run's per-call time.

    torch_times.py MODEL... [--runs N]
"""
import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "models"))
import export_models  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--runs", type=int, default=20)
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for name in args.models:
        torch.manual_seed(export_models.SEED)
        model, example = export_models.build(name)
        model = model.eval().cuda()
        times, kernel = [], []
        with torch.no_grad():
            for i in range(args.runs + 3):
                s, m, e = (torch.cuda.Event(enable_timing=True) for _ in range(3))
                s.record()
                x = example.cuda()
                m.record()
                y = model(x).cpu()
                e.record()
                torch.cuda.synchronize()
                if i >= 3:
                    times.append(s.elapsed_time(e))
                    kernel.append(m.elapsed_time(e))
        print(f"torch {name}: median_ms={statistics.median(times):.3f} "
              f"(without the input copy {statistics.median(kernel):.3f}) "
              f"torch {torch.__version__}", flush=True)


if __name__ == "__main__":
    main()
