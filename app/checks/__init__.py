"""The automated checks: the official checker, the portal's own rules and the
rule catalogue every finding names."""
