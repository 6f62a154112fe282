"""Wikipedia: a MediaWiki XML dump or JSONL export normalized to paragraphs and a gold heading tree (see :mod:`.load`)."""
