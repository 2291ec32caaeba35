"""Pure rules: no ORM, no web, no queue."""
