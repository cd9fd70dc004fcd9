"""`python -m etscope.cli`."""
from etscope.cli import main

main()
