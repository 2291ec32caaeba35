"""The official Submission API (the official CLI's and its MCP server's) at /submission-api,
over the portal's own services."""
