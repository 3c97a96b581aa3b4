"""Independent 7/MDP 0.1 and 8/MMI peers in Python (pyzmq), written from the RFCs
(rfc.zeromq.org/spec/7 and /spec/8) to check that ride-bus, our client and our worker speak the
protocol exactly: a peer written by someone else, in another language, must work with ours.

    python3 mdp.py client ENDPOINT SERVICE [BODY_FRAME ...]   -> prints the reply frames as JSON
    python3 mdp.py worker ENDPOINT SERVICE                     -> answers every request
    python3 mdp.py broker ENDPOINT                             -> a broker (heartbeats, mmi.service)

The client uses a REQ socket (the RFC's REQ-compatible framing: REQ adds the empty delimiter);
the worker a DEALER; the broker a ROUTER. Heartbeat: 2500 ms, liveness 3, as the RFC suggests.
"""
import json
import re
import sys
import time

import zmq

C_CLIENT = b"MDPC01"
W_WORKER = b"MDPW01"
READY, REQUEST, REPLY, HEARTBEAT, DISCONNECT = b"\x01", b"\x02", b"\x03", b"\x04", b"\x05"
HEARTBEAT_MS = 2500
LIVENESS = 3


def client(endpoint, service, body):
    """Lazy Pirate: on timeout, close the REQ socket, open a new one, resend; three tries."""
    ctx = zmq.Context.instance()
    for _attempt in range(3):
        sock = ctx.socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(endpoint)
        sock.send_multipart([C_CLIENT, service.encode()] + [f.encode() for f in body])
        if sock.poll(2500, zmq.POLLIN):
            frames = sock.recv_multipart()
            assert frames[0] == C_CLIENT, frames
            assert frames[1] == service.encode(), frames
            print(json.dumps([f.decode() for f in frames[2:]]))
            return 0
        sock.close()
    print("timeout", file=sys.stderr)
    return 2


def worker(endpoint, service):
    """Answers <op>\\n<json> with 200\\n{"from":"python","op":op,"params":json}, our body convention
    (docs/design.md); it skips a client's correlation line (r<id>...) and does not echo it."""
    ctx = zmq.Context.instance()

    def connect():
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(endpoint)
        sock.send_multipart([b"", W_WORKER, READY, service.encode()])
        return sock

    sock = connect()
    print("ready", flush=True)
    liveness = LIVENESS
    next_heartbeat = time.time() + HEARTBEAT_MS / 1000
    while True:
        if sock.poll(HEARTBEAT_MS, zmq.POLLIN):
            frames = sock.recv_multipart()
            liveness = LIVENESS
            assert frames[0] == b"" and frames[1] == W_WORKER, frames
            command = frames[2]
            if command == REQUEST:
                client_address, empty, body = frames[3], frames[4], frames[5:]
                assert empty == b""
                first, _, rest = (body[0] if body else b"").partition(b"\n")
                if re.fullmatch(rb"r[0-9]+( .*)?", first):
                    first, _, rest = rest.partition(b"\n")
                op = first.decode()
                params = json.loads(rest) if rest else {}
                reply = json.dumps({"from": "python", "op": op, "params": params}).encode()
                sock.send_multipart([b"", W_WORKER, REPLY, client_address, b"", b"200\n" + reply])
            elif command == DISCONNECT:
                sock.close()
                sock = connect()
        else:
            liveness -= 1
            if liveness == 0:
                sock.close()
                time.sleep(HEARTBEAT_MS / 1000)
                sock = connect()
                liveness = LIVENESS
        if time.time() > next_heartbeat:
            sock.send_multipart([b"", W_WORKER, HEARTBEAT])
            next_heartbeat = time.time() + HEARTBEAT_MS / 1000


def broker(endpoint):
    """One ROUTER for clients and workers; requests wait for an idle worker of their service."""
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)
    print("ready", flush=True)
    workers = {}    # address -> {"service", "expiry"}
    idle = {}       # service -> [address]
    queued = {}     # service -> [(client, body)]
    next_heartbeat = time.time() + HEARTBEAT_MS / 1000

    def dispatch(service):
        while queued.get(service) and idle.get(service):
            address = idle[service].pop(0)
            client_address, body = queued[service].pop(0)
            sock.send_multipart([address, b"", W_WORKER, REQUEST, client_address, b""] + body)

    def delete(address, notify):
        if notify:
            sock.send_multipart([address, b"", W_WORKER, DISCONNECT])
        worker = workers.pop(address, None)
        if worker and address in idle.get(worker["service"], []):
            idle[worker["service"]].remove(address)

    while True:
        if sock.poll(HEARTBEAT_MS, zmq.POLLIN):
            frames = sock.recv_multipart()
            sender, empty, header = frames[0], frames[1], frames[2]
            assert empty == b""
            if header == C_CLIENT:
                service, body = frames[3].decode(), frames[4:]
                if service == "mmi.service":
                    name = body[0].decode()
                    code = b"200" if any(w["service"] == name for w in workers.values()) else b"404"
                    sock.send_multipart([sender, b"", C_CLIENT, frames[3], code])
                else:
                    queued.setdefault(service, []).append((sender, body))
                    dispatch(service)
            elif header == W_WORKER:
                command = frames[3]
                known = sender in workers
                if command == READY and not known:
                    service = frames[4].decode()
                    workers[sender] = {"service": service, "expiry": time.time() + HEARTBEAT_MS * LIVENESS / 1000}
                    idle.setdefault(service, []).append(sender)
                    dispatch(service)
                elif command == REPLY and known:
                    client_address, body = frames[4], frames[6:]
                    service = workers[sender]["service"]
                    sock.send_multipart([client_address, b"", C_CLIENT, service.encode()] + body)
                    workers[sender]["expiry"] = time.time() + HEARTBEAT_MS * LIVENESS / 1000
                    idle.setdefault(service, []).append(sender)
                    dispatch(service)
                elif command == HEARTBEAT and known:
                    workers[sender]["expiry"] = time.time() + HEARTBEAT_MS * LIVENESS / 1000
                elif command == DISCONNECT:
                    delete(sender, False)
                else:
                    delete(sender, True)
        if time.time() > next_heartbeat:
            now = time.time()
            for address, worker in list(workers.items()):
                if worker["expiry"] < now:
                    delete(address, False)
            for service, addresses in idle.items():
                for address in addresses:
                    sock.send_multipart([address, b"", W_WORKER, HEARTBEAT])
            next_heartbeat = now + HEARTBEAT_MS / 1000


if __name__ == "__main__":
    role = sys.argv[1]
    if role == "client":
        sys.exit(client(sys.argv[2], sys.argv[3], sys.argv[4:]))
    elif role == "worker":
        worker(sys.argv[2], sys.argv[3])
    elif role == "broker":
        broker(sys.argv[2])
    else:
        sys.exit("usage: mdp.py client|worker|broker ...")
