import http.server, sys, threading
PAGE = b"<html><head><title>Home</title></head><body><h1>Welcome</h1><p>" + b"A long article about the harbour and its ships. " * 40 + b"</p><a href='/index.html'>i</a> <a href='/old'>o</a> <a href='/chunked'>c</a> <a href='/page?id=1'>p</a> <a href='/page?id=1&amp;utm_source=x'>q</a></body></html>"
OTHER = b"<html><body><h1>Chunks</h1><p>" + b"Chunked transfer of a different story about trains. " * 40 + b"</p></body></html>"
ITEM = b"<html><body><h1>Item one</h1><p>" + b"The first item of the catalogue, described at length. " * 40 + b"</p></body></html>"
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def send_body(self, body, ctype="text/html"):
        self.send_response(200); self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def do_GET(self):
        p = self.path
        if p in ("/", "/index.html"): self.send_body(PAGE)
        elif p == "/old":
            self.send_response(301); self.send_header("Location", "/"); self.send_header("Content-Length", "0"); self.end_headers()
        elif p == "/chunked":
            self.send_response(200); self.send_header("Content-Type", "text/html"); self.send_header("Transfer-Encoding", "chunked"); self.end_headers()
            for i in range(0, len(OTHER), 500):
                c = OTHER[i:i+500]; self.wfile.write(b"%x\r\n%s\r\n" % (len(c), c))
            self.wfile.write(b"0\r\n\r\n")
        elif p.startswith("/page?id=1"): self.send_body(ITEM)
        elif p == "/robots.txt": self.send_body(b"", "text/plain")
        else:
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
if len(sys.argv) > 1:
    # A static site: the files under the directory given, as Python's file server serves them.
    import functools
    class Quiet(http.server.SimpleHTTPRequestHandler):
        # Persistent connections, as a real server keeps them: over HTTP/1.0 each file is a new
        # connection, and under load wget met one closed before it answered ("No data received").
        protocol_version = "HTTP/1.1"
        def log_message(self, *a): pass
    H = functools.partial(Quiet, directory=sys.argv[1])
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
threading.Thread(target=srv.serve_forever, daemon=True).start()
sys.stdin.read()  # serve until the test closes stdin
