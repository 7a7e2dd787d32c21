"""Answers for agents: numbered references in, a grounded, cited answer out.

``references`` (what is issued), ``units`` (a passage split into the units an
extractive answer is made of), ``extractive`` (the built-in answerer),
``prompt`` and ``model_client`` (an OpenAI-compatible model), ``citations``
(marker validation) and ``grounding`` (the open/preferred/required rules).
Pure: no database, no Flask, no Lucene; retrieval hands the references in.
"""
