"""Publishing: cohort releases and the published record."""
