"""Submissions: uploads and their intake, the stored bundle, what is shown of it
and to whom."""
