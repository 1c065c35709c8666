#!/usr/bin/env python3
"""push-receiver.py DIR [--refuse | --hang | --hostile CODE]: a stand-in for Grafana Pyroscope's
ingest API as its documentation describes it ("Pyroscope server HTTP API",
POST /ingest: the profile in the body, the metadata in the query: name
(required, "app{k=v,...}"), from and until (required, Unix seconds),
format (default folded), sampleRate (Hz, default 100), spyName, units,
aggregationType), written from that text and not from stackspy's code.

Listens on 127.0.0.1 (a free port, written to DIR/port once listening).
Each request is checked; a request that breaks the API gets 400 and a line
"BAD ..." in DIR/log. A good one is answered 200 (503 with --refuse),
its body saved as DIR/N.body and a line "N name from until sampleRate
spyName format status" appended to DIR/log; the Authorization header,
if any, is appended to DIR/auth.

--hang accepts each connection and never answers (a server that hangs).

--hostile CODE plays a server that attacks its client: every good request
is answered CODE with a body that starts with terminal escapes (set the
title, clear the screen, an 8-bit CSI) and goes on for 4 MiB
(tests/security-push.test)."""
import http.server
import os
import re
import sys
import time
import urllib.parse

out = sys.argv[1]
refuse = "--refuse" in sys.argv[2:]
hang = "--hang" in sys.argv[2:]
hostile = int(sys.argv[sys.argv.index("--hostile") + 1]) if "--hostile" in sys.argv else 0
HOSTILE_BODY = b"\x1b]0;PWNED\x07\x1b[2J\xc2\x9b31mserver says hi" + b"A" * (4 << 20)
count = 0
NAME = re.compile(r"^[A-Za-z0-9_.\-/]+(\{([A-Za-z0-9_.\-]+=[^,{}=]*)?(,[A-Za-z0-9_.\-]+=[^,{}=]*)*\})?$")


def log(line):
    with open(os.path.join(out, "log"), "a") as f:
        f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, code, text):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        log("BAD GET " + self.path)
        self.answer(405, "POST only\n")

    def do_POST(self):
        global count
        if hang:
            log("HANG")
            time.sleep(3600)
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        q = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        bad = []
        if url.path != "/ingest":
            bad.append("path " + url.path)
        for k in ("name", "from", "until"):
            if k not in q or len(q[k]) != 1 or not q[k][0]:
                bad.append("no " + k)
        if not bad:
            if not NAME.match(q["name"][0]):
                bad.append("name " + q["name"][0])
            if not (q["from"][0].isdigit() and q["until"][0].isdigit()):
                bad.append("from/until not Unix seconds")
            elif int(q["from"][0]) >= int(q["until"][0]):
                bad.append("from >= until")
        fmt = q.get("format", ["folded"])[0]
        if fmt not in ("folded", "lines", "pprof", "jfr", "speedscope", "trie", "tree"):
            bad.append("format " + fmt)
        rate = q.get("sampleRate", ["100"])[0]
        if not rate.isdigit() or int(rate) <= 0:
            bad.append("sampleRate " + rate)
        if not body:
            bad.append("empty body")
        if bad:
            log("BAD " + "; ".join(bad) + " " + self.path)
            self.answer(400, "bad request\n")
            return
        count += 1
        with open(os.path.join(out, "%d.body" % count), "wb") as f:
            f.write(body)
        if self.headers.get("Authorization"):
            with open(os.path.join(out, "auth"), "a") as f:
                f.write(self.headers.get("Authorization") + "\n")
        if hostile:
            log("%d hostile %d" % (count, hostile))
            self.send_response(hostile)
            self.send_header("Content-Length", str(len(HOSTILE_BODY)))
            self.end_headers()
            try:
                self.wfile.write(HOSTILE_BODY)
            except OSError:
                pass
            return
        status = 503 if refuse else 200
        log("%d %s %s %s %s %s %s %d" % (count, q["name"][0], q["from"][0], q["until"][0],
                                          rate, q.get("spyName", ["-"])[0], fmt, status))
        self.answer(status, "refused\n" if refuse else "")

    def log_message(self, *args):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(out, "port.tmp"), "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(os.path.join(out, "port.tmp"), os.path.join(out, "port"))
srv.serve_forever()
