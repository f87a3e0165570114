"""Alembic migrations of the ledger, configured in code so they run from an installed wheel."""

from __future__ import annotations

from pathlib import Path

from alembic.config import Config

DIRECTORY = Path(__file__).resolve().parent


def config(url: str) -> Config:
    """An Alembic configuration for the database at ``url`` (no ``alembic.ini`` needed)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(DIRECTORY))
    # ConfigParser interpolation: a literal "%" (e.g. in a password) must be doubled.
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.set_main_option(
        "file_template",
        "%%(year)d_%%(month).2d_%%(day).2d_%%(hour).2d%%(minute).2d_%%(slug)s",
    )
    cfg.set_main_option("timezone", "UTC")
    return cfg
