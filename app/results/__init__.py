"""The results explorer: Pareto step curves, SLA filters and rankings."""
