"""`python -m etscope.cli`."""
from etscope.cli import run

run()
