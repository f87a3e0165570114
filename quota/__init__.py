"""The ledger: what exists and who may use how much."""
