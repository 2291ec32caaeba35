"""A run over time: its time series, the steady state the official method finds, and the
report drawn from them."""
