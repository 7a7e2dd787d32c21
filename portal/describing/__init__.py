"""Describing a document's figures with a vision model (SPEC 5): the client, the spend cap, the job."""
