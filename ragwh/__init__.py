"""ragwh: the experiment layer (configs, the resumable pipelines, report, export, fetch) and the CLI."""
from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("ragwarehouse")
except _metadata.PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0.1.0+unknown"
