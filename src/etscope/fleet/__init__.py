"""Fleet scale: many ETDumps (models x SoCs x builds from a device farm) in one Hive-partitioned
Parquet dataset (``etscope collect``), queried with DuckDB (``etscope sql --dataset``) and read back
as series for ``etscope trend``.

``dataset``: the layout, atomic per-file commits, the content-hash index, rejects, reading back.
``collect``: the per-file pure function (file -> Arrow tables, via the one loader and analyses of
``etscope.api``) and the engines that map it over files (a local process pool or a Dask cluster).
"""
