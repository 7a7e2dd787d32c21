"""Agents: the company they serve, their instructions, grounding mode and pack grants."""
