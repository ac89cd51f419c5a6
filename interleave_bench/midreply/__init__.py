"""Mid-reply: a message arrives while a reply runs; does it belong with the running work?

- :mod:`.cases`: the packaged case set and reading any case file in the same format;
- :mod:`.prompt`: the classifier's prompt (English and Chinese) and robust answer parsing;
- :mod:`.rule`: the shipped rule (acknowledgements, undecided answers and failures stay);
- :mod:`.runner`: one decision per case into a resumable results file;
- :mod:`.metrics`: accuracy, right side, mixed in, split off, with Wilson intervals;
- :mod:`.report`: the markdown table; :mod:`.fake`: the fake model's classifier.

The command is ``interleave-bench mid-reply``; the evaluate module is ``interleave_bench/metrics/interleave_mid_reply``.
"""

from .cases import load_cases
from .metrics import mid_reply_scores, summarize
from ..text import is_bare_ack
from .rule import decide

__all__ = ["load_cases", "mid_reply_scores", "summarize", "decide", "is_bare_ack"]
