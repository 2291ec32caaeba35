"""Webhooks: the record's events, told to the URLs users subscribe (issue 50)."""
