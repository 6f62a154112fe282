"""The statistics kernels: the clustered and paired bootstrap, effect sizes, the mixed model, multiple testing
and the slices' heterogeneity test, each a vectorized kernel registered into DuckDB by ``udfs.register``."""
