"""The registry of measured runs: what the official Submission API calls "runs" (not
app.runs, the re-counts and reproductions of a submission's points)."""
