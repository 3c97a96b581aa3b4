"""An attacker on the platform's network, written with pyzmq and nothing of ours: each command tries
one attack against a running platform and prints what it got as one JSON object.

Keys (Z85 text) come from the environment, as a thief would hold them:
    ATTACK_SERVER_KEY   the bus's (or ingest's) public key, which every client knows
    ATTACK_SECRET_KEY   a client secret key (stolen, or one the platform never heard of); with no
                        ATTACK_SECRET_KEY but a server key, a fresh pair is made
    ATTACK_PLAIN_USER, ATTACK_PLAIN_PASSWORD
                        ZMTP PLAIN instead (RFC 24), as a local process would try the bus's
                        ipc:// socket: a client key it names and a proof it guessed
With none of them the sockets speak plain ZMTP (the NULL mechanism).

    attacker.py eavesdrop ENDPOINT PREFIX SECONDS      SUB: what it hears
    attacker.py call ENDPOINT SERVICE OP JSON          7/MDP client: the reply frames, or a timeout
    attacker.py call-packed ENDPOINT SERVICE OP JSON   the same request packed into one frame, as the
                                                       platform's own clients send it (docs/design.md)
    attacker.py serve ENDPOINT SERVICE SECONDS         7/MDP worker: READY, then what the broker sends
    attacker.py serve-packed ENDPOINT SERVICE SECONDS  the same, READY and what follows packed
    attacker.py publish ENDPOINT TOPIC SOURCE SEQUENCE TYPE DATA_JSON
                                                       PUB: one CloudEvent, sent for 2 s
    attacker.py publish-batch ENDPOINT TOPIC SOURCE SEQUENCE TYPE DATA_JSON
                                                       the same in one frame, as a batch of one
                                                       (ride-bus's EventBatch, docs/design.md)
    attacker.py hijack ENDPOINT DEVICE_ID SECONDS      ingest: the device's id as routing id, a batch
                                                       for it without its credential; what comes back
    attacker.py flood ENDPOINT COUNT                   ingest: COUNT batches, each for a new device id
                                                       with a made-up credential
    attacker.py oversize ENDPOINT BYTES                ingest: one message of BYTES bytes
"""
import json
import os
import struct
import sys
import time
import uuid

import zmq

CONTEXT = zmq.Context.instance()


def secure(sock):
    """Makes `sock` a PLAIN or CURVE client when the environment says so."""
    if os.environ.get("ATTACK_PLAIN_USER"):
        sock.plain_username = os.environ["ATTACK_PLAIN_USER"].encode()
        sock.plain_password = os.environ.get("ATTACK_PLAIN_PASSWORD", "").encode()
        return
    server = os.environ.get("ATTACK_SERVER_KEY")
    if not server:
        return
    secret = os.environ.get("ATTACK_SECRET_KEY")
    if secret:
        public = zmq.curve_public(secret.encode())
    else:
        public, secret = zmq.curve_keypair()
        secret = secret.decode()
    sock.curve_serverkey = server.encode()
    sock.curve_publickey = public
    sock.curve_secretkey = secret.encode()


def socket(kind, endpoint, routing_id=None):
    sock = CONTEXT.socket(kind)
    sock.setsockopt(zmq.LINGER, 0)
    if routing_id is not None:
        sock.setsockopt(zmq.ROUTING_ID, routing_id)
    secure(sock)
    sock.connect(endpoint)
    return sock


def eavesdrop(endpoint, prefix, seconds):
    sock = socket(zmq.SUB, endpoint)
    sock.setsockopt(zmq.SUBSCRIBE, prefix.encode())
    sock.setsockopt(zmq.SUBSCRIBE, b"bus.welcome")
    welcomed, topics, ids = False, [], []
    deadline = time.time() + seconds
    while time.time() < deadline:
        if sock.poll(100, zmq.POLLIN):
            frames = sock.recv_multipart()
            if frames == [b"bus.welcome"]:
                welcomed = True
            else:
                topics.append(frames[0].decode(errors="replace"))
                try:
                    ids.append(json.loads(frames[1]).get("id"))
                except (ValueError, IndexError, AttributeError):
                    pass
    return {"welcomed": welcomed, "received": len(topics), "topics": sorted(set(topics))[:500], "ids": ids}


def call(endpoint, service, op, params):
    sock = socket(zmq.REQ, endpoint)
    sock.send_multipart([b"MDPC01", service.encode(), op.encode() + b"\n" + params.encode()])
    if not sock.poll(5000, zmq.POLLIN):
        return {"answered": False}
    frames = sock.recv_multipart()
    status, _, body = frames[2].partition(b"\n")  # the body convention: <status>\n<JSON>
    return {"answered": True, "status": status.decode(), "body": body.decode(errors="replace")}


