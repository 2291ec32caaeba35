"""Endpoints Portal: intake, checks, review and results for MLPerf Endpoints."""
