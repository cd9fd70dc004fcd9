"""Fleet scale: many ETDumps (models x SoCs x builds from a device farm) in one Hive-partitioned
Parquet dataset (``etscope collect``), queried with DuckDB (``etscope sql --dataset``) and read back
as series for ``etscope trend``.

``layout``: the dataset's layout ``etscope.dataset/2`` (names, partition folders, manifest entries).
``folder``: paths inside the dataset walked without following links.
``dataset``: creating, locking, committing one file's parts (manifest entry last), recovering an
interrupted collect from its journal. ``reading``: parts back through the manifest as Arrow (bad
parts skipped with a warning). ``adopt``: the manifest of a layout-1 dataset (``collect --adopt``).
``jobs``: the ETDumps a collect finds, their companions and metadata (parsed once), where each goes.
``collect``: the per-file pure function (file -> Arrow tables, via the one loader and analyses of
``etscope.api``) and the engines that map it over files (a local process pool or a Dask cluster).
"""
