"""The embedded harness: load generation and metric definitions, as the official
client measures (``../shared/spec/harness-metrics.md``).

Stand-alone: it imports nothing from ``app`` or ``worker``. Its load generator, metric
code and CLI (``endpoints-harness``) are built under their own issue; the portal's
re-tokenization and reproduction runs will call into this package.
"""
