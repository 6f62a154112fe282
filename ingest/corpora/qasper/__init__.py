"""QASPER: both release layouts merged into one canonical text per paper, its heading tree, questions and evidence (see :mod:`.load`)."""
