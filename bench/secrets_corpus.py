"""Measure ``find_secret`` on the labelled corpus in ``tests/data/secret_corpus.py``.

Prints precision, recall, every false positive / false negative with its note, and the
mean and p99 time per call (after one warm-up call, which pays for importing
detect-secrets and compiling the rules).

    PYTHONPATH=src python bench/secrets_corpus.py [--markdown] [--repeat N]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from memdream.model.secrets import find_secret  # noqa: E402


def load_corpus() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    path = ROOT / "tests" / "data" / "secret_corpus.py"
    spec = importlib.util.spec_from_file_location("secret_corpus", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SECRETS, module.HARMLESS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--repeat", type=int, default=20, help="timing passes over the corpus")
    args = parser.parse_args()

    secrets, harmless = load_corpus()

    t0 = time.perf_counter()
    find_secret("warm-up: my password is hunter2")
    first_call_ms = (time.perf_counter() - t0) * 1000

    false_negatives = [(t, n) for t, n in secrets if find_secret(t) is None]
    false_positives = [(t, n, find_secret(t)) for t, n in harmless if find_secret(t) is not None]
    tp = len(secrets) - len(false_negatives)
    fp = len(false_positives)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / len(secrets) if secrets else 1.0

    texts = [t for t, _ in secrets + harmless]
    timings: list[float] = []
    for _ in range(args.repeat):
        for text in texts:
            start = time.perf_counter_ns()
            find_secret(text)
            timings.append((time.perf_counter_ns() - start) / 1000)  # microseconds
    timings.sort()
    mean_us = statistics.fmean(timings)
    p99_us = timings[min(len(timings) - 1, int(len(timings) * 0.99))]
    max_us = timings[-1]

    if args.markdown:
        print("| metric | value |")
        print("|---|---|")
        print(f"| corpus | {len(secrets)} secrets, {len(harmless)} harmless look-alikes |")
        print(f"| precision | {precision:.3f} |")
        print(f"| recall | {recall:.3f} |")
        print(f"| false positives | {fp} |")
        print(f"| false negatives | {len(false_negatives)} |")
        print(f"| mean time per call | {mean_us:.0f} µs |")
        print(f"| p99 time per call | {p99_us:.0f} µs |")
        print(f"| first call (imports detect-secrets) | {first_call_ms:.0f} ms |")
    else:
        print(f"corpus: {len(secrets)} secrets, {len(harmless)} harmless")
        print(f"precision {precision:.3f}  recall {recall:.3f}  (tp={tp} fp={fp} fn={len(false_negatives)})")
        print(f"time per call: mean {mean_us:.0f} µs, p99 {p99_us:.0f} µs, max {max_us:.0f} µs "
              f"over {len(timings)} calls; first call {first_call_ms:.0f} ms")
    for text, note in false_negatives:
        print(f"FALSE NEGATIVE [{note}]: {text}")
    for text, note, found in false_positives:
        print(f"FALSE POSITIVE [{note}] -> {found}: {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
