"""ragwh: the experiment layer (configs, the resumable pipelines, report, export, fetch) and the CLI."""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("ragwarehouse")
except _metadata.PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0.1.0+unknown"

__all__ = ["open_warehouse", "__version__"]


def __getattr__(name: str):
    """``from ragwh import open_warehouse`` (:mod:`ragwh.analyst`), imported on first use so that the CLI's start
    does not load polars."""
    if name in ("open_warehouse", "Warehouse"):
        from ragwh import analyst

        return getattr(analyst, name)
    raise AttributeError(f"module 'ragwh' has no attribute {name!r}")
