"""The shared kernel: pure rules every feature uses (times, refusals, the
submission lifecycle, cohorts and their calendar, concurrency regions)."""
