"""Plots for the side-by-side report (run by run.py in the harness venv, which has matplotlib).

    .venvs/harness/bin/python bench/peers/plot.py out/plotdata.json docs/img
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

data = json.loads(Path(sys.argv[1]).read_text())
out = Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
res, labels = data["results"], data["labels"]
ok = lambda r: r is not None and "error" not in r  # noqa: E731
# one colour per peer, the same in every plot (tab20 has room for every peer of run.py)
colour = {p: plt.get_cmap("tab20")(i % 20) for i, p in enumerate(labels)}

fig, axes = plt.subplots(1, 2, figsize=(13, 5))
for ax, s, title in ((axes[0], "locomo", "LoCoMo"), (axes[1], "10k", "synthetic 10k")):
    placed = []
    for p, r in res.items():
        x = r.get(s)
        if ok(x):
            ax.scatter(x["search_p50"], x["r10"], s=40, color=colour.get(p))
            near = sum(1 for a, b in placed if abs(b - x["r10"]) < 0.01 and 0.5 < a / x["search_p50"] < 2)
            placed.append((x["search_p50"], x["r10"]))
            ax.annotate(labels.get(p, p), (x["search_p50"], x["r10"]), fontsize=7, xytext=(4, 3 + 9 * near), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("search p50 (ms, log)")
    ax.set_ylabel("recall@10")
    ax.set_title(f"{title}: recall@10 vs search latency")
    ax.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(out / "peers_recall_latency.png", dpi=110)

fig, axes = plt.subplots(1, 2, figsize=(13, 5))
n = {"1k": 1000, "10k": 10000, "100k": 100000}
for ax, key, title in ((axes[0], "add_p50", "add p50 (ms)"), (axes[1], "search_p50", "search p50 (ms)")):
    for p, r in res.items():
        pts = [(n[s], r[s][key]) for s in n if ok(r.get(s)) and r[s][key] == r[s][key] and not (p == "bm25s" and key == "add_p50")]
        if len(pts) >= 2:
            ax.plot([a for a, _ in pts], [b for _, b in pts], marker="o", label=labels.get(p, p), color=colour.get(p))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memories in the store (log)")
    ax.set_ylabel(title + ", log")
    ax.set_title(f"{title} vs corpus size")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(out / "peers_scale.png", dpi=110)
print("plots written to", out)
