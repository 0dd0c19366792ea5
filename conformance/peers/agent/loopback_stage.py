"""Inside a fresh network namespace: loopback only, one relayed port, every escape recorded.

Run by ``loopback.wrap_loopback`` as a file (``python -I``, the standard
library only), inside the new network, mount and PID namespaces, never by
hand. It

1. brings ``lo`` up and makes every IPv4 and IPv6 address local to it (a
   ``local`` default route in the local table), so a connection to any
   outside address is refused at once instead of hanging, and its first
   packet crosses ``lo``, where it can be seen;
2. listens on ``127.0.0.1:PORT`` and relays each connection to the Unix
   socket of the scripted model, which runs outside the namespace;
3. records, one JSON line each, every connection attempt and every datagram
   the namespace sends to an address outside the loopback, and every DNS
   query (to any address), with the name it asks for;
4. executes the command, which becomes the namespace's first process: when
   it ends, the kernel ends the relay and everything else in the namespace.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import fcntl
import ipaddress
import json
import os
import signal
import socket
import struct
import sys
import threading
from collections.abc import Sequence

_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_RTM_NEWROUTE = 24
_NLM_F_REQUEST, _NLM_F_ACK, _NLM_F_EXCL, _NLM_F_CREATE = 0x1, 0x4, 0x200, 0x400
_RT_TABLE_LOCAL = 255
_RTPROT_BOOT = 3
_RT_SCOPE_HOST = 254
_RTN_LOCAL = 2
_RTA_OIF = 4
_PACKET_OUTGOING = 4
_ETH_P_ALL = 0x0003
_MAX_RELAYS = 64
_PR_SET_PDEATHSIG = 1


def _lo_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def _local_default_route(family: int) -> None:
    """``ip route add local default dev lo table local`` for ``family``, over rtnetlink."""
    index = socket.if_nametoindex("lo")
    rtmsg = struct.pack(
        "BBBBBBBBI", family, 0, 0, 0, _RT_TABLE_LOCAL, _RTPROT_BOOT, _RT_SCOPE_HOST, _RTN_LOCAL, 0
    )
    attribute = struct.pack("HHI", 8, _RTA_OIF, index)
    payload = rtmsg + attribute
    flags = _NLM_F_REQUEST | _NLM_F_ACK | _NLM_F_CREATE | _NLM_F_EXCL
    header = struct.pack("IHHII", 16 + len(payload), _RTM_NEWROUTE, flags, 1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) as sock:  # NETLINK_ROUTE
        sock.settimeout(5)
        sock.bind((0, 0))
        sock.send(header + payload)
        answer = sock.recv(4096)
    error = struct.unpack("i", answer[16:20])[0]  # an NLMSG_ERROR ack: 0 is success
    if error:
        raise OSError(-error, os.strerror(-error))


class _Recorder:
    """The escape record: one JSON line per new attempt, written at once."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - held for the stage's life
        self._seen: set[tuple[object, ...]] = set()
        self._lock = threading.Lock()

    def note(self, entry: dict[str, object], key: tuple[object, ...]) -> None:
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
            self._file.write(json.dumps(entry) + "\n")
            self._file.flush()


def _is_loopback(address: bytes) -> bool:
    return ipaddress.ip_address(address).is_loopback


def _dns_name(payload: bytes) -> str | None:
    """The first question's name of a DNS query, or None when it is not one."""
    if len(payload) < 13:
        return None
    labels: list[str] = []
    at = 12
    while at < len(payload) and len(labels) < 128:
        size = payload[at]
        if size == 0:
            return ".".join(labels)
        if size & 0xC0:
            return None
        labels.append(payload[at + 1 : at + 1 + size].decode("ascii", "replace"))
        at += 1 + size
    return None


def _packet(frame: bytes, recorder: _Recorder) -> None:
    """Record ``frame`` (a frame sent on ``lo``) when it leaves the loopback or asks DNS."""
    ethertype = struct.unpack("!H", frame[12:14])[0] if len(frame) >= 14 else 0
    ip = frame[14:]
    if ethertype == 0x0800 and len(ip) >= 20:
        start, proto = (ip[0] & 0x0F) * 4, ip[9]
        source, destination = ip[12:16], ip[16:20]
    elif ethertype == 0x86DD and len(ip) >= 40:
        start, proto = 40, ip[6]
        source, destination = ip[8:24], ip[24:40]
    else:
        return
    transport = ip[start:]
    if proto not in (6, 17) or len(transport) < 14:
        return
    port = struct.unpack("!H", transport[2:4])[0]
    if proto == 6 and transport[13] & 0x12 != 0x02:
        return  # only a connection's first packet (SYN without ACK)
    outside = not _is_loopback(destination)
    if not outside and port != 53:
        return
    address = str(ipaddress.ip_address(destination))
    entry: dict[str, object] = {
        "kind": "tcp" if proto == 6 else "udp",
        "address": address,
        "port": port,
        "source": str(ipaddress.ip_address(source)),
    }
    name = _dns_name(transport[8:]) if proto == 17 and port == 53 else None
    if name is not None:
        entry = {"kind": "dns", "name": name, "server": address, "port": port}
    recorder.note(entry, (entry["kind"], address, port, name))


def _capture(sock: socket.socket, recorder: _Recorder) -> None:
    while True:
        try:
            frame, where = sock.recvfrom(65536)
        except InterruptedError:
            continue
        except OSError:
            return
        if where[2] == _PACKET_OUTGOING:
            with contextlib.suppress(Exception):
                _packet(frame, recorder)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _relay_one(client: socket.socket, unix_path: str, slots: threading.Semaphore) -> None:
    try:
        with client, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as upstream:
            try:
                upstream.connect(unix_path)
            except OSError:
                return
            back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
            back.start()
            _pump(client, upstream)
            back.join()
    finally:
        slots.release()


def _relay(listener: socket.socket, unix_path: str) -> None:
    slots = threading.Semaphore(_MAX_RELAYS)
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        if not slots.acquire(timeout=5):
            client.close()
            continue
        threading.Thread(target=_relay_one, args=(client, unix_path, slots), daemon=True).start()


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="loopback_stage")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--unix", required=True)
    parser.add_argument("--record", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    recorder = _Recorder(args.record)
    _lo_up()
    capture: socket.socket | None = None
    try:
        for family in (socket.AF_INET, socket.AF_INET6):
            _local_default_route(family)
        capture = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(_ETH_P_ALL))
        capture.bind(("lo", 0))
    except OSError as exc:
        # without the routes a connection outside fails unseen (no route): still blocked
        recorder.note({"kind": "unrecorded", "reason": str(exc)}, ("unrecorded",))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(64)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() == 0:
        _die_with_parent()
        if capture is not None:
            threading.Thread(target=_capture, args=(capture, recorder), daemon=True).start()
        _relay(listener, args.unix)
        os._exit(0)
    listener.close()
    if capture is not None:
        capture.close()
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"toolconf loopback: cannot run {command[0]}: {exc}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main())