def call_packed(endpoint, service, op, params):
    """One frame: MDPC01, the service's length and name, the body; answered in one frame too."""
    sock = socket(zmq.DEALER, endpoint)
    name = service.encode()
    sock.send(b"MDPC01" + bytes([len(name)]) + name + op.encode() + b"\n" + params.encode())
    if not sock.poll(5000, zmq.POLLIN):
        return {"answered": False}
    frames = sock.recv_multipart()
    if len(frames) != 1 or not frames[0].startswith(b"MDPC01"):
        return {"answered": True, "status": "not packed", "body": repr(frames)}
    body = frames[0][7 + frames[0][6]:]
    status, _, text = body.partition(b"\n")
    return {"answered": True, "status": status.decode(), "body": text.decode(errors="replace")}


def serve(endpoint, service, seconds, packed=False):
    sock = socket(zmq.DEALER, endpoint)
    if packed:
        sock.send(b"MDPW01\x01" + service.encode())
    else:
        sock.send_multipart([b"", b"MDPW01", b"\x01", service.encode()])
    commands = []
    deadline = time.time() + seconds
    while time.time() < deadline:
        if sock.poll(100, zmq.POLLIN):
            frames = sock.recv_multipart()
            command = frames[0][6:7] if len(frames) == 1 else frames[2]
            commands.append({b"\x02": "request", b"\x04": "heartbeat", b"\x05": "disconnect"}.get(command, "other"))
            if commands[-1] == "disconnect":
                break
    return {"commands": commands, "requests": commands.count("request"), "disconnected": "disconnect" in commands}


def serve_packed(endpoint, service, seconds):
    return serve(endpoint, service, seconds, packed=True)


def publish(endpoint, topic, source, sequence, kind, data, batched=False):
    sock = socket(zmq.PUB, endpoint)
    event = {
        "specversion": "1.0", "id": str(uuid.uuid4()), "source": source, "type": kind, "sequence": str(int(sequence)),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()), "datacontenttype": "application/json", "data": json.loads(data),
    }
    body = json.dumps(event).encode()
    sent = 0
    deadline = time.time() + 2
    while time.time() < deadline:  # again and again: a subscriber may join late (pub/sub's slow joiner)
        if batched:  # one frame, as ride-bus asks its own publishers (EventBatch): b"\0", then length-prefixed topic and event
            sock.send(b"\0" + bytes([len(topic)]) + topic.encode() + struct.pack(">I", len(body)) + body)
        else:
            sock.send_multipart([topic.encode(), body])
        sent += 1
        time.sleep(0.2)
    return {"sent": sent, "id": event["id"]}


def publish_batch(endpoint, topic, source, sequence, kind, data):
    return publish(endpoint, topic, source, sequence, kind, data, batched=True)


def batch(device_id, batch_id, credential=None):
    location = {"latitude": 60.1699, "longitude": 24.9384, "accuracy": 5, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    body = {
        "publishable_key": "pk_dev_ridesharing", "batch_id": batch_id, "device_id": device_id,
        "locations": [location], "device": {"metadata": {"name": "attacker"}},
    }
    if credential:
        body["device_credential"] = credential
    return json.dumps(body).encode()


def replies(sock, seconds):
    got = {"ack": 0, "error": 0, "command": 0, "codes": {}}
    deadline = time.time() + seconds
    while time.time() < deadline:
        if sock.poll(100, zmq.POLLIN):
            frames = sock.recv_multipart()
            kind = frames[0].decode(errors="replace")
            got[kind] = got.get(kind, 0) + 1
            if kind == "error":
                code = json.loads(frames[1]).get("error", {}).get("code", "?")
                got["codes"][code] = got["codes"].get(code, 0) + 1
    return got


def hijack(endpoint, device_id, seconds):
    sock = socket(zmq.DEALER, endpoint, routing_id=device_id.encode())
    for batch_id in range(1, 4):
        sock.send_multipart([b"batch", batch(device_id, batch_id)])
    return replies(sock, seconds)


def flood(endpoint, count):
    sock = socket(zmq.DEALER, endpoint)
    for batch_id in range(1, count + 1):
        # A made-up credential each: the ingest must ask users about them, boundedly.
        sock.send_multipart([b"batch", batch("flood-" + uuid.uuid4().hex, batch_id, "forged-" + uuid.uuid4().hex)], copy=False)
    return replies(sock, 10)


def oversize(endpoint, size):
    sock = socket(zmq.DEALER, endpoint)
    sock.send_multipart([b"batch", b"{" + b" " * (int(size) - 2) + b"}"])
    return replies(sock, 5)


def main(argv):
    commands = {"eavesdrop": eavesdrop, "call": call, "call-packed": call_packed, "serve": serve, "serve-packed": serve_packed, "publish": publish, "publish-batch": publish_batch, "hijack": hijack, "flood": flood, "oversize": oversize}
    if len(argv) < 2 or argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        return 64
    numeric = {"eavesdrop": [2], "serve": [2], "serve-packed": [2], "hijack": [2], "flood": [1], "oversize": [1]}.get(argv[1], [])
    args = [float(a) if i in numeric else a for i, a in enumerate(argv[2:])]
    if argv[1] in ("flood", "oversize"):
        args = [args[0], int(args[1])]
    print(json.dumps(commands[argv[1]](*args)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
