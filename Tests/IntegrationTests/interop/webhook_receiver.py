"""A webhook receiver for the notifications tests, verifying each request with the reference
verifier of the Standard Webhooks convention (`standardwebhooks` on PyPI).

SECRETS is a JSON file {label: secret}, read at each request (a test rotating a secret rewrites
it). A secret without the `whsec_` prefix is one registered as plain text: its key is its bytes,
given to the reference as `whsec_` + their base64. Each request is verified with every secret.

Answers: 401 {"reason"} when no secret verifies it (`expired` for a timestamp out of the
tolerance, `missing_headers`, `malformed`, `invalid_signature`) or when its webhook-id was accepted
before (`replayed`) -- nothing kept; else 500 while FAIL_FLAG exists (when it holds a number N,
only to the next N requests); else 200, and its webhook-id is kept as accepted.

LOG gets one JSON line per request: {"delivery" (its webhook-id), "timestamp", "signature",
"verified" {label: bool}, "signature_valid" (any), "status", "reason", "raw" (the body), "body"}.

usage: webhook_receiver.py PORT LOG SECRETS FAIL_FLAG
"""
import base64, http.server, json, os, sys, threading

import standardwebhooks

port, log, secrets_file, fail_flag = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
accepted = set()
lock = threading.Lock()


def reference(secret):
    if not secret.startswith("whsec_"):
        secret = "whsec_" + base64.b64encode(secret.encode()).decode()
    return standardwebhooks.Webhook(secret)


def check(secret, raw, headers):
    """None when the reference verifies the request with `secret`, else a reason code."""
    try:
        reference(secret).verify(raw, headers)
        return None
    except standardwebhooks.WebhookVerificationError as error:
        text = str(error)
        if "too old" in text or "too new" in text:
            return "expired"
        if "Missing" in text:
            return "missing_headers"
        return "invalid_signature"
    except Exception:  # a header the reference cannot even split ("v1" without a comma, bad base64)
        return "malformed"


def fail_now():
    if not os.path.exists(fail_flag):
        return False
    with open(fail_flag) as f:
        left = f.read().strip()
    if left.isdigit():
        if int(left) <= 1:
            os.remove(fail_flag)
        else:
            with open(fail_flag, "w") as f:
                f.write(str(int(left) - 1))
    return True


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode("utf-8", "replace")
        headers = {name: value for name, value in self.headers.items()}
        with open(secrets_file) as f:
            secrets = json.load(f)
        reasons = {label: check(secret, raw, headers) for label, secret in secrets.items()}
        verified = {label: reason is None for label, reason in reasons.items()}
        delivery = self.headers.get("webhook-id")
        with lock:
            if not any(verified.values()):
                status, reason = 401, next(iter(sorted(set(reasons.values()) - {None})), "no_secret")
            elif delivery in accepted:
                status, reason = 401, "replayed"
            elif fail_now():
                status, reason = 500, None
            else:
                status, reason = 200, None
                accepted.add(delivery)
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            with open(log, "a") as f:
                f.write(json.dumps({"delivery": delivery, "timestamp": self.headers.get("webhook-timestamp"),
                                    "signature": self.headers.get("webhook-signature"), "verified": verified,
                                    "signature_valid": any(verified.values()), "status": status, "reason": reason,
                                    "raw": raw, "body": body}) + "\n")
        answer = json.dumps({"reason": reason}).encode() if reason else b""
        self.send_response(status)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Receiver).serve_forever()
