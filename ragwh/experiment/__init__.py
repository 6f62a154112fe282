"""The experiment layer: validated configs, the resumable pipeline, the report, fetch and export. It imports the stages; no stage imports it."""
