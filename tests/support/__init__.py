"""What the tests share: services, accounts, bundles, a checked submission."""
