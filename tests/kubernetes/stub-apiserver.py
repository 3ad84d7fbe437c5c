#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A stub of the Kubernetes API server for the node agent's tests.

It serves one Node object over HTTPS (a self-signed certificate the test
makes) and checks every request it receives:

  - the Authorization header is "Bearer " + the token in TOKEN_FILE
    (401 otherwise);
  - the path is GET /api/v1/nodes/NODE, PATCH /api/v1/nodes/NODE or
    PATCH /api/v1/nodes/NODE/status, for the agent's own NODE only
    (403 for another node, 404 for anything else);
  - a PATCH is a JSON merge patch (Content-Type
    application/merge-patch+json, an object body), applied to the Node
    as RFC 7386 says, so the agent's next GET sees it; a status PATCH
    may change status only, a metadata PATCH metadata only.

While it runs, a thread reads every process's /proc/PID/cmdline and
environ every few milliseconds: the token found in any is a violation.

Each request and each violation is a JSON line in LOG (kind "request"
or "violation"); the Node after every PATCH is written to NODE_FILE; the
port it listens on goes to PORT_FILE once it listens.

usage: stub-apiserver.py CERT KEY TOKEN_FILE NODE NODE_FILE LOG PORT_FILE
"""
import http.server
import json
import os
import ssl
import sys
import threading
import time

CERT, KEY, TOKEN_FILE, NODE, NODE_FILE, LOG, PORT_FILE = sys.argv[1:8]
lock = threading.Lock()


def token():
    with open(TOKEN_FILE) as f:
        return f.read().strip()


def record(entry):
    with lock, open(LOG, "a") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")


def merge(target, patch):
    """RFC 7386 JSON merge patch"""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = merge(target.get(k), v)
    return target


def scan(stop):
    me = os.getpid()
    seen = set()
    while not stop.is_set():
        tok = token().encode()
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == me:
                continue
            for what in ("cmdline", "environ"):
                try:
                    with open("/proc/%s/%s" % (pid, what), "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                if tok and tok in data and (pid, what) not in seen:
                    seen.add((pid, what))
                    words = data.replace(tok, b"<TOKEN>").split(b"\0")
                    record({"kind": "violation",
                            "what": "token in /proc/%s/%s" % (pid, what),
                            "argv": [w.decode(errors="replace")
                                     for w in words[:8]]})
        time.sleep(0.005)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def refuse(self, code, why, entry):
        entry["refused"] = why
        record(entry)
        self.answer(code, {"kind": "Status", "status": "Failure",
                           "message": why, "code": code})

    def handle_any(self, method):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        entry = {"kind": "request", "method": method, "path": self.path,
                 "content_type": self.headers.get("Content-Type"),
                 "auth_ok": self.headers.get("Authorization") ==
                 "Bearer " + token()}
        try:
            entry["body"] = json.loads(raw) if raw else None
        except ValueError:
            entry["body"] = raw.decode(errors="replace")
        if not entry["auth_ok"]:
            return self.refuse(401, "Unauthorized", entry)
        parts = self.path.split("/")
        if parts[:4] != ["", "api", "v1", "nodes"] or len(parts) not in (5, 6) \
                or (len(parts) == 6 and parts[5] != "status"):
            return self.refuse(404, "no such path " + self.path, entry)
        if parts[4] != NODE:
            return self.refuse(403, "nodes \"%s\" is not this agent's node"
                               % parts[4], entry)
        with open(NODE_FILE) as f:
            node = json.load(f)
        if method == "GET" and len(parts) == 5:
            record(entry)
            return self.answer(200, node)
        if method != "PATCH":
            return self.refuse(405, "method " + method, entry)
        if entry["content_type"] != "application/merge-patch+json":
            return self.refuse(415, "not a merge patch", entry)
        body = entry["body"]
        want = "status" if len(parts) == 6 else "metadata"
        if not isinstance(body, dict) or set(body) != {want}:
            return self.refuse(422, "a %s patch must change %s only"
                               % (parts[5] if len(parts) == 6 else "node",
                                  want), entry)
        node = merge(node, body)
        with open(NODE_FILE + ".tmp", "w") as f:
            json.dump(node, f)
        os.rename(NODE_FILE + ".tmp", NODE_FILE)
        record(entry)
        self.answer(200, node)

    def do_GET(self):
        self.handle_any("GET")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_POST(self):
        self.handle_any("POST")

    def do_DELETE(self):
        self.handle_any("DELETE")


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(CERT, KEY)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    stop = threading.Event()
    threading.Thread(target=scan, args=(stop,), daemon=True).start()
    with open(PORT_FILE + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(PORT_FILE + ".tmp", PORT_FILE)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    stop.set()


if __name__ == "__main__":
    main()
