"""Short help pages, linked where each question arises (the agent form, the upload form, a "no evidence"
answer, the rating controls)."""
