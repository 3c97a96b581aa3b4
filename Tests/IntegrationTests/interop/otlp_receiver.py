#!/usr/bin/env python3
"""A minimal OTLP/HTTP trace receiver for the tracing test (docs/tracing.md).

Listens on 127.0.0.1:<port> (0: any free port; the port is printed as the first line of
stdout), accepts POST /v1/traces as application/x-protobuf (decoded with opentelemetry-proto,
independently of swift-otel) or application/json (OTLP/JSON), and appends one JSON line per
span to <output>:
  {"service_name","instance_id","trace_id","span_id","parent_span_id","name","kind","attributes"}
ids as lowercase hex ("" for no parent).

usage: otlp_receiver.py <port> <output.jsonl>
"""
import base64
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

lock = threading.Lock()
KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def from_protobuf(body):
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(body)
    for resource_spans in request.resource_spans:
        resource = {a.key: value_of(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield resource, {
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": KINDS.get(span.kind, str(span.kind)),
                    "attributes": {a.key: value_of(a.value) for a in span.attributes},
                }


def json_value(value):
    for key in ("stringValue", "boolValue", "intValue", "doubleValue"):
        if key in value:
            return value[key]
    return None


def json_id(text):
    # OTLP/JSON says hex; accept base64 too (protobuf's own JSON mapping of bytes).
    if not text:
        return ""
    if len(text) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    return base64.b64decode(text).hex()


def from_json(body):
    request = json.loads(body)
    for resource_spans in request.get("resourceSpans", []):
        resource = {a["key"]: json_value(a.get("value", {})) for a in resource_spans.get("resource", {}).get("attributes", [])}
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                kind = span.get("kind", 0)
                yield resource, {
                    "trace_id": json_id(span.get("traceId", "")),
                    "span_id": json_id(span.get("spanId", "")),
                    "parent_span_id": json_id(span.get("parentSpanId", "")),
                    "name": span.get("name", ""),
                    "kind": KINDS.get(kind, str(kind)) if isinstance(kind, int) else str(kind).replace("SPAN_KIND_", "").lower(),
                    "attributes": {a["key"]: json_value(a.get("value", {})) for a in span.get("attributes", [])},
                }


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        is_json = "json" in (self.headers.get("Content-Type") or "")
        if self.path != "/v1/traces":
            self.send_response(404)
            self.end_headers()
            return
        try:
            spans = list(from_json(body) if is_json else from_protobuf(body))
        except Exception as error:  # a body we cannot read: say so, as a collector would
            self.send_response(400)
            self.end_headers()
            self.wfile.write(str(error).encode())
            return
        with lock, open(sys.argv[2], "a") as out:
            for resource, span in spans:
                span["service_name"] = resource.get("service.name", "")
                span["instance_id"] = resource.get("service.instance.id", "")
                out.write(json.dumps(span) + "\n")
        reply = b"{}" if is_json else trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/json" if is_json else "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
