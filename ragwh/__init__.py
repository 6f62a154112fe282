"""ragwh: the experiment layer (configs, the resumable pipelines, report, export, fetch) and the CLI."""
