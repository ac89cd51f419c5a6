"""What people read of scored runs: markdown tables (:mod:`.tables`) and one self-contained HTML
page (:mod:`.page`), made from score documents (``interleave-score-v1``) alone, so that files
scored earlier can be shown again without scoring anything."""
