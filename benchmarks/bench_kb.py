"""Benchmark of the knowledge base: build times, model load, query latency, quality.

Run: ``python benchmarks/bench_kb.py [--out results.json] [--repeats 200]``

Measures, on the shipped corpus in a temporary embedded Qdrant store:

- model load: importing sentence-transformers/torch and loading the bundled MiniLM;
- cold build (model already loaded: parse, chunk, embed every chunk, upsert) and warm
  rebuild (unchanged corpus: nothing embedded, model not needed);
- open: checking the store and copying the points into memory;
- single-query latency p50/p95 (model loaded; with and without a category filter) and
  the per-query cost of ``search_many`` for a batch of findings;
- retrieval quality: the share of held-out and development questions whose category
  document is in the unfiltered top 3 (and top 1).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--repeats", type=int, default=200, help="single queries timed")
    args = parser.parse_args(argv)

    from kb_builder import KnowledgeBase, build_kb, embedding
    from kb_builder.quality import HELD_OUT, PARAPHRASES, paraphrase_hit_rate

    results: dict = {"cpu_count": os.cpu_count(), "load_average": os.getloadavg()}
    start = time.perf_counter()
    embedding.load_model()
    results["model_import_and_load_s"] = round(time.perf_counter() - start, 2)
    results["model_load_s"] = round(embedding.last_load_seconds or 0.0, 2)

    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "kb")
        cold = build_kb(path=store, progress=False)
        warm = build_kb(path=store, progress=False)
        results.update(
            documents=cold.documents, chunks=cold.chunks,
            cold_build_s=round(cold.seconds, 2),
            cold_build_incl_model_load_s=round(cold.seconds + results["model_import_and_load_s"], 2),
            warm_rebuild_s=round(warm.seconds, 2), warm_rebuild_embedded=warm.embedded,
        )
        start = time.perf_counter()
        kb = KnowledgeBase.open(path=store)
        results["open_s"] = round(time.perf_counter() - start, 3)

        questions = [q for _, q in HELD_OUT + PARAPHRASES]
        categories = [c for c, _ in HELD_OUT + PARAPHRASES]
        for _ in range(5):  # warm-up
            kb.search(questions[0])
        for label, use_filter in (("unfiltered", False), ("filtered", True)):
            times = []
            for i in range(args.repeats):
                k = i % len(questions)
                t = time.perf_counter()
                kb.search(questions[k], category=categories[k] if use_filter else None)
                times.append((time.perf_counter() - t) * 1000)
            results[f"query_{label}_p50_ms"] = round(statistics.median(times), 2)
            results[f"query_{label}_p95_ms"] = round(_pct(times, 0.95), 2)
        batch = [(q, None) for q in questions[:26]]
        t = time.perf_counter()
        kb.search_many(batch)
        results["search_many_26_ms"] = round((time.perf_counter() - t) * 1000, 1)

        for name, qs in (("held_out", HELD_OUT), ("dev", PARAPHRASES)):
            top3 = paraphrase_hit_rate(kb, questions=qs, top_k=3)
            top1 = paraphrase_hit_rate(kb, questions=qs, top_k=1)
            results[f"{name}_top3_hit_rate"] = round(top3.hit_rate, 3)
            results[f"{name}_top1_hit_rate"] = round(top1.hit_rate, 3)
            results[f"{name}_n"] = top3.total
            results[f"{name}_misses"] = [
                {"category": c, "question": q, "top3": list(ids)} for c, q, ids in top3.misses
            ]
        kb.lexical_weight = 0.0
        results["held_out_top3_dense_only"] = round(
            paraphrase_hit_rate(kb, questions=HELD_OUT).hit_rate, 3)
        results["dev_top3_dense_only"] = round(
            paraphrase_hit_rate(kb, questions=PARAPHRASES).hit_rate, 3)
        kb.close()

    print(json.dumps(results, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
