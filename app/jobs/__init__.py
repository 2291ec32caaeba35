"""Background jobs: the queue, the registry of job kinds, recovery of lost jobs."""
