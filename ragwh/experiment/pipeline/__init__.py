"""The resumable ``ragwh run`` pipelines, one module per study, and the stage outputs they check."""
