"""The public record's rules: when cohorts are released, and the shape a publication keeps."""
