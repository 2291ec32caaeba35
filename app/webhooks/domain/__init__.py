"""Pure rules: which of the record's events are told, how, and when to try again."""
