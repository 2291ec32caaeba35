"""Many points: a whole curve (a sweep) assembled into a checked bundle, and the search
for the highest load within an SLA."""
