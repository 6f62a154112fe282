"""Chunking: structural and size-matched fixed windows, sentences, token counts, heading-path / placebo prefixes, A1 contexts (see :mod:`.stage`)."""
