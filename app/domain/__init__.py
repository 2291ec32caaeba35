"""Pure domain logic: no web framework, ORM or task queue (architecture page)."""
