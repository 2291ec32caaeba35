"""The feature's API routes and pages."""
