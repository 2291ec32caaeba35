"""Accounts: users, organisations, API tokens, sign-in and the form token."""
