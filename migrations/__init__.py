"""Alembic migrations of the ledger."""
