"""Query rewriting (the second study): strategies, variant filtering and the fixed retrieval pipeline they share."""
