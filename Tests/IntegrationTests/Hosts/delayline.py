#!/usr/bin/env python3
"""A delay line: every packet sent to netfilter queue QUEUE is held DELAY_MS, then let through.

For kernels without tc netem (CONFIG_NET_SCH_NETEM off). The host harness runs one in each host's
network namespace, beside an iptables rule that queues the host's outgoing packets:

    iptables-legacy -t mangle -A POSTROUTING -o eth0 -j NFQUEUE --queue-num 0 --queue-bypass

It speaks nfnetlink_queue (linux/netfilter/nfnetlink_queue.h) over a netlink socket, with the
standard library only. Every packet waits the same time, so they leave in the order they came and
one batch verdict (accept every id up to N) lets through all that are due. It asks the kernel to
let packets pass when its queue is full (fail-open), and dies with the process that started it.

    delayline.py QUEUE DELAY_MS      prints "ready" once bound, then runs until killed
"""

import collections
import ctypes
import errno
import select
import signal
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_CONFIG, NFQNL_MSG_VERDICT_BATCH = 0, 2, 3
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN, NFQA_CFG_MASK, NFQA_CFG_FLAGS = 1, 2, 3, 4, 5
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQA_CFG_F_FAIL_OPEN = 1
NFQA_PACKET_HDR = 1
NFQA_VERDICT_HDR = 2
NF_ACCEPT = 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2


def attribute(kind, payload):
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * ((4 - length % 4) % 4)


def message(msg_type, queue, attributes, flags=NLM_F_REQUEST, seq=0):
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + b"".join(attributes)
    return struct.pack("=IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | msg_type, flags, seq, 0) + body


def configure(sock, queue, attributes, seq):
    sock.send(message(NFQNL_MSG_CONFIG, queue, attributes, NLM_F_REQUEST | NLM_F_ACK, seq))
    reply = sock.recv(65536)
    length, kind = struct.unpack_from("=IH", reply)
    if kind == NLMSG_ERROR:
        (code,) = struct.unpack_from("=i", reply, 16)
        if code != 0:
            raise OSError(-code, f"nfnetlink_queue configuration {seq} refused: {errno.errorcode.get(-code, code)}")


def packet_ids(data):
    """The packet id of each NFQNL_MSG_PACKET in one read."""
    offset = 0
    while offset + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, offset)
        if length < 16:
            break
        if kind & 0xFF == NFQNL_MSG_PACKET and kind >> 8 == NFNL_SUBSYS_QUEUE:
            at = offset + 20  # nlmsghdr (16) + nfgenmsg (4)
            while at + 4 <= offset + length:
                attr_len, attr_kind = struct.unpack_from("=HH", data, at)
                if attr_len < 4:
                    break
                if attr_kind & 0x7FFF == NFQA_PACKET_HDR:
                    yield struct.unpack_from("!I", data, at + 4)[0]
                    break
                at += (attr_len + 3) & ~3
        offset += (length + 3) & ~3


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: delayline.py QUEUE DELAY_MS")
    queue, delay = int(sys.argv[1]), int(sys.argv[2]) / 1000.0
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: no delay line outlives its test
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE (root): bursts wait here, not dropped
    sock.bind((0, 0))
    configure(sock, queue, [attribute(NFQA_CFG_CMD, struct.pack("!BBH", NFQNL_CFG_CMD_BIND, 0, 0))], 1)
    configure(sock, queue, [attribute(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META))], 2)
    configure(sock, queue, [attribute(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", 65536))], 3)
    flags = struct.pack("!I", NFQA_CFG_F_FAIL_OPEN)
    configure(sock, queue, [attribute(NFQA_CFG_FLAGS, flags), attribute(NFQA_CFG_MASK, flags)], 4)
    sock.setblocking(False)
    print("ready", flush=True)

    held = collections.deque()  # (due, packet id), in arrival order
    while True:
        timeout = max(0.0, held[0][0] - time.monotonic()) if held else None
        readable, _, _ = select.select([sock], [], [], timeout)
        if readable:
            while True:
                try:
                    data = sock.recv(1 << 20)
                except BlockingIOError:
                    break
                except OSError as error:
                    if error.errno == errno.ENOBUFS:  # some packets' notices were lost: a later batch verdict covers them
                        continue
                    raise
                due = time.monotonic() + delay
                held.extend((due, packet) for packet in packet_ids(data))
        now = time.monotonic()
        last = None
        while held and held[0][0] <= now:
            last = held.popleft()[1]
        if last is not None:
            verdict = attribute(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, last))
            sock.send(message(NFQNL_MSG_VERDICT_BATCH, queue, [verdict]))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
