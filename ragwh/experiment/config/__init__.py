"""Experiment configurations, one module per study."""
