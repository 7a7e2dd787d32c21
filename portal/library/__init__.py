"""The Library: every document a person may read directly (SPEC 2), its search and its read-only viewer."""
