#!/usr/bin/python3
"""A small HTTP server on 127.0.0.1 that plays a hostile or odd server for
tests/remote_test.cc. It serves one file (argv[1]) under paths that each
choose a behaviour, prints its port on the first line of stdout, and
records the Authorization header of each request in argv[2] (one line per
request: PATH<TAB>AUTH or -), so a test can tell where a token went.

  /ok/F            honest 206 answers
  /full/F          200 with the whole file (plus 64 MiB of zeros) to any range
  /lie/F           Content-Range names another start than the one asked
  /change/F        the total in Content-Range grows after the first answer
  /short/F         promises the range, sends half, closes
  /drip/F          one byte every 0.2 s
  /rate/N/F        honest 206 answers whose bodies arrive at N bytes/s, to the end
  /gzip/F          honest 206 answers that declare Content-Encoding: gzip (the
                   bytes are the file's: a proxy's or a liar's header)
  /dir/NAME        honest 206 answers of the file NAME in the directory argv[3]
  /status/N/F      HTTP N
  /loop/F          302 to itself (via /loop2/F)
  /to-ftp/F        302 to ftp://127.0.0.1/F
  /to-far/F        302 to http://example.com/F (not loopback: never fetched)
  /hub/F           the hub: 302 with X-Linked-Size/X-Linked-Etag to the CDN port
  /badhub/F        the same, with a size one byte too large and a wrong SHA-256
  ORG/REPO/resolve/REV/F   as /hub/F (hf:// through HF_ENDPOINT)
The CDN is a second listener (second line of stdout: its port) that serves
/cdn/F honestly.
"""
import hashlib
import http.server
import os
import re
import sys
import threading
import time

DATA = open(sys.argv[1], "rb").read()
LOG = sys.argv[2]
DIR = sys.argv[3] if len(sys.argv) > 3 else None
HUB_SIZE = str(len(DATA))
HUB_ETAG = hashlib.sha256(DATA).hexdigest()
LOCK = threading.Lock()
changes = {"n": 0}
cdn_port = {"p": 0}


def parse_range(value, data=None):
    data = DATA if data is None else data
    m = re.fullmatch(r"bytes=(\d+)-(\d*)", value or "")
    if not m:
        return None
    first = int(m.group(1))
    last = int(m.group(2)) if m.group(2) else len(data) - 1
    return first, min(last, len(data) - 1)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        with LOCK, open(LOG, "a") as f:
            f.write("%s:%d\t%s\n" % (self.path, self.server.server_port, self.headers.get("Authorization", "-")))

    def send(self, status, headers, body=b""):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if body:
            self.wfile.write(body)

    def honest(self, content_range_total=None, first_override=None, data=None, extra=(), rate=None):
        data = DATA if data is None else data
        r = parse_range(self.headers.get("Range"), data)
        if r is None or r[0] >= len(data):
            return self.send(416, [("Content-Range", "bytes */%d" % len(data)), ("Content-Length", "0")])
        first, last = r
        body = data[first:last + 1]
        shown_first = first if first_override is None else first_override
        total = len(data) if content_range_total is None else content_range_total
        headers = [("Content-Range", "bytes %d-%d/%d" % (shown_first, last, total)),
                   ("Content-Length", str(len(body)))] + list(extra)
        if rate is None:
            return self.send(206, headers, body)
        # A tenth of the rate every 0.1 s, to the end (or until the client goes).
        self.send(206, headers)
        step = max(1, rate // 10)
        try:
            for at in range(0, len(body), step):
                self.wfile.write(body[at:at + step])
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass
        self.close_connection = True

    def redirect(self, location, extra=()):
        self.send(302, [("Location", location), ("Content-Length", "0")] + list(extra))

    def do_GET(self):
        self.record()
        p = self.path
        if p.startswith("/ok/") or p.startswith("/cdn/"):
            return self.honest()
        if p.startswith("/full/"):
            self.send_response(200)
            self.send_header("Content-Length", str(len(DATA) + (64 << 20)))
            self.end_headers()
            try:
                self.wfile.write(DATA)
                zeros = bytes(1 << 20)
                for _ in range(64):
                    self.wfile.write(zeros)
            except OSError:
                pass
            return
        m = re.match(r"/rate/(\d+)/", p)
        if m:
            return self.honest(rate=int(m.group(1)))
        if p.startswith("/gzip/"):
            return self.honest(extra=[("Content-Encoding", "gzip")])
        if p.startswith("/dir/") and DIR:
            name = p[len("/dir/"):].split("?", 1)[0]
            path = os.path.join(DIR, name)
            if "/" in name or not os.path.isfile(path):
                return self.send(404, [("Content-Length", "0")])
            with open(path, "rb") as f:
                return self.honest(data=f.read())
        if p.startswith("/lie/"):
            return self.honest(first_override=1)
        if p.startswith("/change/"):
            with LOCK:
                changes["n"] += 1
                n = changes["n"]
            return self.honest(content_range_total=None if n == 1 else len(DATA) + 1)
        if p.startswith("/short/"):
            r = parse_range(self.headers.get("Range"))
            first, last = r
            body = DATA[first:last + 1]
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, len(DATA)))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.close_connection = True
            return
        if p.startswith("/drip/"):
            r = parse_range(self.headers.get("Range"))
            first, last = r
            body = DATA[first:last + 1]
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, len(DATA)))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for b in body[:100]:
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                pass
            self.close_connection = True
            return
        m = re.match(r"/status/(\d+)/", p)
        if m:
            return self.send(int(m.group(1)), [("Content-Length", "5")], b"oops\n")
        if p.startswith("/loop/"):
            return self.redirect(p.replace("/loop/", "/loop2/", 1))
        if p.startswith("/loop2/"):
            return self.redirect(p.replace("/loop2/", "/loop/", 1))
        if p.startswith("/to-ftp/"):
            return self.redirect("ftp://127.0.0.1/x.gguf")
        if p.startswith("/to-far/"):
            return self.redirect("http://example.com/x.gguf")
        if p.startswith("/hub/") or p.startswith("/badhub/") or "/resolve/" in p:
            name = p.rsplit("/", 1)[1]
            bad = p.startswith("/badhub/")
            size = str(int(HUB_SIZE) + 1) if bad else HUB_SIZE
            etag = "0" * 64 if bad else HUB_ETAG
            return self.redirect("http://127.0.0.1:%d/cdn/%s?sig=secret" % (cdn_port["p"], name),
                                 [("X-Linked-Size", size), ("X-Linked-Etag", '"%s"' % etag)])
        self.send(404, [("Content-Length", "0")])


def main():
    hub = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    cdn = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    hub.daemon_threads = cdn.daemon_threads = True
    cdn_port["p"] = cdn.server_port
    threading.Thread(target=cdn.serve_forever, daemon=True).start()
    print(hub.server_port, flush=True)
    print(cdn.server_port, flush=True)
    # Ends when the test closes our stdin, or kills us.
    threading.Thread(target=hub.serve_forever, daemon=True).start()
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main()
