"""The SQL engine (DuckDB over the tables etscope builds), shared by the CLI, the notebook and the
fleet: it reads only the tables it is given (no files, network, extensions or settings)."""
