"""Measure ``find_secret`` on the labelled corpus, in two parts measured separately.

* ``tests/data/secret_corpus.py``: written together with the rules (their authors' idea).
* ``tests/data/secret_corpus_independent.py``: samples from the test fixtures and rule
  sets of maintained scanners (gitleaks, trufflehog, detect-secrets, presidio, GitHub's
  token formats), each naming its source; the goal is >= 99% refused, <= 1% look-alikes.

Prints, per part, the share refused and the look-alikes refused, every false positive /
false negative with its note (and source), and the mean and p99 time per call over both
parts (after one warm-up call, which pays for importing detect-secrets and compiling the
rules).

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


def _load(name: str):  # type: ignore[no-untyped-def]
    path = ROOT / "tests" / "data" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_corpus() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The part written with the rules: (text, note) pairs."""
    module = _load("secret_corpus")
    return module.SECRETS, module.HARMLESS


def load_independent() -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """The independent part: (text, note, source) triples."""
    module = _load("secret_corpus_independent")
    return module.SECRETS, module.HARMLESS


def measure(secrets: list, harmless: list) -> dict:  # type: ignore[type-arg]
    """Refused share of the secrets, refused share of the look-alikes, and the misses."""
    false_negatives = [item for item in secrets if find_secret(item[0]) is None]
    false_positives = [(*item, find_secret(item[0])) for item in harmless if find_secret(item[0]) is not None]
    tp = len(secrets) - len(false_negatives)
    return {
        "secrets": len(secrets),
        "harmless": len(harmless),
        "refused": tp,
        "lookalikes_refused": len(false_positives),
        "recall": tp / len(secrets) if secrets else 1.0,
        "fp_rate": len(false_positives) / len(harmless) if harmless else 0.0,
        "precision": tp / (tp + len(false_positives)) if tp + len(false_positives) else 1.0,
        "false_negatives": false_negatives,
        "false_positives": false_positives,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--repeat", type=int, default=20, help="timing passes over the corpus")
    args = parser.parse_args()

    secrets, harmless = load_corpus()
    ind_secrets, ind_harmless = load_independent()

    t0 = time.perf_counter()
    find_secret("warm-up: my password is hunter2")
    first_call_ms = (time.perf_counter() - t0) * 1000

    parts = {
        "written with the rules": measure(secrets, harmless),
        "independent (scanners' fixtures)": measure(ind_secrets, ind_harmless),
    }

    texts = [item[0] for item in secrets + harmless + ind_secrets + ind_harmless]
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
        print("| part | secrets refused | look-alikes refused | precision |")
        print("|---|---|---|---|")
        for name, m in parts.items():
            print(f"| {name} | {m['refused']}/{m['secrets']} ({m['recall']:.1%}) | "
                  f"{m['lookalikes_refused']}/{m['harmless']} ({m['fp_rate']:.1%}) | {m['precision']:.3f} |")
        print(f"\nTime per call over both parts: mean {mean_us:.0f} µs, p99 {p99_us:.0f} µs; "
              f"first call (imports detect-secrets) {first_call_ms:.0f} ms.")
    else:
        for name, m in parts.items():
            print(f"{name}: {m['refused']}/{m['secrets']} secrets refused ({m['recall']:.1%}), "
                  f"{m['lookalikes_refused']}/{m['harmless']} look-alikes refused ({m['fp_rate']:.1%}), "
                  f"precision {m['precision']:.3f}")
        print(f"time per call: mean {mean_us:.0f} µs, p99 {p99_us:.0f} µs, max {max_us:.0f} µs "
              f"over {len(timings)} calls; first call {first_call_ms:.0f} ms")
    for name, m in parts.items():
        for item in m["false_negatives"]:
            source = f" ({item[2]})" if len(item) > 2 else ""
            print(f"FALSE NEGATIVE [{name}] [{item[1]}]{source}: {item[0]}")
        for item in m["false_positives"]:
            source = f" ({item[2]})" if len(item) > 3 else ""
            print(f"FALSE POSITIVE [{name}] [{item[1]}]{source} -> {item[-1]}: {item[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
