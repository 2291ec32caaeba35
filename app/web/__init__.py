"""FastAPI shell: pages (Jinja2) and /api/v1. Commits at the edge."""
