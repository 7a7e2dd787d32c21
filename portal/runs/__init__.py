"""Runs: a question put to an agent, its answer and the receipt of what the model was given."""
