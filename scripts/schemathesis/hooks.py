"""Generators for the formats the service's OpenAPI document names but no regular expression
states well: base58 keys and signatures that decode to exactly 32 and 64 bytes, and absolute
https URLs. Loaded by schemathesis through SCHEMATHESIS_HOOKS (see run.sh)."""

import schemathesis
from hypothesis import strategies as st

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
