"""What a run's events say: the events file, token counts, the official client's metric
definitions, per-request timings and the summary built from them."""
