"""A webhook receiver for the notifications tests: answers 500 while FAIL_FLAG exists (when it
holds a number N, only to the next N requests), 200 after; appends one JSON line per request to
LOG: {"delivery", "signature_valid", "status", "body"}.

usage: webhook_receiver.py PORT LOG SECRET FAIL_FLAG
"""
import hashlib, hmac, http.server, json, os, sys

port, log, secret, fail_flag = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode(), sys.argv[4]


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        status = 500 if os.path.exists(fail_flag) else 200
        if status == 500:
            with open(fail_flag) as f:
                left = f.read().strip()
            if left.isdigit():
                if int(left) <= 1:
                    os.remove(fail_flag)
                else:
                    with open(fail_flag, "w") as f:
                        f.write(str(int(left) - 1))
        with open(log, "a") as f:
            f.write(json.dumps({"delivery": self.headers.get("X-Ride-Delivery"),
                                "signature_valid": hmac.compare_digest(expected, self.headers.get("X-Ride-Signature", "")),
                                "status": status, "body": json.loads(body)}) + "\n")
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Receiver).serve_forever()
