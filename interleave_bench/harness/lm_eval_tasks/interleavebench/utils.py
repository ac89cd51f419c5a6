"""The functions ``interleavebench_closed.yaml`` names; they live in ``interleave_bench.harness.lmeval``."""

from interleave_bench.harness.lmeval import doc_to_text, load_docs, process_results

__all__ = ["doc_to_text", "load_docs", "process_results"]
