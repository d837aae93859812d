"""Every run in a history database, and what the nights say over time.

``store.py`` (the SQL store: SQLite or PostgreSQL, migrated by Alembic on open), ``rows.py``
(a RunResults -> the rows of one run), ``series.py`` (the nightly series read back),
``changes.py`` (change points and their attribution), ``report.py`` (their text and
markdown), ``plots.py`` (trend plots), ``transfer.py`` (export and import), ``commands.py``
(``specperf history ...``).
"""
