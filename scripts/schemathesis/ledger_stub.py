"""A JSON-RPC node that knows nothing: the ledger the fuzzed service talks to.

It answers what the api asks of a Solana node with the answers of a ledger on which no
transaction the fuzzer names ever landed: a recent blockhash, unknown signatures, missing
transactions and accounts, and a refused send. Prepares therefore work, and every confirm of a
generated signature finds nothing, as it would on a real cluster.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Base58 of 32 bytes of 7s: a syntactically valid blockhash.
BLOCKHASH = "US517G5965aydkZ46HS38QLi7UQiSojurfbQfKCELFx"


def answer(method, params):
    context = {"slot": 1}
    if method == "getLatestBlockhash":
        return {"context": context, "value": {"blockhash": BLOCKHASH, "lastValidBlockHeight": 300}}
    if method == "getSignatureStatuses":
        return {"context": context, "value": [None for _ in params[0]]}
    if method == "getTransaction":
        return None
    if method == "getMultipleAccounts":
        return {"context": context, "value": [None for _ in params[0]]}
    if method == "getAccountInfo":
        return {"context": context, "value": None}
    if method == "getSignaturesForAddress":
        return []
    if method == "getSlot":
        return 1
    raise LookupError(method)


class Node(BaseHTTPRequestHandler):
    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        try:
            body = {"jsonrpc": "2.0", "id": request.get("id"), "result": answer(request["method"], request.get("params", []))}
        except LookupError:
            body = {"jsonrpc": "2.0", "id": request.get("id"), "error": {"code": -32601, "message": "method not found"}}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Node)
    server.serve_forever()
