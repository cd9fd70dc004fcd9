"""What ran where: per-op statistics, placement (delegate / CPU), source modules, graph nodes and the .pte program."""
