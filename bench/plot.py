#!/usr/bin/env python3
"""Chart of bench/results/latest.json: grouped bars of median latency per
model per engine (Tessel, ORT, PyTorch) at one thread count, log scale.

  bench/plot.py [RESULTS.json] [OUT.png] [--threads 1]

Needs matplotlib (Debian: python3-matplotlib; bench/run.sh installs it).
"""
import argparse
import json
import os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
ENGINES = [("tessel", "Tessel", "#d62728"), ("ort", "ONNX Runtime", "#1f77b4"),
           ("torch", "PyTorch", "#ff7f0e")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="?", default=os.path.join(BENCH, "results", "latest.json"))
    ap.add_argument("out", nargs="?", default=os.path.join(ROOT, "docs", "performance.png"))
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    with open(args.results) as f:
        data = json.load(f)
    if args.threads not in data["threads"]:
        print(f"plot.py: no results at threads={args.threads}; "
              f"plotting threads={data['threads'][0]}")
        args.threads = data["threads"][0]
    t = str(args.threads)
    models = data["models_run"]

    fig, ax = plt.subplots(figsize=(max(8, 1.25 * len(models) + 2), 5.2))
    width = 0.8 / len(ENGINES)
    values = [c["median_ms"] for m in models for e, _, _ in ENGINES
              for c in [data["results"][m]["engines"].get(e, {}).get(t)]
              if c and "error" not in c]
    floor = min(values) / 3 if values else 0.01
    for i, (e, label, color) in enumerate(ENGINES):
        xs, ys = [], []
        for j, m in enumerate(models):
            x = j + (i - (len(ENGINES) - 1) / 2) * width
            c = data["results"][m]["engines"].get(e, {}).get(t)
            if c and "error" not in c:
                xs.append(x)
                ys.append(c["median_ms"])
                v = c["median_ms"]
                txt = f"{v:.0f}" if v >= 10 else f"{v:.1f}" if v >= 1 else f"{v:.2f}"
                ax.text(x, v * 1.08, txt, ha="center", va="bottom", fontsize=6.5,
                        rotation=90)
            else:
                ax.text(x, floor * 1.2, "FAILED", ha="center", va="bottom", fontsize=7,
                        rotation=90, color=color)
        ax.bar(xs, ys, width, label=label, color=color)
    ax.set_yscale("log")
    ax.set_ylim(bottom=floor)
    top = max(values) if values else 1
    ax.set_ylim(top=top * 6)
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(models, rotation=20, ha="right")
    ax.set_ylabel("median latency, ms (log scale; lower is better)")
    gm = data.get("geomean", {}).get(t, {})
    sub = ", ".join(f"{n}/Tessel {gm[p]['value']:.3g}x" for p, n in (("ort", "ORT"), ("torch", "PyTorch"))
                    if gm.get(p))
    cpu = data["machine"]["cpu"]
    ax.set_title(f"Inference latency, batch 1, {t} thread{'s' if t != '1' else ''} "
                 f"({cpu}, {data['date'][:10]}, Tessel {data['versions'].get('tessel', '?')})\n"
                 f"geomean of peer time / Tessel time: {sub}", fontsize=9.5)
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(axis="y", which="major", alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"plot.py: wrote {os.path.relpath(args.out, ROOT)}")


if __name__ == "__main__":
    main()
