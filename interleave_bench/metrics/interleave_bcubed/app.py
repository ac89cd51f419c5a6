"""The Hugging Face Space widget of this metric (evaluate's template): needs interleave-bench installed."""

import os

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(os.path.dirname(os.path.abspath(__file__)))
launch_gradio_widget(module)
