#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""An HTTP proxy for apt in the fresh container (tests/fresh/fresh.sh).

    mirror_proxy.py NETNS PORT LOG HOST...

The container has a network namespace of its own, with no way out of it:
its apt reaches the Debian mirror through this proxy (Acquire::http::Proxy
"http://127.0.0.1:PORT"). The proxy's listening socket is made in the
container's namespace (NETNS, as /proc/PID/ns/net), on its loopback; every
other socket, to the mirror, in this machine's. Nothing is added to either
namespace's interfaces or routes. It forwards GET and HEAD requests for the
HOSTs only; another host is refused with 403. Each request is a line of LOG:
status, bytes, method, URL (fresh.sh lists the .deb files the container
fetched). It prints "listening" once it accepts connections, and runs until
it is killed.
"""
import ctypes
import http.client
import http.server
import os
import sys
import urllib.parse

# request headers apt sends that the mirror must see (a list update, a
# resumed download); answer headers apt reads
FORWARD_REQ = ("If-Modified-Since", "If-Range", "Range", "Cache-Control")
FORWARD_ANS = ("Content-Type", "Content-Length", "Content-Range", "Last-Modified", "ETag",
               "Accept-Ranges")
CHUNK = 1 << 16


class Relay(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hosts = ()
    log = None

    def do_GET(self):
        self.relay()

    def do_HEAD(self):
        self.relay()

    def relay(self):
        url = urllib.parse.urlsplit(self.path)
        if url.scheme != "http" or url.hostname not in self.hosts:
            self.answer_error(403, "only http://%s" % " http://".join(self.hosts))
            return
        path = url.path + ("?" + url.query if url.query else "")
        headers = {k: self.headers[k] for k in FORWARD_REQ if self.headers[k]}
        try:
            up = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=60)
            up.request(self.command, path or "/", headers=headers)
            ans = up.getresponse()
        except OSError as e:
            self.answer_error(502, "%s: %s" % (url.hostname, e))
            return
        try:
            self.pass_on(ans)
        except (OSError, http.client.HTTPException) as e:
            self.note(599, 0, "(%s)" % e)  # apt or the mirror hung up
            self.close_connection = True
        finally:
            up.close()

    def pass_on(self, ans):
        body = None
        length = ans.getheader("Content-Length")
        if length is None and self.command != "HEAD":
            body = ans.read()  # (chunked: whole, to give apt a length)
            length = str(len(body))
        self.send_response(ans.status, ans.reason)
        for k in FORWARD_ANS:
            if k == "Content-Length":
                self.send_header(k, length or "0")
            elif ans.getheader(k):
                self.send_header(k, ans.getheader(k))
        self.end_headers()
        sent = 0
        if self.command != "HEAD":
            while True:
                data = body if body is not None else ans.read(CHUNK)
                if not data:
                    break
                self.wfile.write(data)
                sent += len(data)
                if body is not None:
                    break
        self.note(ans.status, sent)

    def answer_error(self, code, why):
        data = (why + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.note(code, len(data))

    def note(self, code, size, why=""):
        with open(self.log, "a") as f:
            f.write("%d %d %s %s%s\n" % (code, size, self.command, self.path, why and " " + why))

    def log_message(self, fmt, *args):
        pass


CLONE_NEWNET = 0x40000000


def setns(fd):
    """This thread into the network namespace of FD (Python 3.11 has no os.setns)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "setns: %s" % os.strerror(e))


def listen_in(netns, port):
    """The server, its socket on 127.0.0.1:PORT of NETNS; then this thread back
    in its own namespace, where the threads serving requests are made."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    there = os.open(netns, os.O_RDONLY)
    try:
        setns(there)
        try:
            return http.server.ThreadingHTTPServer(("127.0.0.1", port), Relay)
        finally:
            setns(home)
    finally:
        os.close(home)
        os.close(there)


def main():
    if len(sys.argv) < 5:
        sys.stderr.write("usage: mirror_proxy.py NETNS PORT LOG HOST...\n")
        return 2
    Relay.hosts = tuple(sys.argv[4:])
    Relay.log = sys.argv[3]
    server = listen_in(sys.argv[1], int(sys.argv[2]))
    server.daemon_threads = True
    print("listening", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
