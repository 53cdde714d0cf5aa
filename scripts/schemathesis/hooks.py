"""Generators for the formats the service's OpenAPI document names but no regular expression
states well: base58 keys and signatures that decode to exactly 32 and 64 bytes, absolute https
URLs, wallets of either chain verification knows, and P-256 public keys (points on the curve,
which only arithmetic can make). Loaded by schemathesis through SCHEMATHESIS_HOOKS (see
run.sh)."""

import ast
import base64
import threading

import schemathesis
from hypothesis import strategies as st

# CPython 3.11 keeps the AST converter's recursion depth in state that every thread shares
# (python/cpython#106905): two threads in ast.parse at once can fail with "SystemError: AST
# constructor recursion depth mismatch". Hypothesis parses source files to describe lambdas and
# run.sh runs two workers, so a run failed that way once; one parse at a time here.
_parse = ast.parse
_parse_lock = threading.Lock()


def _parse_one_at_a_time(*args, **kwargs):
    with _parse_lock:
        return _parse(*args, **kwargs)


ast.parse = _parse_one_at_a_time

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58(data: bytes) -> str:
    zeros = len(data) - len(data.lstrip(b"\0"))
    number = int.from_bytes(data, "big")
    digits = ""
    while number:
        number, digit = divmod(number, 58)
        digits = ALPHABET[digit] + digits
    return "1" * zeros + digits


schemathesis.openapi.format("solana-pubkey", st.binary(min_size=32, max_size=32).map(base58))
schemathesis.openapi.format("solana-signature", st.binary(min_size=64, max_size=64).map(base58))
# A Solana wallet or an EVM address (`0x` and 40 hex digits, either case).
schemathesis.openapi.format(
    "chain-address",
    st.one_of(
        st.binary(min_size=32, max_size=32).map(base58),
        st.from_regex(r"\A0x[0-9a-fA-F]{40}\Z"),
    ),
)
# NIST P-256 (SEC 2): p, the curve's b, the order n and the generator G; y^2 = x^3 - 3x + b.
P256_P = 2**256 - 2**224 + 2**192 + 2**96 - 1
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
P256_G = (
    0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
    0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
)


def p256_add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if a[0] == b[0] and (a[1] + b[1]) % P256_P == 0:
        return None
    if a == b:
        slope = (3 * a[0] * a[0] - 3) * pow(2 * a[1], -1, P256_P)
    else:
        slope = (b[1] - a[1]) * pow(b[0] - a[0], -1, P256_P)
    x = (slope * slope - a[0] - b[0]) % P256_P
    return (x, (slope * (a[0] - x) - a[1]) % P256_P)


def p256_public_key(scalar: int) -> str:
    """base64url of the uncompressed point scalar·G, as browsers send `p256dh`."""
    point, addend = None, P256_G
    while scalar:
        if scalar & 1:
            point = p256_add(point, addend)
        addend = p256_add(addend, addend)
        scalar >>= 1
    raw = b"\x04" + point[0].to_bytes(32, "big") + point[1].to_bytes(32, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


schemathesis.openapi.format(
    "p256-public-key", st.integers(min_value=1, max_value=P256_N - 1).map(p256_public_key)
)
schemathesis.openapi.format(
    "https-url",
    st.from_regex(r"\Ahttps://[a-z][a-z0-9-]{0,30}\.example(/[A-Za-z0-9._~-]{0,40})*\Z"),
)


@schemathesis.hook("map_query")
def backed_needs_a_wallet(context, query):
    """The feed's `filter=backed` needs `wallet` (spec 4.1), a rule between two parameters that
    the document states in prose only: a generated positive request that asks for it gets one."""
    operation = context.operation
    if (
        operation is not None
        and operation.path == "/narratives"
        and query
        and query.get("filter") == "backed"
        and not query.get("wallet")
    ):
        query["wallet"] = base58(bytes(range(1, 33)))
    return query


@schemathesis.hook("map_body")
def halts_are_resumes(context, body):
    """The operator's halt switch is fuzzed, but a generated halt would stop the component's
    writes for the rest of the run and turn every later request to it into the documented 503
    `system_halted`. Generated halts are therefore sent as resumes (same shape, same checks);
    halting itself is covered by the api's own tests (http.rs and the
    flow tests)."""
    operation = context.operation
    if (
        operation is not None
        and operation.path == "/admin/system/halt"
        and isinstance(body, dict)
        and body.get("halted") is True
    ):
        body["halted"] = False
    return body
