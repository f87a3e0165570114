"""A ledger URL naming several hosts (libpq's failover form) survives SQLAlchemy and psycopg."""

from __future__ import annotations

import psycopg
import pytest
import sqlalchemy as sa

from berth.settings_parsers import _url
from quota.ledger.connect import libpq_url

TWO_HOSTS = "postgresql://berth:pw@db1:5432,db2:5433/berth?target_session_attrs=read-write"


@pytest.mark.parametrize(
    "url",
    [
        pytest.param(TWO_HOSTS, id="a primary and a standby, read-write wanted"),
        pytest.param("postgresql://berth@10.0.0.1:5432,10.0.0.2:5432,10.0.0.3:5432/berth",
                     id="three hosts and no query"),
        pytest.param("postgresql://berth@db:5432/berth?sslmode=require", id="one host"),
        pytest.param("postgresql://berth@/berth?host=/run/postgresql", id="a Unix socket"),
    ],
)
def test_the_setting_gives_psycopg_back_the_url_the_user_wrote(url: str) -> None:
    assert libpq_url(_url(url)) == url


def test_sqlalchemy_hands_psycopg_every_host_in_order() -> None:
    engine = sa.create_engine(_url(TWO_HOSTS))
    _, params = engine.dialect.create_connect_args(engine.url)
    assert (params["host"], params["port"]) == ("db1,db2", "5432,5433")
    assert params["target_session_attrs"] == "read-write"


def test_libpq_reads_every_host_of_the_url_berth_connects_with() -> None:
    info = psycopg.conninfo.conninfo_to_dict(libpq_url(_url(TWO_HOSTS)))
    assert (info["host"], info["port"]) == ("db1,db2", "5432,5433")
