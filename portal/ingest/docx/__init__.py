"""Word (.docx) reading, in the order a file is read: ``package`` (the zip parts and their
relationships), ``styles`` (styles and numbering), ``markdown`` (the body written as Markdown with
picture placeholders) and ``reader`` (``read_docx``: refusals, then the pictures on demand)."""

from portal.ingest.docx.reader import read_docx

__all__ = ["read_docx"]
