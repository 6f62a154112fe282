"""dbt-duckdb plugin: registers the project's Python UDFs on every connection dbt opens.

Enabled in ``profiles.yml``::

    plugins:
      - module: udfs.plugin
"""

from __future__ import annotations

from dbt.adapters.duckdb.plugins import BasePlugin
from duckdb import DuckDBPyConnection

from udfs.register import register_all


class Plugin(BasePlugin):
    def configure_connection(self, conn: DuckDBPyConnection) -> None:
        register_all(conn)
