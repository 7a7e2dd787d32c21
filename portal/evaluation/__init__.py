"""Retrieval evaluation: the demo question set, Cranfield, and reviewers' regression cases."""
