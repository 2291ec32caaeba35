"""Runs: re-counts of submitted runs with the reference tokenizer, and
reproductions of points against an endpoint."""
