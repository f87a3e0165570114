"""The HTTPS listener's certificate subject, written as RFC 4514 by ``berth.https`` and
read back by ``api.aggregated``: the CN the front proxy's certificate carries survives any
characters, and the most specific CN is the one taken (as Go's ``pkix.Name`` takes it)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.aggregated import common_name
from berth.https import rfc4514

text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)


@given(cn=text, org=text)
def test_the_common_name_survives_the_round_trip(cn: str, org: str) -> None:
    subject = ((("organizationName", org),), (("commonName", cn),))
    assert common_name(rfc4514(subject)) == cn


@pytest.mark.parametrize(
    ("subject", "written", "cn"),
    [
        pytest.param(((("organizationName", "k8s"),), (("commonName", "front-proxy-client"),)),
                     "CN=front-proxy-client,O=k8s", "front-proxy-client", id="most specific first"),
        pytest.param(((("commonName", "outer"),), (("commonName", "inner"),)),
                     "CN=inner,CN=outer", "inner", id="two CNs: the last in the certificate"),
        pytest.param(((("commonName", "a,b+c"),),), "CN=a\\,b\\+c", "a,b+c", id="separators escaped"),
        pytest.param(((("commonName", " #x "),),), "CN=\\ #x\\ ", " #x ", id="leading and trailing"),
        pytest.param(((("organizationName", "only"),),), "O=only", None, id="no CN"),
    ],
)
def test_rfc4514_subjects(subject: tuple[tuple[tuple[str, str], ...], ...], written: str,
                          cn: str | None) -> None:  # fmt: skip
    assert rfc4514(subject) == written
    assert common_name(written) == cn


def test_hex_escapes_are_read() -> None:
    assert common_name("CN=caf\\C3\\A9\\2Cbar") == "café,bar"
