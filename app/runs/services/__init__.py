"""Use cases over the database; they commit at the edge."""
